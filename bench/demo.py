"""The toy RLHF demo: the default command (target: under 30 s here) and the browser configuration
(target: under 20 s in Chromium once Python is loaded, with the Python the site serves).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> bool:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rl_ops_numpy.demo"], cwd=ROOT, check=True,
                   capture_output=True)
    cli = time.perf_counter() - start
    print(f"python -m rl_ops_numpy.demo (default): {cli:.1f} s")

    from rl_ops_numpy.demo import BROWSER_CONFIG, run

    start = time.perf_counter()
    run(BROWSER_CONFIG)
    small = time.perf_counter() - start
    print(f"browser configuration in CPython: {small:.1f} s")
    ok = cli < 30
    print(f"target: default command under 30 s: {'PASS' if ok else 'FAIL'}")
    from tests.browser import browser, serve

    from .browser import build_site

    site = build_site()
    with serve(site) as url, browser() as b:
        page = b.new_context().new_page()
        page.goto(f"{url}/s21/demo/")
        page.locator("[data-demo] [data-action='run']").click()
        page.wait_for_function("document.querySelector('[data-demo] .rl-status').textContent"
                               ".match(/^(SFT|PPO)/)", timeout=180_000)
        start = time.perf_counter()
        page.wait_for_function("!document.querySelector('[data-demo] [data-action=run]').disabled",
                               timeout=180_000)
        chromium = time.perf_counter() - start
    print(f"browser configuration in Chromium, after Python loaded: {chromium:.1f} s")
    ok_browser = chromium < 20
    print(f"target: browser configuration under 20 s in Chromium: "
          f"{'PASS' if ok_browser else 'FAIL'}")
    return ok and ok_browser
