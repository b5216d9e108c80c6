"""The Python the browser worker runs for Run and Check, tested under CPython with real torch."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from browser_runtime import check as checker
from browser_runtime.check import check
from browser_runtime.runner import run_cell

from .conftest import EXERCISES, LESSONS


def _cell(exercise_id: str, exercise: str | None = None) -> tuple[str, list[dict]]:
    """The cell as the page sends it: exercise then test, with their parts."""
    lesson = LESSONS[exercise_id]
    ex = exercise if exercise is not None else lesson.exercise(blanked=False)
    test = lesson.test()
    code = ex.rstrip("\n") + "\n\n" + test
    parts = [
        {"name": "exercise", "first": 1, "length": ex.rstrip("\n").count("\n") + 1},
        {"name": "test", "first": ex.rstrip("\n").count("\n") + 3, "length": test.count("\n") + 1},
    ]
    return code, parts


def test_run_prints_the_lesson_output(capfd):
    code, parts = _cell("ppo/policy_surrogate_loss")
    assert run_cell(code, parts)["ok"]
    assert (
        capfd.readouterr().out
        == LESSONS["ppo/policy_surrogate_loss"].path.with_suffix(".out").read_text()
    )


def test_syntax_error_points_at_the_learners_line(capfd):
    ex = LESSONS["ppo/importance_ratio"].exercise(blanked=True)
    broken = ex.replace("log_ratio = _____", "log_ratio = new_logprobs -", 1)
    code, parts = _cell("ppo/importance_ratio", broken)
    assert not run_cell(code, parts)["ok"]
    err = capfd.readouterr().err
    line = broken.split("\n").index("    log_ratio = new_logprobs -") + 1
    assert f"(exercise, line {line})" in err
    assert "log_ratio = new_logprobs -" in err and "^" in err
    assert "runner.py" not in err and "<cell>" not in err


def test_traceback_shows_only_the_learners_frames(capfd):
    code = "def f(x):\n    return x.nope()\n\nf(1)\n"
    assert run_cell(code, [{"name": "exercise", "first": 1, "length": 4}]) == {
        "ok": False, "slip": None}
    err = capfd.readouterr().err
    assert "exercise, line 4" in err and "exercise, line 2, in f" in err
    assert "return x.nope()" in err and "AttributeError" in err
    assert "runner.py" not in err and "File" not in err


BROKEN_STDERR = {
    "replaced and closed": "import sys, io\nsys.stderr = io.StringIO()\nsys.stderr.close()\n",
    "not a stream": "import sys\nsys.stderr = None\n",
    # the lowest limit Python takes where the learner's code stands: no room for the site's
    "a short stack": "import sys\nn = sys.getrecursionlimit()\nwhile True:\n    try:\n"
                     "        sys.setrecursionlimit(n - 1)\n    except RecursionError:\n"
                     "        break\n    n -= 1\n",
    "an error whose str raises": "class E(Exception):\n    def __str__(self):\n"
                                 "        raise RuntimeError\n",
}


@pytest.mark.parametrize("what", sorted(BROKEN_STDERR))
def test_the_learners_error_is_said_past_what_their_code_did_to_stderr(capfd, monkeypatch, what):
    """The error goes to the job's fd 2 (js/worker.js reads it), not through sys.stderr: their
    code broke it, and the site's code raised in turn, which the page then blamed on itself."""
    monkeypatch.setattr("sys.stderr", sys.stderr)  # put back after the test
    limit = sys.getrecursionlimit()
    raised = "raise E" if "str" in what else "1 / 0"
    code = BROKEN_STDERR[what] + f"{raised}\n"
    try:
        ran = run_cell(code, [{"name": "exercise", "first": 1, "length": code.count("\n")}])
    finally:
        sys.setrecursionlimit(limit)
    assert ran == {"ok": False, "slip": None}
    err = capfd.readouterr().err
    assert ("ZeroDivisionError" if raised == "1 / 0" else "E") in err, err
    assert f"exercise, line {code.count(chr(10))}" in err or "str" in what, err


