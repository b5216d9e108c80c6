"""Shared test helpers: where the lesson files are, and how to load their PyTorch functions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

# the same examples in every process and on every machine: a failure reproduces
settings.register_profile("stable", derandomize=True, database=None, deadline=None)
settings.load_profile("stable")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
from site_build.lessons import find_lessons  # noqa: E402

from .golden import scripts  # noqa: E402

LESSONS = {lesson.id: lesson for lesson in find_lessons(DOCS)}
# every exercise's manifest entry (its lesson file's check section), by id
EXERCISES = {exercise_id: lesson.manifest for exercise_id, lesson in LESSONS.items()}
# the chapters with exercises (docs/<chapter>/), each one page per language
CHAPTERS = sorted({exercise_id.split("/")[0] for exercise_id in LESSONS})
# every runnable file of the pages, lessons and examples: what golden outputs come from
SCRIPTS = {script.id: script for script in scripts(DOCS)}


def lesson_function(exercise_id: str):
    """The exercise function of ``docs/<exercise_id>.py`` (the solution), run with real torch."""
    return LESSONS[exercise_id].load_function()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> dict:
    """`mkdocs build --strict` into a temporary folder, once per test run: with pytest-xdist the
    first worker to ask builds it (under a file lock) and the others use that build."""
    import json
    import os
    import subprocess

    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    out, record = shared / "site", shared / "site.json"
    with FileLock(str(shared / "site.lock")):
        if not record.exists():
            env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
            proc = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                cwd=ROOT, env=env, capture_output=True, text=True,
            )
            result = {"returncode": proc.returncode, "log": proc.stdout + proc.stderr}
            record.write_text(json.dumps(result), encoding="utf-8")
    return {"dir": out, **json.loads(record.read_text(encoding="utf-8"))}


@pytest.fixture(scope="session")
def site_url(built_site):
    """The built site on a local server."""
    from .browser import serve

    assert built_site["returncode"] == 0, built_site["log"]
    with serve(built_site["dir"]) as url:
        yield url


@pytest.fixture(scope="session")
def chromium():
    from .browser import browser, chromium_path

    if chromium_path() is None:
        pytest.fail("chromium is not installed: `make test` installs it with apt-get as root")
    with browser() as b:
        yield b


@pytest.fixture(scope="module")
def shared_pages():
    """The pages a module's tests share (`browser.page_for`), by address and options: opened by
    the first test that asks, closed when the module is done."""
    pages: dict = {}
    yield pages
    for page in pages.values():
        page.context.close()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """How `make test` (`-n 2 --dist loadgroup`) shares the work between its two workers.

    The tests of a module that share a module-scoped fixture (a page and its loaded Python, a
    Pyodide in Node, a built copy of the site) are one unit, run by one worker: an
    `xdist_group` named after the module. Every other test is a unit of its own, so the slow
    tests of one file spread over both workers instead of keeping one busy at the end.

    Browser tests first (xdist hands out the groups, largest first, then the single tests in
    this order): the slow units start early and the thousands of quick ones fill the end, so
    both workers finish together. (Run alone, `pytest` keeps this order and ignores groups.)"""
    for item in items:
        fixtures = item._fixtureinfo.name2fixturedefs.values()
        if any(defs[-1].scope in ("module", "package", "class") for defs in fixtures):
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    items.sort(key=lambda item: not item.nodeid.startswith("tests/test_browser_"))
