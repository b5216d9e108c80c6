"""Headless Chromium against the built site on a local server: shared by the browser tests, the
benchmarks and `python -m tests.browser shot` (screenshots for review).

Debian's ``chromium`` is driven by Playwright's Python package (Playwright's own browser
download does not work offline). The flags keep it from calling any other host: no background
services, and no host name resolves, so every request but those to the local server fails;
``new_page`` also records any such request, for the tests to assert there was none.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import shutil
import socketserver
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # only the local server
]


class _Handler(http.server.SimpleHTTPRequestHandler):
    extra_headers: ClassVar[dict[str, str]] = {}
    # a network to emulate (for benchmarks): round-trip latency and bandwidth
    latency: ClassVar[float] = 0.0  # seconds before each response
    bytes_per_second: ClassVar[float] = 0.0  # 0: as fast as the machine goes

    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".whl": "application/zip",
    }

    def end_headers(self) -> None:
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        super().end_headers()

    def send_head(self):
        if self.latency:
            time.sleep(self.latency)
        return super().send_head()

    def copyfile(self, source, outputfile) -> None:
        if not self.bytes_per_second:
            return super().copyfile(source, outputfile)
        chunk = 16 * 1024
        while block := source.read(chunk):
            outputfile.write(block)
            time.sleep(len(block) / self.bytes_per_second)
        return None

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


# headers that make a page cross-origin isolated (SharedArrayBuffer, Pyodide interrupts)
ISOLATED = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
}


@contextlib.contextmanager
def serve(
    directory: Path = SITE,
    headers: dict[str, str] | None = None,
    *,
    latency: float = 0.0,
    mbit_per_second: float = 0.0,
) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port), with extra ``headers``; yield the URL.
    ``latency`` (s) and ``mbit_per_second`` emulate a network, for benchmarks."""
    handler_class = type("Handler", (_Handler,), {
        "extra_headers": headers or {},
        "latency": latency,
        "bytes_per_second": mbit_per_second * 1e6 / 8,
    })
    handler = functools.partial(handler_class, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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


def chromium_path() -> str | None:
    return shutil.which("chromium")


@contextlib.contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("chromium is not installed (Debian: apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=FLAGS)
        try:
            yield b
        finally:
            try:
                b.close()
            except (Exception, asyncio.CancelledError) as err:
                # a browser that will not close cleanly at the end of a session is killed with
                # Playwright's driver; that fails no test
                print(f"chromium did not close cleanly: {err!r}", file=sys.stderr)


PAGES = ["", "ppo/", "grpo/", "beyond/", "s21/", "s21/demo/", "glossary/"]


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
