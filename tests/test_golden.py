"""Every expected output shown on a page is what the lesson code prints today."""

from __future__ import annotations

import pytest

from .conftest import LESSONS
from .golden import golden_path, run_lesson


@pytest.mark.parametrize("stem", sorted(LESSONS))
def test_golden_output_is_current(stem):
    lesson = LESSONS[stem]
    path = golden_path(lesson)
    assert path.exists(), f"{path} is missing: run `make golden`"
    assert run_lesson(lesson) == path.read_text(encoding="utf-8"), (
        f"{path} is stale: the lesson now prints something else; run `make golden`"
    )
