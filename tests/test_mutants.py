"""Check fails every mistake a page warns about, and every mechanical mistake that changes a
result, at every seed (tests/mutants.py makes them).

Check is only as good as the mistakes it fails: an input distribution that never puts NaN in
padding passes a multiply by the mask, one that always passes every argument passes a wrong
default. These tests hold the inputs to that: a new lesson names its traps, and a change to
``inputs(draw)`` that lets one through fails here.
"""

from __future__ import annotations

import contextlib

import pytest

from browser_runtime import torch_layer_installed
from browser_runtime.check import check

from .conftest import LESSONS
from .mutants import Answer, check_fails, define, difference, mechanical, seeds


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_each_exercise_names_the_mistakes_its_page_warns_about_as_changes_of_its_answer(
    exercise_id,
):
    lesson = LESSONS[exercise_id]
    assert lesson.traps, f"{lesson.path}: no traps section (TRAPS = [(why, old, new), ...])"
    answer = lesson.exercise(blanked=False)
    for trap in lesson.traps:
        assert trap.apply(answer) != answer  # `old` is in the answer once, and `new` differs
        define(trap.apply(answer), lesson.name)  # the mistake is code that runs


@pytest.mark.parametrize("torch_of", ["torch", "layer"])
@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_fails_every_trap_the_page_names_at_every_seed(exercise_id, torch_of):
    """Under real torch, and under the browser's torch layer (its autograd too), which is what
    the learner's code meets on the page: a trap whose harm is torch's rounding must be one the
    layer's rounding shows as well, but for those marked "rounding:" (below)."""
    lesson, ex = LESSONS[exercise_id], LESSONS[exercise_id].manifest
    answer = lesson.exercise(blanked=False)
    missed = {}
    with torch_layer_installed() if torch_of == "layer" else contextlib.nullcontext():
        for trap in lesson.traps:
            fn = define(trap.apply(answer), lesson.name)
            passed = [seed for seed in seeds(exercise_id) if not check_fails(ex, fn, seed)]
            if torch_of == "layer" and trap.why.startswith("rounding:"):
                # torch's float32 reductions round where the layer's do not (float64 sums,
                # one rounding: an equal group's std is exactly 0): in the browser this mistake
                # gives the right numbers, and Check passes it. Pinned, so that a layer that
                # rounds as torch does makes this a trap like the others again
                assert passed == seeds(exercise_id), trap.why
            elif passed:
                missed[trap.why] = passed
    assert not missed, f"Check passes these traps at these seeds: {missed}"


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_itself_fails_each_trap_and_passes_the_answer(exercise_id):
    """End to end, once per trap: the one-call Check (phase 1 with its shrinking, then the
    verdict) counts a failing case, and passes the answer."""
    lesson, ex = LESSONS[exercise_id], LESSONS[exercise_id].manifest
    answer = lesson.exercise(blanked=False)
    seed = seeds(exercise_id)[2]
    result = check(ex, answer, seed=seed)
    assert result["passed"] == result["total"], result["failures"]
    for trap in lesson.traps:
        result = check(ex, trap.apply(answer), seed=seed)
        assert result["passed"] < result["total"] and result["failures"], trap.why


@pytest.mark.parametrize("torch_of", ["torch", "layer"])
@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_fails_every_mechanical_mutant_that_changes_a_result_at_every_seed(
    exercise_id, torch_of, monkeypatch
):
    """Under real torch and under the browser's layer: equivalence is decided in the same
    arithmetic as Check's."""
    lesson, ex = LESSONS[exercise_id], LESSONS[exercise_id].manifest
    missed = {}
    with torch_layer_installed() if torch_of == "layer" else contextlib.nullcontext():
        answer = Answer(ex, define(lesson.exercise(blanked=False), lesson.name), monkeypatch)
        for mutant in mechanical(lesson):  # none where the answer has no such place
            fn = define(mutant.code, lesson.name)
            if difference(answer, fn) is None:
                continue  # it gives the answer's result on every input tried: the same meaning
            passed = [seed for seed in seeds(exercise_id) if not check_fails(ex, fn, seed)]
            if passed:
                missed[mutant.name] = passed
    assert not missed, f"Check passes these mutants at these seeds: {missed}"
