"""The browser's Python on the browser's interpreter: Pyodide (wasm32, its own numpy build) in
Node, loaded from the built site's own ``assets/pyodide/`` and wheel, so what is tested is what
ships. CPython cannot show the bugs of a 32-bit ``np.intp`` or an older numpy; this can.

One Node run (tests/wasm/pyodide_node.mjs + driver.py) does every task; the tests read its
results: lessons print their golden output; every exercise's cell, as its page builds it
(js/runner.js ``program``) in each language, runs to that language's expected output; Check, as
the page runs it (phase 1, its plain data, the judge's verdict), passes every answer and fails
its blanks, its wrong last blank (with a shrunk case) and every trap its lesson names; the cell
runner reports errors in the learner's terms, torch expressions keep the layer's contract with
real torch, and the demo trains. These are the per-exercise checks that need no page: Chromium
(tests/test_browser_exercises.py) drives a few exercises per chapter through the page itself.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import torch as real_torch

from browser_runtime.check import check

from .conftest import EXERCISES, LESSONS, ROOT
from .golden import golden_path
from .mutants import seeds
from .test_runner import _cell
from .test_torch_layer import (
    EXPRESSION_LIST,
    expression_ulps,
    ulp_distance,
)

NODE = shutil.which("node")
# the demo on a configuration small enough for a test (the browser's one runs in Chromium)
DEMO = {"corpus_size": 200, "sft_steps": 10, "sft_batch": 16, "ppo_steps": 6, "ppo_batch": 16,
        "dpo_prompts": 32, "dpo_steps": 6, "dpo_batch": 16, "eval_words": 32, "log_every": 2}


LANGUAGES = ("zh", "en")
BLANK = "_____"


def one_line(answer: str) -> str:
    """An answer as a learner types it into a one-line blank (brackets join its lines)."""
    return " ".join(answer.split())


def answers(exercise_id: str) -> list[str]:
    return [one_line(b.answer) for b in LESSONS[exercise_id].blanks]


def wrong(exercise_id: str) -> list[str]:
    """Every blank answered, the last one wrongly (its value times 1.5)."""
    right = answers(exercise_id)
    return [*right[:-1], f"({right[-1]}) * 1.5"]


def program(exercise_id: str, lang: str, blanks: list[str] | None, with_test: bool) -> dict:
    """The code and parts a cell of the ``lang`` page sends (js/runner.js ``program``): its
    exercise with ``blanks`` typed in (None: left empty), then for Run its test."""
    lesson = LESSONS[exercise_id].in_language(lang)
    pieces = lesson.exercise(blanked=True).rstrip("\n").split(BLANK)
    typed = [*(blanks or []), *[BLANK] * len(pieces)][: len(pieces) - 1]
    ex = "".join(piece + value for piece, value in zip(pieces, [*typed, ""], strict=True))
    if not with_test:
        return {"code": f"{ex}\n", "parts": [{"name": "exercise", "first": 1,
                                              "length": ex.count("\n") + 1}]}
    test = lesson.test().rstrip("\n")
    return {"code": f"{ex}\n\n{test}\n", "parts": [
        {"name": "exercise", "first": 1, "length": ex.count("\n") + 1},
        {"name": "test", "first": ex.count("\n") + 3, "length": test.count("\n") + 1},
    ]}


def check_tasks(exercise_id: str) -> dict[str, dict]:
    """Check's tasks of one exercise, by key: the answer typed in, the blanks left empty, the
    wrong last blank, and each trap (a change of the answer, typed in the editor)."""
    lesson, seed = LESSONS[exercise_id], seeds(exercise_id)[2]
    tasks = {
        "answer": program(exercise_id, "en", answers(exercise_id), with_test=False),
        "blanks": program(exercise_id, "en", None, with_test=False),
        "wrong": program(exercise_id, "en", wrong(exercise_id), with_test=False),
    }
    answer = lesson.exercise(blanked=False)
    for k, trap in enumerate(lesson.traps):
        code = trap.apply(answer)
        tasks[f"trap {k}"] = {"code": code, "parts": [
            {"name": "cell", "first": 1, "length": code.rstrip("\n").count("\n") + 1}]}
    return {f"{kind} {exercise_id}": {**task, "exercise_id": exercise_id, "seed": seed}
            for kind, task in tasks.items()}


@pytest.fixture(scope="module")
def wasm(built_site, tmp_path_factory) -> dict:
    if NODE is None:
        pytest.fail("node is not installed: the wasm tests run Pyodide in Node")
    assert built_site["returncode"] == 0, built_site["log"]
    site = built_site["dir"]
    (wheel,) = (site / "assets" / "wheels").glob("*.whl")
    work = tmp_path_factory.mktemp("wasm")
    exercise_ids = sorted(LESSONS)
    tasks = {
        "lessons": {ex: LESSONS[ex].text for ex in exercise_ids},
        "runs": {f"{lang} {ex}": program(ex, lang, answers(ex), with_test=True)
                 for ex in exercise_ids for lang in LANGUAGES},
        "checks": {key: task for ex in exercise_ids for key, task in check_tasks(ex).items()},
        "cells": [
            dict(zip(("code", "parts"), _cell("ppo/importance_ratio", "ratio = (1 +\n"),
                     strict=True)),
            dict(zip(("code", "parts"),
                     _cell("ppo/compute_gae", LESSONS["ppo/compute_gae"].exercise(blanked=True)),
                     strict=True)),
        ],
        "expressions": EXPRESSION_LIST,
        "demo": DEMO,
    }
    (work / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    proc = subprocess.run(
        [NODE, str(ROOT / "tests" / "wasm" / "pyodide_node.mjs"), str(site / "assets" / "pyodide"),
         str(wheel), str(work)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    results = json.loads((work / "results.json").read_text(encoding="utf-8"))
    print(f"seconds in Pyodide: {results['seconds']}")  # shown with -s, or when a test fails
    return results


def test_the_interpreter_is_pyodides_wasm32_with_a_32_bit_intp(wasm):
    assert wasm["platform"]["intp"] == "int32"
    assert wasm["platform"]["python"].startswith("3.12")


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_lesson_prints_its_golden_output_on_wasm32(wasm, exercise_id):
    golden = golden_path(LESSONS[exercise_id]).read_text(encoding="utf-8")
    assert wasm["lessons"][exercise_id] == golden


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_run_of_the_answer_prints_the_pages_expected_output_in_its_language_on_wasm32(
    wasm, exercise_id, lang
):
    """The cell as the ``lang`` page sends it (the answers typed into its blanks, then its test,
    in that language: the Chinese page runs the Chinese program) prints exactly that page's
    expected output (``compute_gae.zh.out`` on the Chinese page)."""
    result = wasm["runs"][f"{lang} {exercise_id}"]
    assert result["ok"] and result["stderr"] == "", result
    assert result["stdout"] == golden_path(LESSONS[exercise_id], lang).read_text(encoding="utf-8")


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_passes_the_answer_typed_into_the_blanks_on_wasm32(wasm, exercise_id):
    result = wasm["checks"][f"answer {exercise_id}"]
    assert result["error"] is None and result["passed"] == result["total"] > 0, result


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_fails_blanks_left_empty_and_says_to_fill_them_on_wasm32(
    wasm, exercise_id
):
    """(A case whose path never reaches a blank may pass: the mode that skips that line.)"""
    result = wasm["checks"][f"blanks {exercise_id}"]
    assert result["error"] is None and result["passed"] < result["total"], result
    reason = result["failures"][0]["reason"]
    assert reason["code"] == "raised" and reason["slip"] == "blank", reason
    assert f"NameError: name '{BLANK}'" in reason["message"], reason


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_fails_a_wrong_last_blank_with_a_shrunk_case_cpython_draws_alike_on_wasm32(
    wasm, exercise_id
):
    """The last blank's value times 1.5 fails, with a shrunk case, its inputs and both values;
    under CPython (real torch) the same seed draws inputs on which the same case fails first:
    the seed the page names reproduces the failure off the page."""
    result = wasm["checks"][f"wrong {exercise_id}"]
    assert result["error"] is None and result["passed"] < result["total"], result
    case = result["failures"][0]
    assert case["reason"]["code"] == "values" and case["inputs"] and case["got"], case
    assert case["shrunk"]  # shrunk on wasm32 too
    code = program(exercise_id, "en", wrong(exercise_id), with_test=False)["code"]
    again = check(EXERCISES[exercise_id], code, seed=result["seed"])
    assert again["failures"][0]["case"] == case["case"], (again["failures"][0], case)


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_fails_every_trap_its_lesson_names_on_wasm32(wasm, exercise_id):
    """Each trap (tests/test_mutants.py proves them at many seeds under CPython) fails Check on
    the browser's interpreter too; but those marked "rounding:", whose harm is torch's float32
    rounding, which the layer does not share: there Check passes them, as test_mutants pins."""
    missed = {}
    for k, trap in enumerate(LESSONS[exercise_id].traps):
        result = wasm["checks"][f"trap {k} {exercise_id}"]
        assert result["error"] is None and result["total"] > 0, result
        if trap.why.startswith("rounding:"):
            assert result["passed"] == result["total"], (trap.why, result["failures"])
        elif result["passed"] == result["total"]:
            missed[trap.why] = result["seed"]
    assert not missed, f"Check passes these traps on wasm32 (at these seeds): {missed}"


def test_cell_errors_point_at_the_learners_lines_on_wasm32(wasm):
    syntax, blank = wasm["cells"]
    assert not syntax["ok"] and "SyntaxError" in syntax["stderr"]
    assert "exercise, line 1" in syntax["stderr"]
    assert not blank["ok"] and blank["slip"] == "blank" and "'_____'" in blank["stderr"]
    assert "<cell>" not in syntax["stderr"] + blank["stderr"]


def _torch_summary(expr: str):
    names = {"torch": real_torch, "F": real_torch.nn.functional, "np": np, "math": math}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about what it is asked (std of 1 value)
            value = eval(expr, names)
    except Exception as exc:
        return {"error": type(exc).__name__}
    return value


def _agrees(got, want, ulps: int) -> bool:
    """A wasm summary against torch's value: dtype, shape and repr (IEEE expressions) or values
    within ``ulps`` (transcendental ones); errors by kind; plain values equal."""
    if isinstance(want, dict) and "error" in want:
        return got == want
    if isinstance(want, real_torch.Tensor):
        data = want.detach().numpy()
        if not (isinstance(got, dict) and got.get("tensor")):
            return False
        if got["dtype"] != str(want.dtype) or got["shape"] != list(want.shape):
            return False
        values = np.array(got["values"], dtype=np.float64).astype(data.dtype).reshape(data.shape)
        if ulps == 0:
            return got["repr"] == repr(want) and bool(np.all(ulp_distance(values, data) == 0))
        return bool(np.all(ulp_distance(values, data) <= ulps))
    if isinstance(want, tuple):
        items = got.get("items") if isinstance(got, dict) else None
        return items is not None and len(items) == len(want) and all(
            _agrees(g, w, ulps) for g, w in zip(items, want, strict=True)
        )
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            _agrees(g, w, ulps) for g, w in zip(got, want, strict=True)
        )
    if isinstance(want, real_torch.dtype):
        return got == repr(want)
    if isinstance(want, float) and math.isnan(want):
        return got == "nan"
    if isinstance(want, float) and isinstance(got, float):
        return bool(ulp_distance(np.float64(got), np.float64(want)) <= ulps)
    if isinstance(want, (bool, int, float, str)) or want is None:
        return got == want
    return got == repr(want)


def test_torch_expressions_keep_the_layers_contract_on_wasm32(wasm):
    bad = [
        expr for expr in EXPRESSION_LIST
        if not _agrees(wasm["expressions"][expr], _torch_summary(expr), expression_ulps(expr))
    ]
    assert not bad, bad


def test_the_demo_trains_on_wasm32(wasm):
    for phase in ("ppo", "dpo"):
        metrics = wasm["demo"][phase]
        assert metrics and all(math.isfinite(v) for v in metrics.values()), metrics
