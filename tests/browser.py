"""The browser tests' helpers, over :mod:`site_build.chromium` (the local server and headless
Chromium the tests share with the benchmarks): pages that record uncaught errors and requests to
any other host, failed downloads, and driving an exercise cell. ``python -m tests.browser shot
[page ...]`` takes screenshots for review.

The names the tests import from :mod:`site_build.chromium` are re-exported here (``__all__``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from site_build.chromium import ISOLATED, PAGES, browser, chromium_path, serve

__all__ = [
    "ISOLATED",
    "OUTPUT_TIMEOUT",
    "PAGES",
    "browser",
    "cell",
    "chromium_path",
    "edit",
    "fail_downloads",
    "new_page",
    "press",
    "serve",
    "shoot",
    "wait_output",
    "wait_state",
    "workers_started",
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
    return page


def fail_downloads(page, pattern: str = "**/assets/pyodide/numpy-*.whl") -> None:
    """Make every download matching ``pattern`` fail as if the network were gone."""
    page.context.route(pattern, lambda route: route.abort("internetdisconnected"))


# ---- driving an exercise cell ------------------------------------------------------------------

OUTPUT_TIMEOUT = 120_000  # ms: a cold Pyodide start with numpy, on a loaded two-core machine


def cell(page, exercise_id: str):
    return page.locator(f"[data-runner='{exercise_id}']")


def press(page, exercise_id: str, action: str, timeout: int = OUTPUT_TIMEOUT) -> str:
    """Click Run or Check on the cell and wait until it is idle again (the click makes it busy
    at once); return its output."""
    root = cell(page, exercise_id)
    root.locator(f"[data-action='{action}']").click()
    page.wait_for_function(
        "el => el.dataset.state === 'idle'", arg=root.element_handle(), timeout=timeout
    )
    return root.locator("[data-output]").text_content()


def edit(page, exercise_id: str, code: str) -> None:
    """Switch the cell to its editor (if it is not) and put ``code`` in it."""
    root = cell(page, exercise_id)
    if root.locator("textarea").is_hidden():
        root.locator("[data-action='edit']").click()
    root.locator("textarea").fill(code)


def wait_output(page, exercise_id: str, text: str, timeout: int = OUTPUT_TIMEOUT) -> str:
    page.wait_for_function(
        "([sel, t]) => document.querySelector(sel + ' [data-output]').textContent.includes(t)",
        arg=[f"[data-runner='{exercise_id}']", text], timeout=timeout,
    )
    return cell(page, exercise_id).locator("[data-output]").text_content()


def wait_state(page, exercise_id: str, state: str, timeout: int = OUTPUT_TIMEOUT) -> None:
    page.wait_for_function(
        "([sel, s]) => document.querySelector(sel).dataset.state === s",
        arg=[f"[data-runner='{exercise_id}']", state], timeout=timeout,
    )


def workers_started(page) -> int:
    """How many Python workers the page's runtime has started (the same module instance)."""
    return page.evaluate("""async () => {
        const src = document.querySelector('script[src*="runner.js"]').src;
        return (await import(new URL('python.js', src))).runtime().workers;
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
