"""Offline after the first visit, fresh online: the service worker (js/sw.js) in Chromium.

A learner visits a lesson and runs an exercise; the network goes; a reload still shows the page,
and Run and Check still work from the cached runtime. A deploy keeps the pages visited before
it, and a changed runtime file is cached as the build wrote it, even when the host lets the
browser's HTTP cache keep the old one; two copies of the site on one origin stay apart.
"""

from __future__ import annotations

import shutil

from .browser import describe, new_page, serve, wait_until
from .conftest import LESSONS, ROOT
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


def _updated(page) -> None:
    """Ask the browser for the site's service worker again, and wait until a new one controls
    the page (a deploy changes sw.js's bytes)."""
    page.evaluate("""() => new Promise((resolve) => {
        navigator.serviceWorker.addEventListener('controllerchange', resolve, {once: true});
        navigator.serviceWorker.getRegistration().then((r) => r.update());
    })""")


def test_a_deploy_keeps_pages_fresh_online_and_visited_pages_offline(chromium, built_site,
                                                                      tmp_path):
    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    with serve(site) as url:
        page = new_page(chromium, f"{url}/en/", service_workers="allow")
        _controlled(page)
        page.goto(f"{url}/en/ppo/")  # visited before the deploy only
        page.goto(f"{url}/en/")
        # deploy: a changed page and a new service worker
        index = site / "en" / "index.html"
        index.write_text(index.read_text().replace("</h1>", " (new)</h1>", 1))
        sw = site / "sw.js"
        build = sw.read_text().split('const BUILD = "')[1].split('"')[0]
        sw.write_text(sw.read_text().replace(build, "0" * len(build)))
        page.reload()
        assert "(new)" in page.locator("h1").first.inner_text()  # network first: never stale
        _updated(page)
        page.context.set_offline(True)
        page.goto(f"{url}/en/ppo/")  # the new worker kept what the old one cached
        assert page.locator(CELL).count() == 1
        page.goto(f"{url}/en/")
        assert "(new)" in page.locator("h1").first.inner_text()
        assert not page.errors and not page.foreign
        page.context.close()


def test_two_sites_on_one_origin_keep_their_caches_and_saved_work_apart(chromium, built_site):
    """Two copies of the site on one origin (at / and /b/, as a GitHub Pages user site and a
    project site are): each writes its own storage keys and caches, and neither deletes or
    overwrites the other's."""
    site = built_site["dir"]
    with serve(site, mounts={"/b/": site}) as url:
        page = new_page(chromium, f"{url}/en/ppo/", service_workers="allow")
        _controlled(page)
        blank = page.locator(CELL).locator("input[data-blank]").first
        blank.fill("root's answer")
        page.goto(f"{url}/b/en/ppo/")
        wait_until(page, "navigator.serviceWorker.getRegistration().then((r) => r?.active"
                   " && new URL(r.scope).pathname === '/b/')", timeout=TIMEOUT,
                   what="the copy's own service worker active")
        # the copy took, once, what was kept before keys had the site's path: now its own
        assert blank.input_value() == "root's answer"
        blank.fill("b's answer")
        page.goto(f"{url}/en/ppo/")
        assert blank.input_value() == "root's answer"
        page.goto(f"{url}/b/en/ppo/")
        assert blank.input_value() == "b's answer"
        keys = page.evaluate("Object.keys(localStorage)")
        assert f"rl-ops/cell/{STEM}" in keys and f"rl-ops@/b/cell/{STEM}" in keys
        names = page.evaluate("caches.keys()")
        assert "rl:/:site" in names and "rl:/b/:site" in names, names
        assert not page.errors and not page.foreign
        page.context.close()


def test_the_runtime_is_cached_only_as_the_build_wrote_it_past_a_stale_http_cache(
        chromium, built_site, tmp_path):
    """With GitHub Pages' headers (a file may come from the browser's HTTP cache for ten
    minutes), a deploy that changes a runtime file gets the new file into the runtime cache: the
    worker fetches past the HTTP cache and keeps only bytes that match the build's hash."""
    import os

    from site_build import service_worker

    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    pages_headers = {"Cache-Control": "max-age=600"}
    lock = site / "assets" / "pyodide" / "pyodide-lock.json"
    with serve(site, headers=pages_headers) as url:
        page = new_page(chromium, f"{url}/en/ppo/", service_workers="allow")
        _controlled(page)
        _fill(page)
        _run(page, "run")  # the runtime, through the HTTP cache and the worker
        # deploy: one runtime file changes (as a Pyodide upgrade would), and with it sw.js
        lock.write_text(lock.read_text() + "\n")
        later = lock.stat().st_mtime + 60
        os.utime(lock, (later, later))
        service_worker.write(site, ROOT / "js" / "sw.js")
        _updated(page)
        page.reload()
        _fill(page)
        expected = golden_path(LESSONS[STEM]).read_text(encoding="utf-8")
        assert _run(page, "run") == expected
        cached = page.evaluate("""async (url) => {
            for (const name of await caches.keys()) {
                const hit = await (await caches.open(name)).match(url);
                if (hit && name.includes('runtime')) return [name, await hit.text()];
            }
            return null;
        }""", f"{url}/assets/pyodide/pyodide-lock.json")
        assert cached is not None and cached[1] == lock.read_text(), "stale or missing"
        assert not page.errors and not page.foreign
        page.context.close()
