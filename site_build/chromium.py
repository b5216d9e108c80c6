"""The built site in headless Chromium: a local server for it and the browser, shared by the
browser tests (``tests/browser.py`` adds their helpers), the benchmarks (``bench/``) and
``python -m tests.browser shot`` (screenshots for review).

Debian's ``chromium`` is driven by Playwright's Python package (Playwright's own browser
download does not work offline). The flags keep it from calling any other host: no background
services, and no host name resolves, so every request but those to the local server fails.
:func:`serve` can emulate a learner's network (latency, bandwidth) for the benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import io
import shutil
import socketserver
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from .pages import PAGES

__all__ = ["FLAGS", "ISOLATED", "PAGES", "SERVED", "SITE", "browser", "chromium_path", "serve"]

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
    # more copies of a site under a path each ("/b/": a folder), beside the one at the root
    mounts: ClassVar[dict[str, str]] = {}
    # a network to emulate (for benchmarks): round-trip latency and bandwidth
    latency: ClassVar[float] = 0.0  # seconds before each response
    bytes_per_second: ClassVar[float] = 0.0  # 0: as fast as the machine goes
    served: ClassVar[Counter[str]] = Counter()  # the responses sent, by path (serve(): its own)

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

    def translate_path(self, path: str) -> str:
        for prefix, folder in self.mounts.items():
            if path.startswith(prefix):
                root = self.directory
                self.directory = folder
                try:
                    return super().translate_path("/" + path[len(prefix):])
                finally:
                    self.directory = root
        return super().translate_path(path)

    def send_head(self):
        if self.latency:
            time.sleep(self.latency)
        path = Path(self.translate_path(self.path))
        site = next((f for p, f in self.mounts.items() if self.path.startswith(p)),
                    self.directory)
        page_404 = Path(site) / "404.html"
        if not path.exists() and page_404.is_file():
            # as GitHub Pages does: a missing path gets the site's 404 page, with status 404
            body = page_404.read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()

    def copyfile(self, source, outputfile) -> None:
        if not self.bytes_per_second:
            return super().copyfile(source, outputfile)
        chunk = 16 * 1024
        while block := source.read(chunk):
            outputfile.write(block)
            time.sleep(len(block) / self.bytes_per_second)
        return None

    def log_request(self, code="-", size="-") -> None:
        # the bodies sent (200s), counted by path (query left out): a test can tell a file sent
        # twice; a 304 (the browser's copy still good) sends none
        if code == 200:  # an int or http.HTTPStatus
            self.served[self.path.split("?")[0]] += 1

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:
        # a page closed while a file was on its way is no error of the server's
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# each running server's responses by path (`_Handler.served`), by the address serve() yielded
SERVED: dict[str, Counter[str]] = {}

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
    mounts: dict[str, Path] | None = None,
) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port), with extra ``headers``; yield the URL.
    ``latency`` (s) and ``mbit_per_second`` emulate a network, for benchmarks. ``mounts``
    serves more folders under paths of the same origin (``{"/b/": site}``: two copies of a
    site, as two GitHub Pages project sites of one user are). What it sends is counted in
    ``SERVED[url]``: each path's responses with a body (status 200)."""
    handler_class = type("Handler", (_Handler,), {
        "extra_headers": headers or {},
        "mounts": {prefix: str(folder) for prefix, folder in (mounts or {}).items()},
        "latency": latency,
        "bytes_per_second": mbit_per_second * 1e6 / 8,
        "served": Counter(),
    })
    handler = functools.partial(handler_class, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    SERVED[url] = handler_class.served
    try:
        yield url
    finally:
        del SERVED[url]
        server.shutdown()
        server.server_close()


def chromium_path() -> str | None:
    """Debian's ``chromium`` on the PATH, or None."""
    return shutil.which("chromium")


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """Headless Chromium (Playwright's ``Browser``) with :data:`FLAGS`, closed on exit."""
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


