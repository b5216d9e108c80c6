"""Check in Chromium fails the mistakes a page warns about, and says why in the page's language:
what the padding held, the first values that differ, the defaults it left out (the inputs that
teach, browser_runtime/exercises.py). tests/test_mutants.py proves the same for every trap under
CPython; this proves the browser's Check draws the same inputs and words them."""

from __future__ import annotations

import pytest

from .browser import describe, edit, new_page, press, wait_until
from .conftest import LESSONS

LANGUAGES = {"zh": "", "en": "en/"}
WORDS = {
    "en": {"padding": "Padding holds", "first": "yours is nan, the reference's 1",
           "left_out": "lam = 0.95  (left out: its default)",
           "gradient": "the values are right, but the gradient with respect to new_logprobs"},
    "zh": {"padding": "这组输入的 padding 里有", "first": "你的结果是 nan，参考实现是 1",
           "left_out": "lam = 0.95  （没有传入：用默认值）",
           "gradient": "数值对了，但对 new_logprobs 的梯度"},
}


@pytest.fixture(scope="module")
def pages(chromium, site_url):
    opened = {lang: new_page(chromium, f"{site_url}/{prefix}ppo/")
              for lang, prefix in LANGUAGES.items()}
    yield opened
    for page in opened.values():
        assert not page.errors and not page.foreign, (page.errors, page.foreign)
        page.context.close()


def _failing_check(page, exercise_id: str, code: str) -> str:
    """Check ``code`` in the exercise's cell: Check fails it; its output."""
    edit(page, exercise_id, code)
    press(page, exercise_id, "check")
    # the count, once the verdict has come (it may follow the cell's idle state by a frame)
    wait_until(page, "(sel) => /^\\d+\\/\\d+$/.test(document.querySelector(sel)?.textContent)",
               f"[data-runner='{exercise_id}'] .rl-status", what=f"{exercise_id}'s Check count",
               now=lambda: describe(page, exercise_id))
    out = page.locator(f"[data-runner='{exercise_id}'] [data-output]").text_content()
    passed, total = map(int, page.locator(f"[data-runner='{exercise_id}'] .rl-status")
                        .text_content().split("/"))
    assert passed < total, out
    return out


def _trap(exercise_id: str, why: str) -> str:
    lesson = LESSONS[exercise_id]
    trap = next(t for t in lesson.traps if t.why.startswith(why))
    return trap.apply(lesson.exercise(blanked=False))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_check_fails_a_multiply_by_the_mask_and_says_what_the_padding_held(pages, lang):
    out = _failing_check(pages[lang], "ppo/importance_ratio",
                         _trap("ppo/importance_ratio", "TODO 2"))
    assert WORDS[lang]["padding"] in out and WORDS[lang]["first"] in out, out


@pytest.mark.parametrize("lang", LANGUAGES)
def test_check_fails_a_wrong_default_and_names_the_default_it_left_out(pages, lang):
    answer = LESSONS["ppo/compute_gae"].exercise(blanked=False)
    out = _failing_check(pages[lang], "ppo/compute_gae", answer.replace("lam=0.95", "lam=0.9"))
    assert WORDS[lang]["left_out"] in out, out


@pytest.mark.parametrize("lang", LANGUAGES)
def test_check_fails_where_after_exp_by_its_nan_gradient(pages, lang):
    """The walkthrough's trap: torch.where(mask, exp(log ρ), 1) gives the right values and a NaN
    gradient on padding. The learner's worker takes the gradient with the browser's autograd,
    the judge the answer's."""
    out = _failing_check(pages[lang], "ppo/importance_ratio",
                         _trap("ppo/importance_ratio", "walkthrough: torch.where"))
    assert WORDS[lang]["gradient"] in out, out
