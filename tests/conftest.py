"""Shared test helpers: where the lesson files are, and how to load their PyTorch functions."""

from __future__ import annotations

import json
import math
import os
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


# pytest's cache (.pytest_cache): how many seconds each test file took when it last ran
FILE_SECONDS = "rl-ops/seconds-per-file"
# the same, committed (`make durations` writes it from the cache after a `make test`): the order
# of a fresh clone (CI), which has no cache
DURATIONS = Path(__file__).with_name("durations.json")
_seconds: dict[str, float] = {}


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0]


BROWSER = "browser"  # the marker of a test that drives Chromium: `make test-fast` runs the rest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{BROWSER}: drives Chromium (tests/test_browser_*.py, or uses the chromium "
        "fixture); applied by tests/conftest.py, deselected by `make test-fast` (-m 'not browser')"
    )


def needs_a_browser(item) -> bool:
    """A test file of the browser's own (tests/test_browser_*.py), or a test that asks for the
    ``chromium`` fixture (directly or through another fixture)."""
    return (Path(str(item.fspath)).name.startswith("test_browser_")
            or "chromium" in getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(config, items):
    """The test files, slowest first. `make test` gives whole files to its two workers
    (`--dist loadfile`: the tests of a module that share a page and its Python, or Pyodide in
    Node, stay together) in this order (`--no-loadscope-reorder`): the slow files start early
    and the quick ones fill the end, so both workers finish together. The seconds are those of
    the last run (`FILE_SECONDS`), else those committed in tests/durations.json; a file timed
    in neither comes first if it drives Chromium, else last. (xdist's `loadgroup` could spread
    a slow file's other tests too, but with pytest 9.2 it no longer groups: pytest-xdist issue
    1386.)"""
    cache = getattr(config, "cache", None)
    committed = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.exists() else {}
    seconds = {**committed, **(cache.get(FILE_SECONDS, {}) if cache is not None else {})}

    def cost(item) -> float:
        name = _file(item.nodeid)
        return seconds.get(name, math.inf if name.startswith("tests/test_browser_") else 0.0)

    for item in items:
        if needs_a_browser(item):
            item.add_marker(BROWSER)
    items.sort(key=cost, reverse=True)  # stable: a file's tests keep their order


def pytest_runtest_logreport(report):
    """Each file's seconds (setup, call and teardown of its tests), added up where the reports
    arrive: in the one process, or in xdist's controller."""
    _seconds[_file(report.nodeid)] = _seconds.get(_file(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session):
    cache = getattr(session.config, "cache", None)
    if cache is None or os.environ.get("PYTEST_XDIST_WORKER") or not _seconds:
        return
    timed = {name: round(seconds, 1) for name, seconds in _seconds.items()}
    cache.set(FILE_SECONDS, {**cache.get(FILE_SECONDS, {}), **timed})


def write_durations() -> None:
    """tests/durations.json from this checkout's cache (`make durations`, after a `make test`):
    each file's seconds, rounded to whole seconds, sorted by name (a small, stable diff)."""
    cached = ROOT / ".pytest_cache" / "v" / FILE_SECONDS
    seconds = json.loads(cached.read_text(encoding="utf-8"))
    table = {name: round(seconds[name]) for name in sorted(seconds) if (ROOT / name).exists()}
    DURATIONS.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_durations()
