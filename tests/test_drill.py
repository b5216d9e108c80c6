"""The drill's tokens: the source site's counts, and markup that matches the code exactly."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from site_build.drill import count, drill_html, slots

from .conftest import EXERCISES, LESSONS

SEED = Path(__file__).parent / "data" / "seed_drill"

# "共 N 个可挖空位" as the source material prints it for its six snippets
SOURCE_COUNTS = {
    "importance_ratio": 17,
    "compute_gae": 51,
    "policy_surrogate_loss": 35,
    "value_clipped_loss": 36,
    "kl_estimators": 20,
    "shape_token_rewards": 31,
}


@pytest.mark.parametrize(("name", "expected"), SOURCE_COUNTS.items())
def test_counts_reproduce_the_source_on_its_own_snippets(name, expected):
    assert count((SEED / f"{name}.py.txt").read_text()) == expected


def test_default_rule_is_names_numbers_strings_of_two_or_more_characters():
    code = 'x = foo(1, 23, "a", "bc") - t  # comment words\n'
    assert [s.text for s in slots(code) if not s.extended] == ["foo", "23", '"a"', '"bc"']
    assert {s.text for s in slots(code) if s.extended} == {"x", "1", "-", "t"}


def _slot_texts(markup: str) -> list[str]:
    found = re.findall(r'<span class="rl-slot" data-slot-index="(\d+)">(.*?)</span></span>', markup)
    return [unescape(re.sub(r"<[^>]+>", "", inner)) for _, inner in found]


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_site_snippet_markup_marks_exactly_its_tokens(exercise_id):
    lesson = LESSONS[exercise_id]
    code = lesson.drill_code
    markup = drill_html(exercise_id, code, "import torch")
    data = json.loads(re.search(r"<script[^>]*>(.*?)</script>", markup, re.S).group(1))
    pre = re.search(r"<code>(.*)</code>", markup, re.S).group(1)
    assert unescape(re.sub(r"<[^>]+>", "", pre)) == code  # highlighting loses nothing
    assert _slot_texts(pre) == [s["text"] for s in data["slots"]]
    # the offsets the program is built from point at the slots' text (in UTF-16 units, as JS)
    units = code.encode("utf-16-le")
    for s in data["slots"]:
        assert units[2 * s["start"]:2 * s["end"]].decode("utf-16-le") == s["text"]
    assert count(code) == sum(1 for s in data["slots"] if not s["extended"])
    assert count(code, extended=True) == len(data["slots"]) > count(code)
    assert data["id"] == exercise_id and data["code"] == code


def test_the_drill_ships_only_what_its_widget_reads():
    code = LESSONS["ppo/importance_ratio"].drill_code
    markup = drill_html("ppo/importance_ratio", code, "import torch")
    data = json.loads(re.search(r"<script[^>]*>(.*?)</script>", markup, re.S).group(1))
    widget = (Path(__file__).parents[1] / "js" / "drill.js").read_text(encoding="utf-8")
    fields = set(data) | set(data["slots"][0])
    unread = {f for f in fields if not re.search(rf"(\.|\{{ |, ){f}\b", widget)}
    assert not unread, f"the build ships {sorted(unread)}, which js/drill.js never reads"


def _regex_count(code: str) -> int:
    """The default rule again, written independently of tokenize: names, numbers and strings of
    two or more characters (the drill code has no comments)."""
    token = re.compile(
        r'"[^"\n]*"' r"|'[^'\n]*'"  # strings
        r"|(?<![\w.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"  # numbers
        r"|[A-Za-z_]\w*"  # names and keywords
    )
    return sum(1 for m in token.finditer(code) if len(m.group()) >= 2)


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_drill_count_agrees_with_an_independent_count_of_the_same_rule(exercise_id):
    code = LESSONS[exercise_id].drill_code
    assert count(code) == _regex_count(code)


@pytest.mark.parametrize("name", sorted(SOURCE_COUNTS))
def test_independent_count_reproduces_the_source_too(name):
    assert _regex_count((SEED / f"{name}.py.txt").read_text()) == SOURCE_COUNTS[name]


@pytest.mark.parametrize(
    ("exercise_id", "token", "equivalent"),
    [
        ("ppo/policy_surrogate_loss", "maximum", "max"),  # torch.max(a, b) is elementwise too
        ("ppo/shape_token_rewards", "-1", "1"),  # dim=1 on 2-D input (extended-mode tokens)
        ("s21/ppo_clipped_objective", "0.2", ".2"),
        ("ppo/kl_estimators", "0.5", "1 / 2"),
    ],
)
def test_an_equivalent_drill_answer_passes_the_check_by_meaning(exercise_id, token, equivalent):
    """What the drill sends to the worker: the answer function with one slot as the learner
    typed it, after the lesson's imports; the check runs it under the browser's torch layer."""
    from browser_runtime import torch_layer_installed
    from browser_runtime.check import check

    lesson = LESSONS[exercise_id]
    code = lesson.drill_code
    marks = slots(code)
    texts = [s.text for s in marks]
    if token == "-1":  # the two tokens "-" and "1" of "dim=-1"
        i = next(k for k in range(len(texts) - 1) if texts[k : k + 2] == ["-", "1"])
        start, end = marks[i].start, marks[i + 1].end
    else:
        m = next(s for s in marks if s.text == token)
        start, end = m.start, m.end
    program = "import torch\nimport torch.nn.functional as F\n\n" + (
        code[:start] + equivalent + code[end:]
    )
    with torch_layer_installed():
        result = check(EXERCISES[exercise_id], program)
    assert result["error"] is None and result["passed"] == result["total"], result


def test_a_typed_default_that_differs_fails_the_check_by_meaning():
    """The drill's check runs Check's own inputs, defaults left out in a share of them: 0.9
    typed for lam's default 0.95 means something else (it once was "equivalent")."""
    from browser_runtime import torch_layer_installed
    from browser_runtime.check import check

    lesson = LESSONS["ppo/compute_gae"]
    code = lesson.drill_code
    m = next(s for s in slots(code) if s.text == "0.95")
    program = "import torch\n\n" + code[: m.start] + "0.9" + code[m.end :]
    with torch_layer_installed():
        result = check(EXERCISES["ppo/compute_gae"], program)
    assert result["error"] is None and result["passed"] < result["total"]


