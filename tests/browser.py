"""The browser tests' helpers, over :mod:`site_build.chromium` (the local server and headless
Chromium the tests share with the benchmarks): pages that record uncaught errors and requests to
any other host, failed downloads, and driving an exercise cell. ``python -m tests.browser shot
[page ...]`` takes screenshots for review.

The names the tests import from :mod:`site_build.chromium` are re-exported here (``__all__``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from site_build.chromium import ISOLATED, PAGES, SERVED, browser, chromium_path, serve

__all__ = [
    "ISOLATED",
    "OUTPUT_TIMEOUT",
    "PAGES",
    "SERVED",
    "browser",
    "cell",
    "chromium_path",
    "describe",
    "edit",
    "fail_downloads",
    "long_loads",
    "new_page",
    "page_for",
    "press",
    "reuse",
    "serve",
    "shoot",
    "timers_fire",
    "wait_output",
    "wait_state",
    "wait_until",
]

ROOT = Path(__file__).resolve().parent.parent


def new_page(browser, url: str | None = None, **context_options):
    """A page in a fresh context, with ``page.errors`` (uncaught exceptions) and
    ``page.foreign`` (requests to anything but the page's own server) recorded.

    The site's service worker is blocked unless ``service_workers="allow"`` is given
    (test_browser_offline does): requests it answered would bypass the tests' routes."""
    context_options.setdefault("service_workers", "block")
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.errors, page.foreign = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))

    def record(request) -> None:
        if not request.url.startswith(("http://127.0.0.1:", "data:", "blob:")):
            page.foreign.append(request.url)

    context.on("request", record)
    if url:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        search_ready(page)
    return page


def search_ready(page, timeout: float = 30_000) -> None:
    """Wait until Material's search worker has imported its language scripts.

    It imports them only once the index has arrived, which on a busy machine can be more than
    networkidle's 500 ms after the page's last request; a test that then goes offline made the
    import fail in the worker (an uncaught error no fault of ours: CI, session 29). The worker
    sets ``self.lunr``; ``lunr.multiLanguage`` comes with the last script (two languages)."""
    deadline = time.monotonic() + timeout / 1000
    while True:
        for worker in page.workers:
            if "/workers/search" in worker.url and worker.evaluate(
                "!!(self.lunr && self.lunr.multiLanguage)"
            ):
                return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"waited {timeout / 1000:g} s for the search worker;"
                f" workers: {[w.url for w in page.workers]}"
            )
        page.wait_for_timeout(50)


def fail_downloads(page, pattern: str = "**/assets/pyodide/numpy-*.whl") -> None:
    """Make every download matching ``pattern`` fail as if the network were gone."""
    page.context.route(pattern, lambda route: route.abort("internetdisconnected"))


def page_for(request, shared: dict, url: str, **context_options):
    """The page a browser test works on, open on ``url``: one of its own for a test marked
    ``fresh_page``; else the module's page for ``url`` (kept in ``shared``, the `shared_pages`
    fixture), opened by its first test and handed to each next one by `reuse`. Sharing saves
    the start of a page and of its Python (~10 CPU-seconds here); a test that needs a
    fresh load, worker, storage or context (a reload, routes, the network cut, workers counted
    from the start) is marked."""
    chromium = request.getfixturevalue("chromium")
    if request.node.get_closest_marker("fresh_page"):
        page = new_page(chromium, url, **context_options)
        request.addfinalizer(page.context.close)
        return page
    key = (url, tuple(sorted(context_options.items())))
    if key not in shared:
        page = shared[key] = new_page(chromium, url, **context_options)
        page.home = page.url
        # each cell's time limit as published (a test may shorten it)
        page.limits = page.eval_on_selector_all(
            "[data-runner]", "els => Object.fromEntries(els.map((e) => [e.dataset.runner,"
            " e.dataset.timeout ?? null]))"
        )
        return page
    return reuse(shared[key])


def reuse(page):
    """Hand a shared page to the next test as it was opened, but for its loaded Python: back
    on its address; no saved work (localStorage emptied); every cell as published (its Reset
    button: blanks, editor, output, a job of its own stopped; its time limit); nothing focused,
    the top in view; no uncaught error or foreign request recorded yet."""
    if page.url != page.home:
        page.goto(page.home)
        page.wait_for_load_state("networkidle")
    page.evaluate(
        """(limits) => {
            localStorage.clear();
            for (const el of document.querySelectorAll('[data-runner]')) {
                el.querySelector("[data-action='reset']").click();
                const limit = limits[el.dataset.runner];
                if (limit === null) delete el.dataset.timeout;
                else el.dataset.timeout = limit;
            }
            document.activeElement?.blur();
            window.scrollTo(0, 0);
        }""",
        page.limits,
    )
    wait_until(
        page, "() => [...document.querySelectorAll('[data-runner]')]"
        ".every((el) => el.dataset.state === 'idle')",
        what="every cell idle after Reset", timeout=10_000,
    )
    page.errors.clear()
    page.foreign.clear()
    return page


POLL_MS = 50  # how often wait_until asks the page