def test_an_unfilled_blank_is_named_as_the_slip_blank_which_the_page_words(capfd):
    code, parts = _cell("ppo/importance_ratio", LESSONS["ppo/importance_ratio"].exercise())
    assert run_cell(code, parts) == {"ok": False, "slip": "blank"}
    err = capfd.readouterr().err
    assert "NameError" in err and "_____" in err and "in importance_ratio" in err
    assert "Hint" not in err  # a sentence of the site's is the page's to say, in its language


def test_shape_mismatch_names_the_shapes(capfd):
    code = "import torch\na = torch.zeros(2, 5)\nb = torch.zeros(2, 6)\nprint(a + b)\n"
    assert not run_cell(code)["ok"]
    err = capfd.readouterr().err
    assert "cell, line 4" in err and "(5)" in err and "(6)" in err


def test_stop_propagates_past_the_cell_so_the_page_reports_it_in_its_language(capfd):
    # the worker turns Stop's SIGINT into KeyboardInterrupt; the learner's output stays printed
    with pytest.raises(KeyboardInterrupt):
        run_cell("print('before')\nraise KeyboardInterrupt\n")
    out = capfd.readouterr()
    assert out.out == "before\n" and out.err == ""


def _check_edited(exercise_id: str, old: str, new: str) -> dict:
    """Check's result on the lesson's solution with ``old`` (which must be in it) made ``new``."""
    code = LESSONS[exercise_id].exercise(blanked=False)
    assert old in code
    return check(EXERCISES[exercise_id], code.replace(old, new, 1))


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_check_accepts_the_solution(exercise_id):
    lesson = LESSONS[exercise_id]
    result = check(EXERCISES[exercise_id], lesson.exercise(blanked=False))
    assert result["error"] is None and result["passed"] == result["total"], result["failures"]


@pytest.mark.parametrize(
    ("exercise_id", "old", "new"),
    [
        ("ppo/importance_ratio", "log_ratio.exp()", "torch.exp(log_ratio)"),
        (
            "ppo/policy_surrogate_loss",
            "torch.maximum(unclipped, clipped)",
            "torch.max(unclipped, clipped)",
        ),
        ("ppo/compute_gae", "reversed(range(T))", "range(T - 1, -1, -1)"),
        ("ppo/kl_estimators", "0.5 * log_r ** 2", "log_r * log_r / 2"),
        (
            "s21/ppo_clipped_objective",
            "torch.min(surr1, surr2).mean()",
            "torch.minimum(surr1, surr2).mean()",
        ),
    ],
)
def test_check_accepts_equivalent_spellings(exercise_id, old, new):
    result = _check_edited(exercise_id, old, new)
    assert result["passed"] == result["total"], result["failures"]


@pytest.mark.parametrize(
    ("exercise_id", "old", "new"),
    [
        ("ppo/importance_ratio", "new_logprobs - old_logprobs", "old_logprobs - new_logprobs"),
        (
            "ppo/policy_surrogate_loss",
            "torch.maximum(unclipped, clipped)",
            "torch.minimum(unclipped, clipped)",
        ),
        ("ppo/compute_gae", "gamma * lam * gae", "lam * gae"),
        (
            "ppo/shape_token_rewards",
            "(response_mask * torch.arange(T)).argmax(dim=-1)",
            "response_mask.sum(dim=-1).long() - 1",
        ),
        ("s21/dpo_loss", "-F.logsigmoid(diff)", "F.logsigmoid(-diff)"),
    ],
)
def test_check_rejects_wrong_answers_and_shows_the_inputs(exercise_id, old, new):
    result = _check_edited(exercise_id, old, new)
    assert result["passed"] < result["total"]
    first = result["failures"][0]
    assert first["inputs"] and first["expected"] and first["reason"]


