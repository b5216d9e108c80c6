"""Headless Chromium against the built site on a local server: shared by the browser tests, the
benchmarks and `python -m tests.browser shot` (screenshots for review).

Debian's ``chromium`` is driven by Playwright's Python package (Playwright's own browser
download does not work offline); the flags keep it from calling any other host.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import socketserver
import sys
import threading
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
]


class _Handler(http.server.SimpleHTTPRequestHandler):
    extra_headers: ClassVar[dict[str, str]] = {}

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
def serve(directory: Path = SITE, headers: dict[str, str] | None = None) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port), with extra ``headers``; yield the URL."""
    handler_class = type("Handler", (_Handler,), {"extra_headers": headers or {}})
    handler = functools.partial(handler_class, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


UNREACHABLE = "http://127.0.0.1:9/unreachable/"  # a closed port: fails at once, like offline

# the reason the end-to-end tests with numpy skip here
NO_PYODIDE_DIST = (
    "needs a full Pyodide distribution (with numpy) at $PYODIDE_DIST; numpy for Pyodide is not "
    "on PyPI or npm and the CDN is unreachable here"
)


def set_packages_url(page, url: str) -> None:
    """Point the page's Python runtime at another package index (before it starts)."""
    page.evaluate(
        """(url) => {
            const el = document.getElementById('rl-config');
            const cfg = JSON.parse(el.textContent);
            cfg.packagesUrl = url.endsWith('/') ? url : url + '/';
            el.textContent = JSON.stringify(cfg);
        }""",
        url,
    )


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
            b.close()


PAGES = ["", "ppo/", "s21/", "s21/demo/", "glossary/"]


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