def wait_until(
    page, expression: str, arg=None, *, what: str = "", timeout: float = 30_000, now=None
):
    """Wait until ``expression`` (a JavaScript condition, or a function of ``arg``) is true in
    the page, at most ``timeout`` ms; fail with what it waited for (``what``, else the
    expression) and, if given, what ``now()`` says of the page then, instead of a bare
    "Timeout exceeded". A condition that returns a promise is polled for what it settles to
    (Playwright's ``wait_for_function`` ends at the first promise, whatever it settles to)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def fail() -> AssertionError:
        message = f"waited {timeout / 1000:g} s for {what or f'{expression} (arg {arg!r})'}"
        return AssertionError(f"{message}; now: {now()}" if now is not None else message)

    deadline = time.monotonic() + timeout / 1000
    try:
        # every 50 ms, not at every animation frame (Playwright's default): a frame-by-frame poll
        # keeps the page rendering 60 times a second while it waits (~0.1 CPU-second per second
        # here, against ~0.02), which two workers on two cores pay for in each other's time
        handle = page.wait_for_function(expression, arg=arg, timeout=timeout, polling=POLL_MS)
    except PlaywrightTimeout:
        raise fail() from None
    # a false value ends Playwright's wait only as a promise's (it is then the settled value)
    if handle.evaluate("(value) => Boolean(value)"):
        return handle
    while not page.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise fail()
        page.wait_for_timeout(100)
    return handle


def timers_fire(page, timeout: float = 10_000) -> None:
    """Fail unless the page's main thread runs its timers: Playwright polls a condition every
    50 ms with the page's own timers, and keeps the time limit outside the page, so a frozen
    page fails here after ``timeout`` ms instead of hanging the test."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        # false at the first poll, true once a timer has run it again 50 ms later
        page.wait_for_function(
            "(k) => { const t0 = (window.__rlTimers ??= {}); t0[k] ??= Date.now();"
            " return Date.now() - t0[k] >= 50; }",
            arg=str(time.monotonic_ns()), polling=50, timeout=timeout,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"the page ran no timer in {timeout / 1000:g} s") from None


# ---- driving an exercise cell ------------------------------------------------------------------

OUTPUT_TIMEOUT = 120_000  # ms: a cold Pyodide start with numpy, on a loaded two-core machine


def cell(page, exercise_id: str):
    return page.locator(f"[data-runner='{exercise_id}']")


def describe(page, exercise_id: str) -> str:
    """The cell's state and the end of its output, for a failure message."""
    root = cell(page, exercise_id)
    output = root.locator("[data-output]").text_content() or ""
    return f"state {root.get_attribute('data-state')!r}, output ...{output[-300:]!r}"


def press(page, exercise_id: str, action: str, timeout: int = OUTPUT_TIMEOUT) -> str:
    """Click Run or Check on the cell and wait until it is idle again (the click makes it busy
    at once); return its output."""
    root = cell(page, exercise_id)
    root.locator(f"[data-action='{action}']").click()
    wait_until(
        page, "el => el.dataset.state === 'idle'", root.element_handle(), timeout=timeout,
        what=f"{exercise_id} idle after {action}", now=lambda: describe(page, exercise_id),
    )
    return root.locator("[data-output]").text_content()


def edit(page, exercise_id: str, code: str) -> None:
    """Switch the cell to its editor (if it is not) and put ``code`` in it."""
    root = cell(page, exercise_id)
    if root.locator("textarea").is_hidden():
        root.locator("[data-action='edit']").click()
    root.locator("textarea").fill(code)


def wait_output(page, exercise_id: str, text: str, timeout: int = OUTPUT_TIMEOUT) -> str:
    wait_until(
        page,
        "([sel, t]) => document.querySelector(sel + ' [data-output]').textContent.includes(t)",
        [f"[data-runner='{exercise_id}']", text], timeout=timeout,
        what=f"{text!r} in the output of {exercise_id}", now=lambda: describe(page, exercise_id),
    )
    return cell(page, exercise_id).locator("[data-output]").text_content()


def wait_state(page, exercise_id: str, state: str, timeout: int = OUTPUT_TIMEOUT) -> None:
    wait_until(
        page, "([sel, s]) => document.querySelector(sel).dataset.state === s",
        [f"[data-runner='{exercise_id}']", state], timeout=timeout,
        what=f"{exercise_id} {state}", now=lambda: describe(page, exercise_id),
    )


def long_loads(page) -> int:
    """How many times the page's runtime loaded Python the long way and made its boot image
    (js/boot.js): every other worker starts from that image."""
    return page.evaluate("""async () => {
        const src = document.querySelector('script[src*="runner.js"]').src;
        return (await import(new URL('python.js' + new URL(src).search, src))).runtime().images;
    }""")


def shoot(pages: list[str], out: Path) -> None:
    """Screenshots of each page in zh and en, light and dark, desktop and phone width."""
    out.mkdir(parents=True, exist_ok=True)
    with serve() as base, browser() as b:
        for scheme in ("light", "dark"):
            for width, height, label in ((1280, 900, "desktop"), (390, 844, "phone")):
                ctx = b.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                page = ctx.new_page()
                for lang in ("", "en/"):
                    for p in pages:
                        page.goto(f"{base}/{lang}{p}")
                        page.wait_for_load_state("networkidle")
                        slug = p.strip("/").replace("/", "_") or "home"
                        name = f"{(lang or 'zh/').strip('/')}_{slug}"
                        page.screenshot(
                            path=str(out / f"{name}_{scheme}_{label}.png"), full_page=True
                        )
                ctx.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["shot"]:
        pages = sys.argv[2:] or PAGES
        shoot(pages, ROOT / ".cache" / "shots")
        print(f"screenshots in {ROOT / '.cache' / 'shots'}")