def test_checks_reasons_are_codes_with_their_values_for_the_page_to_word():
    """Check answers in data (the page words it in its language): shape, count, values (the
    first place's two values), the k-th output, a tuple for one tensor, the learner's
    exception."""
    from browser_runtime.check import _differs

    ex = EXERCISES["ppo/importance_ratio"]
    a = np.zeros((2, 3))
    assert _differs(np.zeros((2, 4)), a, ex) == {"code": "shape", "got": [2, 4], "expected": [2, 3]}
    b = a.copy()
    b[1, 2] = np.nan
    first = {"got": "nan", "expected": "0"}
    assert _differs(b, a, ex) == {"code": "values", "at": [[1, 2]], "first": first}
    assert _differs(np.array(1.0), np.array(0.0), ex) == {"code": "values", "at": []}
    assert _differs((a, b), (a, a), ex) == {"code": "values", "at": [[1, 2]], "first": first,
                                            "output": 2}
    assert _differs(a, (a, a), ex) == {"code": "count", "got": 1, "expected": 2}
    assert _differs((a, a), a, ex) == {"code": "tuple", "got": 2, "expected": [2, 3]}
    raising = "def importance_ratio(*args):\n    raise ValueError('no')\n"
    failure = check(ex, raising)["failures"][0]
    reason = failure["reason"]
    assert reason["code"] == "raised" and "ValueError: no" in reason["message"]


def test_check_reports_a_syntax_error_instead_of_cases():
    result = check(EXERCISES["ppo/importance_ratio"], "def importance_ratio(:\n")
    error = result["error"]
    assert result["passed"] == 0 and error["code"] == "raised" and "SyntaxError" in error["message"]


def test_a_keyboard_interrupt_of_the_learners_own_is_their_error_in_their_terms():
    """Check does not end in the site's error: the learner's KeyboardInterrupt (no Stop was
    pressed: a Stop ends the job as stopped, whatever Check returns) is reported as theirs."""
    code = "def importance_ratio(*args):\n    raise KeyboardInterrupt\n"
    result = check(EXERCISES["ppo/importance_ratio"], code)
    assert result["passed"] == 0 and not result["failures"]
    assert result["error"]["message"].splitlines()[-1] == "KeyboardInterrupt"
    assert "cell, line 2, in importance_ratio" in result["error"]["message"]


def test_what_the_learners_code_changed_that_breaks_check_is_their_error():
    """A patch that breaks drawing the inputs (the learner's code ran first) is reported as the
    learner's error, with the exception, not raised out of Check as the site's."""
    import browser_runtime.exercises as exercises

    draw = exercises.Draw
    code = ("import browser_runtime.exercises as e\ne.Draw = None\n"
            "def importance_ratio(*args):\n    return args[0]\n")
    try:
        result = check(EXERCISES["ppo/importance_ratio"], code)
    finally:
        exercises.Draw = draw
    assert result["passed"] == 0 and "TypeError" in result["error"]["message"]


def test_check_draws_from_the_seed_it_is_given_so_a_table_of_one_seeds_answers_fails():
    """The page gives every Check a fresh seed: a "function" that looks its answers up in a
    table of seed 0's cases passes Check at seed 0 only; the result names the seed."""
    import dataclasses

    import rl_ops_numpy

    # values only here: a table has no gradient, which Check compares too (asserted below)
    ex = dataclasses.replace(EXERCISES["ppo/importance_ratio"], gradient=())
    table = {}
    for case in range(36):
        inputs = ex.inputs(0, case)
        key = inputs["new_logprobs"].tobytes()
        table[key] = rl_ops_numpy.importance_ratio(**inputs)
    code = ("import torch\nTABLE = TABLE_FROM_TEST\n"
            "def importance_ratio(new_logprobs, old_logprobs, mask):\n"
            "    return torch.tensor(TABLE.get(new_logprobs.numpy().tobytes(), 0.0))\n")
    import builtins
    builtins.TABLE_FROM_TEST = table
    try:
        at_zero = check(ex, code, seed=0)
        fresh = check(ex, code, seed=12345)
        graded = check(EXERCISES["ppo/importance_ratio"], code, seed=0)
    finally:
        del builtins.TABLE_FROM_TEST
    assert at_zero["passed"] == at_zero["total"] and at_zero["seed"] == 0
    assert graded["passed"] < graded["total"]
    assert fresh["passed"] < fresh["total"] and fresh["seed"] == 12345