def test_a_different_drill_answer_fails_the_check_by_meaning():
    from browser_runtime import torch_layer_installed
    from browser_runtime.check import check

    lesson = LESSONS["ppo/policy_surrogate_loss"]
    code = lesson.drill_code.replace("maximum", "minimum", 1)
    with torch_layer_installed():
        result = check(EXERCISES["ppo/policy_surrogate_loss"], "import torch\n\n" + code)
    assert result["passed"] < result["total"]


@pytest.mark.parametrize("exercise_id", sorted(LESSONS))
def test_the_drill_follows_the_pages_language_and_has_no_prose_to_mask(exercise_id):
    # a page's drill is built from the lesson in the page's language; it has no comments and no
    # docstring, so every token is code and the same in both languages (a Chinese learner never
    # types an English comment word, nor an English learner a Chinese one)
    import io
    import tokenize

    from site_build.directives import drills_markdown

    data = {}
    for lang in ("zh", "en"):
        markup = drills_markdown([LESSONS[exercise_id]], lang)
        data[lang] = json.loads(re.search(r"<script[^>]*>(.*?)</script>", markup, re.S).group(1))
        assert data[lang]["code"] == LESSONS[exercise_id].in_language(lang).drill_code
    assert data["zh"]["code"] == data["en"]["code"] and data["zh"]["slots"] == data["en"]["slots"]
    code = data["zh"]["code"]
    kinds = {tok.type for tok in tokenize.generate_tokens(io.StringIO(code).readline)}
    assert tokenize.COMMENT not in kinds and '"""' not in code
    assert not re.search(r"[\u4e00-\u9fff]", code)
