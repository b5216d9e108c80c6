"""Offline after the first visit, fresh online: the service worker (js/sw.js) in Chromium.

A learner visits a lesson and runs an exercise; the network goes; a reload still shows the page,
and Run and Check still work from the cached runtime. A new deploy replaces the old caches.
"""

from __future__ import annotations

import shutil

from .browser import describe, new_page, serve, wait_until
from .conftest import LESSONS
from .golden import golden_path

STEM = "ppo/importance_ratio"
CELL = f"[data-runner='{STEM}']"
TIMEOUT = 120_000


def _controlled(page) -> None:
    wait_until(page, "navigator.serviceWorker.controller !== null", timeout=TIMEOUT,
               what="the service worker in control of the page")


def _run(page, action: str) -> str:
    cell = page.locator(CELL)
    cell.locator(f"[data-action='{action}']").click()
    wait_until(
        page, "el => el.dataset.state === 'idle' && el.querySelector('[data-output]').textContent",
        cell.element_handle(), timeout=TIMEOUT, what=f"{STEM} idle with an output after {action}",
        now=lambda: describe(page, STEM),
    )
    return cell.locator("[data-output]").text_content()


def _fill(page) -> None:
    for k, blank in enumerate(LESSONS[STEM].blanks):
        page.locator(CELL).locator("input[data-blank]").nth(k).fill(blank.answer)


def test_a_visited_page_reloads_runs_and_checks_offline(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/", service_workers="allow")
    _controlled(page)
    _fill(page)
    expected = golden_path(LESSONS[STEM]).read_text(encoding="utf-8")
    assert _run(page, "run") == expected  # Python and numpy come through the service worker

    page.context.set_offline(True)
    page.reload()
    page.wait_for_load_state("load")
    assert page.locator(CELL).count() == 1  # the page and its scripts, from the cache
    assert page.locator(CELL).locator("input[data-blank]").nth(0).input_value()  # saved work
    assert _run(page, "run") == expected  # a fresh worker, the runtime from the cache
    _run(page, "check")
    passed, total = page.locator(f"{CELL} .rl-status").text_content().split("/")
    assert passed == total
    # search too: its index and scripts were cached when the service worker was installed
    search = page.locator(".md-search__input")
    search.click()
    search.fill("ratio")
    search.press("End")  # Material searches on key events; fill() alone types no key
    page.locator(".md-search-result__item").first.wait_for(timeout=TIMEOUT)
    assert not page.errors and not page.foreign
    page.context.close()


def test_a_new_deploy_replaces_the_old_caches_and_pages_are_fresh(chromium, built_site, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    with serve(site) as url:
        page = new_page(chromium, f"{url}/en/", service_workers="allow")
        _controlled(page)
        old = page.evaluate("caches.keys()")
        assert any(name.startswith("rl-site-") for name in old)
        # deploy: a changed page and a new service worker
        index = site / "en" / "index.html"
        index.write_text(index.read_text().replace("</h1>", " (new)</h1>", 1))
        sw = site / "sw.js"
        build = sw.read_text().split('const BUILD = "')[1].split('"')[0]
        sw.write_text(sw.read_text().replace(build, "0" * len(build)))
        page.reload()
        assert "(new)" in page.locator("h1").first.inner_text()  # network first: never stale
        page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.update())")
        wait_until(
            page, "caches.keys().then((k) => k.includes('rl-site-' + '0'.repeat(16)))",
            timeout=TIMEOUT, what="the new deploy's cache",
            now=lambda: page.evaluate("caches.keys()"),
        )
        wait_until(
            page,
            f"caches.keys().then((k) => !k.includes({next(n for n in old if 'site' in n)!r}))",
            timeout=TIMEOUT, what="the old deploy's cache deleted",
            now=lambda: page.evaluate("caches.keys()"),
        )
        assert not page.errors and not page.foreign
        page.context.close()