# ---- the same code paths under the NumPy torch layer, as the browser runs them ----------------


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_under_the_torch_layer_run_prints_the_lesson_output_and_check_accepts(exercise_id, capfd):
    from browser_runtime import torch_layer_installed

    lesson = LESSONS[exercise_id]
    code, parts = _cell(exercise_id)
    with torch_layer_installed():
        assert run_cell(code, parts)["ok"]
        result = check(EXERCISES[exercise_id], lesson.exercise(blanked=False))
    assert capfd.readouterr().out == lesson.path.with_suffix(".out").read_text()
    assert result["error"] is None and result["passed"] == result["total"], result["failures"]


def test_under_the_torch_layer_check_rejects_a_wrong_answer():
    from browser_runtime import torch_layer_installed

    lesson = LESSONS["ppo/shape_token_rewards"]
    wrong = lesson.exercise(blanked=False).replace(
        "(response_mask * torch.arange(T)).argmax(dim=-1)", "response_mask.sum(dim=-1).long() - 1"
    )
    with torch_layer_installed():
        result = check(EXERCISES["ppo/shape_token_rewards"], wrong)
    assert 0 < result["passed"] < result["total"] and result["failures"][0]["inputs"]


def test_under_the_torch_layer_shape_mismatch_names_the_shapes(capfd):
    from browser_runtime import torch_layer_installed

    with torch_layer_installed():
        assert not run_cell("import torch\nprint(torch.zeros(2, 5) + torch.zeros(2, 6))\n")["ok"]
    err = capfd.readouterr().err
    assert "cell, line 2" in err and "RuntimeError" in err and "[2, 5] and [2, 6]" in err


# ---- the smallest failing case ------------------------------------------------------------------


def _scaled(exercise_id: str) -> str:
    """A deliberately wrong answer to any exercise: the right one, its result times 1.5."""
    lesson = LESSONS[exercise_id]
    name = EXERCISES[exercise_id].function
    return lesson.exercise(blanked=False) + (
        f"\n\n_right = {name}\n\n\ndef {name}(*args):\n    out = _right(*args)\n"
        "    return tuple(o * 1.5 for o in out) if isinstance(out, tuple) else out * 1.5\n"
    )


def _size(inputs: dict) -> int:
    return sum(v.size for v in inputs.values() if isinstance(v, np.ndarray))


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_a_wrong_answer_is_shown_on_its_smallest_failing_case(exercise_id):
    from browser_runtime import check as checker

    ex = EXERCISES[exercise_id]
    outputs, error, shrunk, _ = checker.learner_outputs(ex, _scaled(exercise_id))
    assert error is None and shrunk is not None
    case, small, raw = shrunk
    drawn = ex.inputs(0, case)
    # still wrong there, by the reference; no bigger than the case as drawn; rounder or smaller
    assert checker._wrong(raw, checker._want(ex, small), ex)
    assert _size(small) <= _size(drawn)
    simpler = _size(small) < _size(drawn) or any(
        isinstance(v, np.ndarray) and not np.array_equal(v, drawn[k]) for k, v in small.items()
    )
    assert simpler or _size(drawn) <= 2, (drawn, small)
    result = checker.verdict(ex, (outputs, error, shrunk))
    (failure,) = result["failures"]
    assert failure["shrunk"] and failure["case"] == case + 1 and failure["reason"]


