"""The exercise manifest (each lesson file's check section): every exercise is declared once, its
reference agrees with its PyTorch solution on its own random inputs, and the manifest travels
in the wheel the browser installs."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch

import rl_ops_numpy
from browser_runtime.exercises import LAYOUTS, Draw, Exercise, mask
from site_build import wheel

from .conftest import EXERCISES, LESSONS


def _as_torch(value, dtype):
    return torch.tensor(value, dtype=dtype) if isinstance(value, np.ndarray) else value


def _as_numpy(value) -> object:
    if isinstance(value, tuple):
        return tuple(_as_numpy(v) for v in value)
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_reference_agrees_with_the_pytorch_solution_on_the_exercises_own_inputs(
    exercise_id, dtype
):
    exercise, solution = EXERCISES[exercise_id], LESSONS[exercise_id].load_function()
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-5}
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    for case in range(3 * len(LAYOUTS)):  # every mask layout three times, sizes from 1 × 1
        inputs = exercise.inputs(7, case, dtype=dtype)
        want = exercise.expected(inputs)
        got = _as_numpy(solution(*[_as_torch(v, tdtype) for v in inputs.values()]))
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, np.asarray(w), equal_nan=True, **tol,
                                       err_msg=f"case {case}: {inputs}")


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_each_exercise_names_a_reference_titles_in_both_languages_and_its_function(exercise_id):
    exercise = EXERCISES[exercise_id]
    assert callable(getattr(rl_ops_numpy, exercise.reference))
    assert set(exercise.title) == {"en", "zh"} and all(exercise.title.values())
    assert exercise.function == LESSONS[exercise_id].name
    assert exercise.id == exercise_id == LESSONS[exercise_id].id
    # the inputs name the function's parameters, in order (the learner's is called positionally)
    params = list(LESSONS[exercise_id].function.args.args)
    names = list(exercise.inputs(0, 1))
    assert names == [p.arg for p in params[: len(names)]]


def test_draw_is_deterministic_starts_at_one_by_one_and_cycles_the_mask_layouts():
    a, b = Draw(3, 5), Draw(3, 5)
    assert np.array_equal(a.normal((2, 3)), b.normal((2, 3)))
    assert a.size() == b.size()
    assert Draw(3, 0).size() == (1, 1) and Draw(3, 0).length(2) == 2
    assert [Draw(0, case).layout for case in range(len(LAYOUTS) + 1)] == [*LAYOUTS, LAYOUTS[0]]
    assert Draw(0, 0, size=(8, 33)).size() == (8, 33)
    assert Draw(1, 2, dtype=np.float64).normal(3).dtype == np.float64


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_mask_layout_is_what_its_name_says(layout):
    rng = np.random.default_rng(0)
    m = mask(rng, 64, 9, layout)
    assert set(np.unique(m)) <= {0.0, 1.0}
    if layout == "full":
        assert m.all()
    elif layout == "all_zero":
        assert not m.any()
    elif layout == "right":
        assert all(row[0] == 1 and np.all(np.diff(row) <= 0) for row in m)
    elif layout == "left":
        assert all(row[-1] == 1 and np.all(np.diff(row) >= 0) for row in m)
    elif layout == "zero_rows":
        assert (~m.any(axis=1)).any() and m.any(axis=1).any()


CHECK = '''
TITLE = {"en": "Ratio", "zh": "比值"}
REFERENCE = "importance_ratio"


def inputs(draw):
    return {"x": draw.normal(2)}
'''


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (CHECK.replace('TITLE = {"en": "Ratio", "zh": "比值"}\n', ""), "does not set TITLE"),
        (CHECK.replace('REFERENCE = "importance_ratio"', "REFERENCE = 3"), "wrong type"),
        (CHECK.replace('"zh": "比值"', '"fr": "Ratio"'), "one title per language"),
        (CHECK + "TIMEOUTS = 3\n", "sets ['TIMEOUTS']"),
        (CHECK.replace("def inputs(draw)", "def make(draw)"), "does not define inputs"),
        (CHECK + "def (\n", "not valid Python"),
    ],
    ids=["no-title", "reference-type", "languages", "unknown-constant", "no-inputs", "syntax"],
)
def test_a_malformed_check_section_is_refused_with_the_exercise_and_the_reason(source, error):
    with pytest.raises(ValueError, match=r"ppo/x: the check section.*") as info:
        Exercise.parse("ppo/x", "x", source)
    assert error in str(info.value)


def test_the_wheel_carries_the_manifest_and_check_finds_exercises_in_it_by_id(tmp_path):
    name, data = wheel.build(list(EXERCISES.values()))
    (tmp_path / name).write_bytes(data)
    with zipfile.ZipFile(tmp_path / name) as whl:
        names = whl.namelist()
        manifest = json.loads(whl.read("browser_runtime/exercises.json"))
        whl.extractall(tmp_path / "site-packages")
    assert {e["id"] for e in manifest} == set(EXERCISES)
    assert not [n for n in names if n.startswith("site_build/")]  # no build code for readers
    assert wheel.build(list(EXERCISES.values()))[1] == data  # the same sources, the same bytes
    lesson = LESSONS["ppo/importance_ratio"]
    unpacked = str(tmp_path / "site-packages")
    script = (
        f"import sys, json; sys.path.insert(0, {unpacked!r})\n"
        "from browser_runtime import check\n"
        f"assert check.__file__.startswith({unpacked!r}), check.__file__\n"
        "print(json.dumps(check.check('ppo/importance_ratio', sys.stdin.read())))\n"
    )
    # the unpacked wheel first on the path (torch is the real one: Check calls it with tensors)
    proc = subprocess.run(
        [sys.executable, "-c", script], input=lesson.exercise(blanked=False),
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["passed"] == result["total"] > 0, result
