"""The Python the browser worker runs for Run and Check, tested under CPython with real torch."""

from __future__ import annotations

import pytest

from rl_ops_numpy.browser.check import SPECS, check
from rl_ops_numpy.browser.runner import run_cell

from .conftest import LESSONS


def _cell(stem: str, exercise: str | None = None) -> tuple[str, list[dict]]:
    """The cell as the page sends it: exercise then test, with their parts."""
    lesson = LESSONS[stem]
    ex = exercise if exercise is not None else lesson.exercise(blanked=False)
    test = lesson.test()
    code = ex.rstrip("\n") + "\n\n" + test
    parts = [
        {"name": "exercise", "first": 1, "length": ex.rstrip("\n").count("\n") + 1},
        {"name": "test", "first": ex.rstrip("\n").count("\n") + 3, "length": test.count("\n") + 1},
    ]
    return code, parts


def test_every_exercise_has_a_check_spec():
    assert set(SPECS) == set(LESSONS)


def test_run_prints_the_lesson_output(capsys):
    code, parts = _cell("ppo/policy_surrogate_loss")
    assert run_cell(code, parts)
    assert (
        capsys.readouterr().out
        == LESSONS["ppo/policy_surrogate_loss"].path.with_suffix(".out").read_text()
    )


def test_syntax_error_points_at_the_learners_line(capsys):
    ex = LESSONS["ppo/importance_ratio"].exercise(blanked=True)
    broken = ex.replace("log_ratio = _____", "log_ratio = new_logprobs -", 1)
    code, parts = _cell("ppo/importance_ratio", broken)
    assert not run_cell(code, parts)
    err = capsys.readouterr().err
    line = broken.split("\n").index("    log_ratio = new_logprobs -") + 1
    assert f"(exercise, line {line})" in err
    assert "log_ratio = new_logprobs -" in err and "^" in err
    assert "runner.py" not in err and "<cell>" not in err


def test_traceback_shows_only_the_learners_frames(capsys):
    code = "def f(x):\n    return x.nope()\n\nf(1)\n"
    assert not run_cell(code, [{"name": "exercise", "first": 1, "length": 4}])
    err = capsys.readouterr().err
    assert "exercise, line 4" in err and "exercise, line 2, in f" in err
    assert "return x.nope()" in err and "AttributeError" in err
    assert "runner.py" not in err and "File" not in err


def test_an_unfilled_blank_is_named(capsys):
    code, parts = _cell("ppo/importance_ratio", LESSONS["ppo/importance_ratio"].exercise())
    assert not run_cell(code, parts)
    err = capsys.readouterr().err
    assert "NameError" in err and "fill it in" in err and "in importance_ratio" in err


def test_shape_mismatch_names_the_shapes(capsys):
    code = "import torch\na = torch.zeros(2, 5)\nb = torch.zeros(2, 6)\nprint(a + b)\n"
    assert not run_cell(code)
    err = capsys.readouterr().err
    assert "cell, line 4" in err and "(5)" in err and "(6)" in err


def test_stop_propagates_past_the_cell_so_the_page_reports_it_in_its_language(capsys):
    # the worker turns Stop's SIGINT into KeyboardInterrupt; the learner's output stays printed
    with pytest.raises(KeyboardInterrupt):
        run_cell("print('before')\nraise KeyboardInterrupt\n")
    out = capsys.readouterr()
    assert out.out == "before\n" and out.err == ""


@pytest.mark.parametrize("stem", sorted(LESSONS))
def test_check_accepts_the_solution(stem):
    lesson = LESSONS[stem]
    result = check(stem, lesson.exercise(blanked=False), lesson.name)
    assert result["error"] is None and result["passed"] == result["total"], result["failures"]


@pytest.mark.parametrize(
    ("stem", "old", "new"),
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
def test_check_accepts_equivalent_spellings(stem, old, new):
    lesson = LESSONS[stem]
    code = lesson.exercise(blanked=False)
    assert old in code
    result = check(stem, code.replace(old, new, 1), lesson.name)
    assert result["passed"] == result["total"], result["failures"]


@pytest.mark.parametrize(
    ("stem", "old", "new"),
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
def test_check_rejects_wrong_answers_and_shows_the_inputs(stem, old, new):
    lesson = LESSONS[stem]
    code = lesson.exercise(blanked=False)
    assert old in code
    result = check(stem, code.replace(old, new, 1), lesson.name)
    assert result["passed"] < result["total"]
    first = result["failures"][0]
    assert first["inputs"] and first["expected"] and first["reason"]


def test_check_reports_a_syntax_error_instead_of_cases():
    result = check("ppo/importance_ratio", "def importance_ratio(:\n", "importance_ratio")
    assert result["passed"] == 0 and "SyntaxError" in result["error"]


# ---- the same code paths under the NumPy torch layer, as the browser runs them ----------------


@pytest.mark.parametrize("stem", sorted(LESSONS))
def test_under_the_torch_layer_run_prints_the_lesson_output_and_check_accepts(stem, capsys):
    from rl_ops_numpy.browser import torch_layer_installed

    lesson = LESSONS[stem]
    code, parts = _cell(stem)
    with torch_layer_installed():
        assert run_cell(code, parts)
        result = check(stem, lesson.exercise(blanked=False), lesson.name)
    assert capsys.readouterr().out == lesson.path.with_suffix(".out").read_text()
    assert result["error"] is None and result["passed"] == result["total"], result["failures"]


def test_under_the_torch_layer_check_rejects_a_wrong_answer():
    from rl_ops_numpy.browser import torch_layer_installed

    lesson = LESSONS["ppo/shape_token_rewards"]
    wrong = lesson.exercise(blanked=False).replace(
        "(response_mask * torch.arange(T)).argmax(dim=-1)", "response_mask.sum(dim=-1).long() - 1"
    )
    with torch_layer_installed():
        result = check("ppo/shape_token_rewards", wrong, lesson.name)
    assert 0 < result["passed"] < result["total"] and result["failures"][0]["inputs"]


def test_under_the_torch_layer_shape_mismatch_names_the_shapes(capsys):
    from rl_ops_numpy.browser import torch_layer_installed

    with torch_layer_installed():
        assert not run_cell("import torch\nprint(torch.zeros(2, 5) + torch.zeros(2, 6))\n")
    err = capsys.readouterr().err
    assert "cell, line 2" in err and "RuntimeError" in err and "[2, 5] and [2, 6]" in err
