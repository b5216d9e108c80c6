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
from site_build.languages import LANGUAGES

from .conftest import EXERCISES, LESSONS


def _as_torch(value, dtype):
    """Float arrays in ``dtype``; integer arrays (token ids) keep their own."""
    if not isinstance(value, np.ndarray):
        return value
    return torch.tensor(value, dtype=dtype if value.dtype.kind == "f" else None)


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


def test_the_draws_exercises_share_have_the_shapes_and_values_they_promise():
    shapes, groups, values = set(), set(), set()
    for case in range(1, 40):
        draw = Draw(5, case)
        G, N = draw.groups(3)
        assert N % G == 0 and 1 <= N // G <= 3
        groups.add(G)
        values.add(frozenset(np.unique(draw.scores(64))) <= {0.0, 1.0})
        shapes.add(draw.advantages(2, 5).shape)
    assert groups == {2, 3, 4, 8}
    assert values == {True, False}  # a verifier's 0/1, or a reward model's real numbers
    assert shapes == {(2,), (2, 5)}  # one advantage per response, or one per token


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
        Exercise.parse("ppo/x", "x", source, LANGUAGES)
    assert error in str(info.value)


def test_the_reference_is_the_function_of_the_same_name_unless_the_section_names_another():
    plain = CHECK.replace('REFERENCE = "importance_ratio"\n', "")
    assert Exercise.parse("ppo/x", "x", plain, LANGUAGES).reference == "x"
    assert Exercise.parse("ppo/x", "x", CHECK, LANGUAGES).reference == "importance_ratio"


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


# ---- the lesson in each language ------------------------------------------------------------

TRANSLATED = '''# --8<-- [start:exercise]
import torch


def ratio(new_logprobs, old_logprobs, mask):
    """The importance ratio, 1 on padding."""
    # TODO 1: exp of the masked log-ratio
    return (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()
# --8<-- [end:exercise]


# --8<-- [start:test]
mask = torch.tensor([[1.0, 0.0]])
print(f"ratio on padding: {ratio(torch.zeros(1, 2), torch.ones(1, 2), mask)[0, 1]}")
# --8<-- [end:test]


# --8<-- [start:zh]
ZH = {
    "The importance ratio, 1 on padding.": "重要性采样比，padding 上为 1。",
    "exp of the masked log-ratio": "对掩码后的对数比取 exp",
    "ratio on padding: ": "padding 上的比值：",
}
# --8<-- [end:zh]
'''


def test_the_chinese_text_translates_comments_docstrings_and_printed_words_only(tmp_path):
    from site_build.lessons import translate

    zh = translate(TRANSLATED, tmp_path / "ratio.py", "zh")
    assert '"""重要性采样比，padding 上为 1。"""' in zh
    assert "# TODO 1: 对掩码后的对数比取 exp" in zh
    assert 'print(f"padding 上的比值：{ratio(' in zh
    # the code, the zh section and the line count are untouched
    back = zh.replace("重要性采样比，padding 上为 1。", "The importance ratio, 1 on padding.", 1)
    back = back.replace("对掩码后的对数比取 exp", "exp of the masked log-ratio", 1)
    assert back.replace('f"padding 上的比值：', 'f"ratio on padding: ', 1) == TRANSLATED


def test_what_every_docstring_says_alike_is_translated_without_the_files_own_table(tmp_path):
    from site_build.lessons import SHARED_TABLE, translate

    returns = '1 on padding.\n\n    Returns:\n        ρ\n    """'
    text = TRANSLATED.replace('1 on padding."""', returns)
    zh = translate(text, tmp_path / "ratio.py", "zh")
    assert f"    {SHARED_TABLE['zh']['Returns:']}\n        ρ\n" in zh
    assert "Returns:" not in zh


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("# TODO 1: exp of the masked log-ratio", "# TODO 1: exp of the masked log-ratio, now"),
         r"ratio\.py:7: no zh for 'TODO 1: exp of the masked log-ratio, now' "
         r"\(English left: now\)"),
        (('print(f"ratio on padding: ', 'print(f"ratio at the padding: '),
         r"ratio\.py:14: no zh for .*ratio at the padding"),
        (('mask = torch.tensor([[1.0, 0.0]])', 'mask = torch.tensor([[1.0, 0.0]])  # one pad'),
         r"ratio\.py:13: no zh for 'one pad'"),
        (('    "ratio on padding: "',
          '    "ratio at the end: ": "末尾：",\n    "ratio on padding: "'),
         r"ratio\.py:\d+: ZH key 'ratio at the end: ' matches no comment, docstring or printed"),
        (('    "ratio on padding: "', '    "mask)[0": "x)[0",\n    "ratio on padding: "'),
         r"ratio\.py: the zh translation changes code"),
        (('"padding 上的比值："', '"padding 上的" + "比值："'),
         r"ratio\.py:\d+: ZH must be a literal dict"),
    ],
    ids=["comment-grew", "print-changed", "new-comment", "stale-key", "changes-code",
         "not-literal"],
)
def test_a_missing_stale_or_code_changing_translation_names_the_file_and_line(
    change, error, tmp_path
):
    from site_build.lessons import Lesson, TranslationError

    path = tmp_path / "ratio.py"
    old, new = change
    assert old in TRANSLATED
    lesson = Lesson(path, TRANSLATED.replace(old, new, 1))
    with pytest.raises(TranslationError, match=error):
        lesson.in_language("zh")


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_each_lesson_in_chinese_is_the_same_exercise_with_chinese_instructions(exercise_id):
    import re

    en = LESSONS[exercise_id]
    zh = en.in_language("zh")
    assert zh.in_language("en") is en and en.in_language("zh") is zh
    # the same code: blanks, answers, drill, manifest, saved-work version, line numbers
    assert [(b.answer, b.start, b.end) for b in zh.blanks] == [
        (b.answer, b.start, b.end) for b in en.blanks]
    assert zh.drill_code == en.drill_code and zh.version == en.version
    assert zh.manifest == en.manifest and zh.name == en.name
    assert zh.exercise().count("\n") == en.exercise().count("\n")
    # the instructions in Chinese: the docstring, and every TODO that has words
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert cjk.search(zh.exercise().split('"""')[1])
    for b_en, b_zh in zip(en.blanks, zh.blanks, strict=True):
        assert b_zh.todo == b_en.todo or cjk.search(b_zh.todo), b_zh.todo
        if re.search(r"\b[a-z]{3,} [a-z]{2,}\b", b_en.todo.replace("log", "")):
            assert cjk.search(b_zh.todo), f"{exercise_id}: {b_en.todo} is not translated"
