"""Shared test helpers: where the lesson files are, and how to load their PyTorch functions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "overrides" / "hooks"))

from lessons import Lesson, find_lessons  # noqa: E402

LESSONS = {lesson.stem: lesson for lesson in find_lessons(DOCS)}


def lesson_function(stem: str):
    """The exercise function of ``docs/<stem>.py`` (the solution), run with real torch."""
    return LESSONS[stem].load_function()


@pytest.fixture(scope="session")
def lessons() -> dict[str, Lesson]:
    return LESSONS
