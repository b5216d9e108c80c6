"""Offline after the first visit, fresh online: the service worker (js/sw.js) in Chromium.

A learner visits a lesson and runs an exercise; the network goes; a reload still shows the page,
and Run and Check still work from the cached runtime. A deploy keeps the pages visited before
it, and a changed runtime file is cached as the build wrote it, even when the host lets the
browser's HTTP cache keep the old one; two copies of the site on one origin stay apart.

A page open across a deploy goes on with its own version's code (the service worker keeps it);
where that code is gone (no service worker), the page says the site was updated and asks for a
reload, which runs the new code with the learner's work as it was.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

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


def test_what_a_visited_page_loads_only_later_works_offline_too(chromium, site_url):
    """A page visited once, its figures never scrolled to and its review scheduler never
    needed: offline, a figure still draws (its numbers, uPlot and its stylesheet) and a drill's
    miss is still scheduled for review (ts-fsrs). The service worker kept them at install."""
    page = new_page(chromium, f"{site_url}/en/ppo/", service_workers="allow")
    _controlled(page)
    figure = page.locator("[data-figure='clip']")
    assert figure.get_attribute("data-state") == "idle"  # never fetched online
    page.context.set_offline(True)
    figure.scroll_into_view_if_needed()
    wait_until(page, "el => el.dataset.state !== 'loading' && el.dataset.state !== 'idle'",
               figure.element_handle(), timeout=TIMEOUT, what="the clip figure loaded offline")
    assert figure.get_attribute("data-state") == "drawn", figure.inner_text()
    assert figure.locator(".uplot").count() == 1
    # uPlot's stylesheet came too: the page holds its rules
    assert page.evaluate("[...document.styleSheets].some((s) => s.href?.includes('uPlot.min.css')"
                         " && s.cssRules.length > 0)")
    # a drill checked with a slot left empty: a miss, so the exercise becomes a review item
    drill = page.locator(f"[data-drill='{STEM}']")
    drill.locator("[data-action='check']").click()
    wait_until(page, "k => localStorage.getItem(k) !== null", f"rl-ops/review/{STEM}",
               timeout=TIMEOUT, what="the drill's miss scheduled for review offline")
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
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
        service_worker.write(site, ROOT / "js" / "sw.js", _version(site))
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


# ---- a deploy under an open page ----------------------------------------------------------------

# every request asks the server: a deploy is seen at once
NO_STORE = {"Cache-Control": "no-cache"}
UPDATED = "This site was updated after this page was opened"  # js/strings.toml siteUpdated


def _version(site: Path) -> str:
    """The code version of the site in ``site`` (its pages' rl-config)."""
    html = (site / "en" / "index.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'<script id="rl-config"[^>]*>(.*?)</script>', html, re.S)[1])[
        "version"]


def _deploy_code(site: Path, *, worker_js_appends: str = "") -> str:
    """Deploy new code over ``site`` as a build of changed JavaScript would: a new code version
    in every page and module (worker.js, changed by ``worker_js_appends``), and a new sw.js with
    the new files' hashes. Returns the new version."""
    from site_build import service_worker

    old = _version(site)
    new = old[::-1] if old[::-1] != old else "0" * len(old)
    for path in [*site.rglob("*.html"), *site.glob("assets/*/*.js")]:
        text = path.read_text(encoding="utf-8")
        if old in text:
            path.write_text(text.replace(old, new), encoding="utf-8")
    worker = site / "assets" / "js" / "worker.js"
    worker.write_text(worker.read_text(encoding="utf-8") + worker_js_appends, encoding="utf-8")
    service_worker.write(site, ROOT / "js" / "sw.js", new)
    return new


def test_an_open_page_goes_on_with_its_own_code_across_a_deploy_that_replaced_it(
        chromium, built_site, tmp_path):
    """With the service worker, a page opened before a deploy starts its workers from its own
    version's modules, which the worker kept, even once the new service worker controls it and
    the host serves only a new worker.js that this page could not drive."""
    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    expected = golden_path(LESSONS[STEM]).read_text(encoding="utf-8")
    with serve(site, headers=NO_STORE) as url:
        page = new_page(chromium, f"{url}/en/ppo/", service_workers="allow")
        _controlled(page)
        _fill(page)
        assert _run(page, "run") == expected
        # the host now has a worker.js this page's code could not drive
        _deploy_code(site, worker_js_appends="\nthrow new Error('another protocol');\n")
        _updated(page)  # the new service worker controls the open page
        assert _run(page, "run") == expected  # the spare, started before the deploy
        assert _run(page, "run") == expected  # a worker started after it, of the page's version
        _run(page, "check")
        passed, total = page.locator(f"{CELL} .rl-status").text_content().split("/")
        assert passed == total
        assert not page.errors and not page.foreign
        page.context.close()


def test_a_page_whose_code_a_deploy_replaced_says_so_and_a_reload_runs_the_new_code(
        chromium, built_site, tmp_path):
    """Without a service worker the host has only the new code: once the worker started before
    the deploy has served its job, the open page's Run and Check say the site was updated and ask
    for a reload (no worker of another version runs its jobs); the reload keeps the learner's
    blanks and runs the new code."""
    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    expected = golden_path(LESSONS[STEM]).read_text(encoding="utf-8")
    with serve(site, headers=NO_STORE) as url:
        page = new_page(chromium, f"{url}/en/ppo/")
        _fill(page)
        assert _run(page, "run") == expected
        _deploy_code(site)
        # the spare started as the last job ended may have fetched worker.js before the deploy
        # (it then runs this job as the page's version) or after it (stale): the next never runs
        out = _run(page, "run")
        assert out == expected or UPDATED in out, out
        for action in ("run", "check"):
            assert UPDATED in _run(page, action)
        answers = [b.answer for b in LESSONS[STEM].blanks]
        page.reload()
        blanks = page.locator(CELL).locator("input[data-blank]")
        assert [blanks.nth(k).input_value() for k in range(len(answers))] == answers
        assert _run(page, "run") == expected
        assert not page.errors and not page.foreign
        page.context.close()


def test_a_wheel_or_pyodide_of_a_later_deploy_is_named_as_such_not_run(
        chromium, built_site, tmp_path):
    """The worker checks what it fetches against what the page names: a wheel whose bytes are
    not its URL's hash (a deploy changed it before the page's first Run), or a Pyodide of another
    version (before a later Run), is a site updated, not a runtime that fails in odd ways."""
    from site_build import pyodide_dist

    site = tmp_path / "site"
    shutil.copytree(built_site["dir"], site)
    with serve(site, headers=NO_STORE) as url:
        page = new_page(chromium, f"{url}/en/ppo/")
        # changed before any intent: typing into a blank already starts loading Python
        (wheel,) = (site / "assets" / "wheels").glob("*.whl")
        original = wheel.read_bytes()
        wheel.write_bytes(original + b"\0")
        _fill(page)
        assert UPDATED in _run(page, "run")
        page.reload()  # the same version (only the wheel changed): a reload cannot help yet
        wheel.write_bytes(original)
        # a newer Last-Modified than the changed file's, which may have the same second (the
        # browser would revalidate its cached copy of that and keep it)
        later = time.time() + 60
        os.utime(wheel, (later, later))
        _fill(page)
        golden = golden_path(LESSONS[STEM]).read_text(encoding="utf-8")
        assert _run(page, "run") == golden
        mjs = site / "assets" / "pyodide" / "pyodide.mjs"
        version = f'"{pyodide_dist.version()}"'  # the one string of it in pyodide.mjs
        mjs.write_text(mjs.read_text(encoding="utf-8").replace(version, '"0.0.1"'), "utf-8")
        # the spare started as the last Run ended may have imported pyodide.mjs before the change
        out = _run(page, "run")
        assert out == golden or UPDATED in out, out
        assert UPDATED in _run(page, "run")
        assert not page.errors and not page.foreign
        page.context.close()
