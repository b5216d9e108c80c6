"""The browser's Python on the browser's interpreter: Pyodide (wasm32, its own numpy build) in
Node, loaded from the built site's own ``assets/pyodide/`` and wheel, so what is tested is what
ships. CPython cannot show the bugs of a 32-bit ``np.intp`` or an older numpy; this can.

One Node run (tests/wasm/pyodide_node.mjs + driver.py) does every task; the tests read its
results: lessons print their golden output, Check passes every answer and fails a wrong one,
the cell runner reports errors in the learner's terms, torch expressions keep the layer's
contract with real torch, and the demo trains.
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

from .conftest import LESSONS, ROOT
from .golden import golden_path
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


def wrong_answer(exercise_id: str) -> str:
    """The exercise with every blank answered, the last one wrongly (its value times 1.5)."""
    lesson = LESSONS[exercise_id]
    answers = [b.answer for b in lesson.blanks]
    answers[-1] = f"({answers[-1]}) * 1.5"
    parts = lesson.exercise(blanked=True).split("_____")
    return "".join(p + (answers[i] if i < len(answers) else "") for i, p in enumerate(parts))


def _check_task(exercise_id: str, exercise: str) -> dict:
    code, parts = _cell(exercise_id, exercise)
    return {"exercise_id": exercise_id, "code": code, "parts": parts}


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
        "checks": [_check_task(s, LESSONS[s].exercise(blanked=False)) for s in exercise_ids]
        + [_check_task(s, wrong_answer(s)) for s in exercise_ids],
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
    results["exercise_ids"] = exercise_ids
    return results


def test_the_interpreter_is_pyodides_wasm32_with_a_32_bit_intp(wasm):
    assert wasm["platform"]["intp"] == "int32"
    assert wasm["platform"]["python"].startswith("3.12")


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_lesson_prints_its_golden_output_on_wasm32(wasm, exercise_id):
    golden = golden_path(LESSONS[exercise_id]).read_text(encoding="utf-8")
    assert wasm["lessons"][exercise_id] == golden


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_passes_the_answer_and_fails_a_wrong_one_on_wasm32(wasm, exercise_id):
    n = len(wasm["exercise_ids"])
    i = wasm["exercise_ids"].index(exercise_id)
    right, wrong = wasm["checks"][i], wasm["checks"][n + i]
    assert right["error"] is None and right["passed"] == right["total"] > 0, right
    assert wrong["error"] is None and wrong["passed"] < wrong["total"], wrong
    case = wrong["failures"][0]
    assert case["reason"]["code"] == "values" and case["inputs"] and case["got"], case
    assert case["shrunk"]  # shrunk on wasm32 too


def test_cell_errors_point_at_the_learners_lines_on_wasm32(wasm):
    syntax, blank = wasm["cells"]
    assert not syntax["ok"] and "SyntaxError" in syntax["stderr"]
    assert "exercise, line 1" in syntax["stderr"]
    assert not blank["ok"] and "blank (_____)" in blank["stderr"]
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
