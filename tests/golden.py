"""Expected outputs on the pages are golden files written by running the lesson code.

``python -m tests.golden --write`` (or ``make golden``) runs every lesson file with real PyTorch
and writes what it prints to ``docs/<lesson>/<name>.out``; the pages include those files. The test
below fails when a file is stale, so no number on a page can drift from the code.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "overrides" / "hooks"))

from lessons import Lesson, find_lessons  # noqa: E402


def golden_path(lesson: Lesson) -> Path:
    return lesson.path.with_suffix(".out")


def run_lesson(lesson: Lesson) -> str:
    """Run the whole lesson file (solution + test block) with real torch; return its stdout."""
    out = io.StringIO()
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out):
        exec(compile(lesson.text, str(lesson.path), "exec"), namespace)
    return out.getvalue()


def main() -> None:
    write = "--write" in sys.argv
    stale = []
    for lesson in find_lessons(ROOT / "docs"):
        path, now = golden_path(lesson), run_lesson(lesson)
        if not path.exists() or path.read_text(encoding="utf-8") != now:
            stale.append(path.relative_to(ROOT))
            if write:
                path.write_text(now, encoding="utf-8")
    verb = "wrote" if write else "stale"
    print("\n".join(f"{verb}: {p}" for p in stale) or "all golden outputs are current")


if __name__ == "__main__":
    main()