def test_the_shrunk_case_never_changes_the_count_and_a_forged_one_is_not_shown():
    from browser_runtime import check as checker

    ex = EXERCISES["ppo/importance_ratio"]
    outputs, error, shrunk, _ = checker.learner_outputs(ex, _scaled("ppo/importance_ratio"))
    plain = checker.verdict(ex, (outputs, error, None))
    shown = checker.verdict(ex, (outputs, error, shrunk))
    assert plain["passed"] == shown["passed"] < plain["total"]
    assert not plain["failures"][0]["shrunk"] and shown["failures"][0]["shrunk"]
    case, small, _ = shrunk
    # phase 1 ran the learner's code: a "failing case" whose output is in fact right, inputs
    # with other names, or a dict of another class are not shown; the case as drawn is
    right = checker._want(ex, small)
    for forged in [(case, small, right), (case, {"x": small["mask"]}, shrunk[2]),
                   (case, type("D", (dict,), {})(small), shrunk[2]), (10**6, small, shrunk[2])]:
        result = checker.verdict(ex, (outputs, error, forged))
        assert result["failures"] == plain["failures"], forged


# ---- the judge: phase 3 from plain data, in an interpreter the learner's code never touched -----


def _judged(exercise_id: str, code: str, seed: int = 7) -> dict:
    from browser_runtime import check as checker

    ex = EXERCISES[exercise_id]
    plain = checker.plain_phase1(checker.learner_outputs(ex, code, seed=seed))
    return checker.judge(ex, plain, seed=seed)


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_the_judge_on_plain_data_gives_the_verdict_check_gives(exercise_id):
    """Right and wrong answers: the same counts, failure and reason from the plain data the
    learner's worker hands over as from the outputs themselves."""
    lesson = LESSONS[exercise_id]
    right = lesson.exercise(blanked=False)
    answers = [b.answer for b in lesson.blanks]
    wrong = right.replace(answers[-1], f"({' '.join(answers[-1].split())}) * 1.5", 1)
    assert wrong != right
    for code in (right, wrong, "def nothing(): pass\n"):
        assert _judged(exercise_id, code) == check(EXERCISES[exercise_id], code, seed=7)


def test_the_judge_reads_only_plain_values_and_names_the_rest_the_learners():
    from browser_runtime import check as checker

    ex = EXERCISES["ppo/importance_ratio"]
    good = checker.plain_phase1(checker.learner_outputs(
        ex, LESSONS["ppo/importance_ratio"].exercise(blanked=False), seed=3))
    assert checker.judge(ex, good, seed=3)["passed"] == 36
    forged = [{"shape": [2], "data": [1.0]}, {"shape": [1], "data": ["1"]},
              {"shape": [1], "data": [1.0], "extra": 1}, {"__float__": 1}, "36/36", None]
    result = checker.judge(ex, {**good, "outputs": forged * 6}, seed=3)
    assert result["passed"] == 0 and result["failures"][0]["reason"]["code"] == "type"
    assert checker.judge(ex, "not a dict", seed=3)["passed"] == 0


def test_an_output_far_larger_than_the_inputs_allow_is_refused_by_its_shape_in_phase_one():
    """36 × 10⁶ values once froze the page: phase 1 keeps only the shape of an output with more
    than LARGE_FACTOR times the largest input's values, and the judge reports that shape."""
    ex = EXERCISES["ppo/importance_ratio"]
    code = ("import torch\n\ndef importance_ratio(new, old, mask):\n"
            "    return torch.zeros(300, 300)\n")
    phase1 = checker.learner_outputs(ex, code, seed=5)
    plain = checker.plain_phase1(phase1)
    assert all(o == {"shape": [300, 300], "oversized": True} for o in plain["outputs"])
    result = checker.judge(ex, plain, seed=5)
    reason = result["failures"][0]["reason"]
    assert result["passed"] == 0 and reason["code"] == "shape" and reason["got"] == [300, 300]


def test_a_tuple_where_one_tensor_is_wanted_is_said_so():
    ex = EXERCISES["ppo/importance_ratio"]
    code = ("def importance_ratio(new, old, mask):\n"
            "    r = (new - old).masked_fill(mask == 0, 0).exp()\n    return r, r\n")
    reason = check(ex, code, seed=1)["failures"][0]["reason"]
    assert reason["code"] == "tuple" and reason["got"] == 2 and len(reason["expected"]) == 2
