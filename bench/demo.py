"""The toy RLHF demo: the default command (target: under 30 s here) and the browser configuration
(target: under 20 s in Chromium once Python is loaded, with the Python the site serves).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from site_build.chromium import browser, serve

from .browser import BUILD_S, build_site, open_page, wait

ROOT = Path(__file__).resolve().parent.parent
# the demo's run has logged its first point: Python is loaded and training (the progress bar,
# shown once Python is loaded, is indeterminate until then)
FIRST_POINT = ("(() => { const p = document.querySelector('[data-demo] progress');"
               " return !p.hidden && p.position >= 0; })()")
RUN_ENABLED = "!document.querySelector('[data-demo] [data-action=run]').disabled"


def cpython() -> tuple[float, float]:
    """Seconds of ``python -m rl_ops_numpy.demo`` (the default run) and of ``run(BROWSER_CONFIG)``
    in this process."""
    start = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "rl_ops_numpy.demo"], cwd=ROOT, check=True,
                       capture_output=True, timeout=BUILD_S)
    except subprocess.TimeoutExpired as err:
        raise TimeoutError(f"gave up after {BUILD_S} s waiting for python -m rl_ops_numpy.demo") \
            from err
    cli = time.perf_counter() - start

    from rl_ops_numpy.demo import BROWSER_CONFIG, run

    start = time.perf_counter()
    run(BROWSER_CONFIG)
    return cli, time.perf_counter() - start


def chromium() -> float:
    """Seconds from the run's first logged point to its end, in Chromium, on the built site."""
    site = build_site()
    with serve(site) as url, browser() as b:
        page = open_page(b.new_context(), f"{url}/s21/demo/", "the demo page")
        wait("the demo's Run button", page.locator("[data-demo] [data-action='run']").click)
        wait("the demo's first logged point (Python loaded)", page.wait_for_function, FIRST_POINT)
        start = time.perf_counter()
        wait("the demo's run to end", page.wait_for_function, RUN_ENABLED)
        seconds = time.perf_counter() - start
        error = page.locator("[data-demo] [data-output]")
        if error.is_visible():
            raise RuntimeError(f"the demo's run failed in Chromium: {error.inner_text()}")
    return seconds


def main() -> bool:
    cli, small = cpython()
    print(f"python -m rl_ops_numpy.demo (default): {cli:.1f} s")
    print(f"browser configuration in CPython: {small:.1f} s")
    ok = cli < 30
    print(f"target: default command under 30 s: {'PASS' if ok else 'FAIL'}")
    seconds = chromium()
    print(f"browser configuration in Chromium, after Python loaded: {seconds:.1f} s")
    ok_browser = seconds < 20
    print(f"target: browser configuration under 20 s in Chromium: "
          f"{'PASS' if ok_browser else 'FAIL'}")
    return ok and ok_browser
