"""A learner's code is untrusted input: it cannot fool Check, break other cells, wedge or kill the
runtime for good, flood the page, or lose the learner's work. One test per finding of the
review that probed the site with such code, each reproducing it in Chromium."""

from __future__ import annotations

import json

import pytest

from .browser import (
    SERVED,
    cell,
    edit,
    long_loads,
    new_page,
    page_for,
    press,
    timers_fire,
    wait_output,
    wait_state,
    wait_until,
)
from .conftest import LESSONS

A = "ppo/importance_ratio"  # the cell where the learner's code runs
B = "ppo/compute_gae"  # another cell on the same page


@pytest.fixture
def page(request, site_url, shared_pages):
    """One page, one runtime for the whole module (`page_for`): what one test's code does to
    Python must not reach the next test either (each test gets the page with its cells reset)."""
    page = page_for(request, shared_pages, f"{site_url}/en/ppo/")
    yield page
    assert not page.errors and not page.foreign, (page.errors, page.foreign)


@pytest.fixture
def fresh(chromium, site_url):
    """A page of its own, for tests of storage and of loading."""
    page = new_page(chromium, f"{site_url}/en/ppo/")
    yield page
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def run(page, exercise_id: str, code: str) -> str:
    edit(page, exercise_id, code)
    return press(page, exercise_id, "run")


def answer_check(page, exercise_id: str = A, *, wrong: bool = True) -> tuple[int, int]:
    """Fill the cell's blanks with the answers (the last one wrong, if `wrong`), and Check:
    (passed, total)."""
    root = cell(page, exercise_id)
    if root.locator("textarea").is_visible():
        root.locator("[data-action='edit']").click()  # back to the blanks
    answers = [" ".join(b.answer.split()) for b in LESSONS[exercise_id].blanks]
    if wrong:
        answers[-1] = f"({answers[-1]}) * 1.5"
    for k, answer in enumerate(answers):
        root.locator("input[data-blank]").nth(k).fill(answer)
    press(page, exercise_id, "check")
    passed, total = root.locator(".rl-status").text_content().split("/")
    return int(passed), int(total)


# ---- 1. Check cannot be talked into a pass ------------------------------------------------------


def test_an_output_whose_float_patches_the_checker_does_not_pass(page):
    """The review's 36/36: an object array whose __float__ replaces the checker's comparison.
    The verdict is the judge's, in a worker no learner code runs in; here it is a type error."""
    edit(page, A, "import numpy as np\nimport browser_runtime.check as c\n\n"
         "class Evil:\n    def __float__(self):\n"
         "        c._differs = lambda *a, **k: None\n        c._wrong = lambda *a, **k: False\n"
         "        return 0.0\n\n"
         "def importance_ratio(new_logprobs, old_logprobs, mask):\n"
         "    return np.array([[Evil()]], dtype=object)\n")
    out = press(page, A, "check")
    passed, total = cell(page, A).locator(".rl-status").text_content().split("/")
    assert int(passed) == 0 and int(total) == 36, out
    assert "dtype object" in out
    assert not page.evaluate(f"localStorage.getItem('rl-ops/solved/{A}')")


def test_patching_numpy_in_another_run_does_not_make_a_wrong_answer_pass(page):
    run(page, B, "import numpy as np\nnp.allclose = lambda *a, **k: True\n"
                 "np.isclose = lambda *a, **k: True\nprint('patched')\n")
    passed, total = answer_check(page)
    assert passed < total


# what a run can leave behind in its interpreter or its worker's JS, each once able to rewrite every
# later verdict until a reload (the second review); none reaches another job now
LEFTOVERS = {
    "an audit hook": "import sys, browser_runtime.check as c\n"
    "sys.addaudithook(lambda event, args: setattr(c, '_differs', lambda *a, **k: None))\n",
    "numpy's isclose, by its code": "import numpy as np\n"
    "np.isclose._implementation.__code__ = (lambda *a, **k: True).__code__\n",
    "the worker's postMessage, through js.eval": "import js\njs.eval('''\n"
    "const post = MessagePort.prototype.postMessage;\n"
    "MessagePort.prototype.postMessage = function (m, t) {\n"
    "  if (m && m.outcome && m.outcome.result) m.outcome.result.passed = 36;\n"
    "  return post.call(this, m, t);\n};''')\n",
    "the checker's file on the virtual file system":
        "import importlib, browser_runtime.check as c\n"
        "open(c.__file__, 'a').write('\\n_differs = lambda *a, **k: None\\n')\n"
        "importlib.reload(c)\n",
    "an asyncio task whose cancel() patches the checker (restore called it)":
        "import asyncio, browser_runtime.check as c\n"
        "class Task(asyncio.Task):\n    def cancel(self, *a, **k):\n"
        "        c._differs = lambda *a, **k: None\n        return super().cancel(*a, **k)\n"
        "async def forever():\n    await asyncio.sleep(3600)\n"
        "task = Task(forever(), loop=asyncio.get_event_loop())\n",
    "a gc callback": "import gc, browser_runtime.check as c\n"
    "gc.callbacks.append(lambda *a: setattr(c, '_differs', lambda *a, **k: None))\n",
    "sys.monitoring": "import sys, browser_runtime.check as c\nm = sys.monitoring\n"
    "m.use_tool_id(3, 'leftover')\n"
    "m.register_callback(3, m.events.PY_START,\n"
    "                    lambda *a: setattr(c, '_differs', lambda *a, **k: None))\n"
    "m.set_events(3, m.events.PY_START)\n",
    "a finder on sys.meta_path": "import sys\nclass Finder:\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        raise ImportError('no ' + name)\nsys.meta_path.insert(0, Finder())\n",
    "the reference's cached arrays, zeroed": "import functools, numpy as np\n"
    "import rl_ops_numpy.gae as g\nold = g._triangle.__wrapped__\n"
    "g._triangle = functools.lru_cache(lambda *a, **k: np.zeros_like(old(*a, **k)))\n",
}


def _all_at_once(parts: dict[str, str], last: str) -> str:
    """The code of every part, in one run: ``last`` at the end (after it, imports fail or the
    stack is short), then a line that prints that the run got past them all."""
    return "".join(parts[k] for k in sorted(parts, key=lambda k: k == last)) + "print('past')\n"


def test_what_a_run_leaves_behind_reaches_no_later_verdict(page):
    """One run leaves every one of them in place (in the old design each outlived every
    restore; one run holds them all, as each is a way to reach later jobs, and one run costs
    what nine did); then a wrong answer still fails, and right answers, the GAE one included,
    still pass."""
    out = run(page, B, _all_at_once(LEFTOVERS, "a finder on sys.meta_path"))
    assert "past" in out, out  # in place: the run got past them
    passed, total = answer_check(page, A)
    assert passed < total
    for exercise_id in (A, B):
        passed, total = answer_check(page, exercise_id, wrong=False)
        assert passed == total, exercise_id


PATCHING_ANSWERS = {
    "numpy at import": """import torch
import numpy as np
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None

def importance_ratio(new_logprobs, old_logprobs, mask):
    return torch.zeros_like(new_logprobs)
""",
    "the checker": """import torch
import browser_runtime.check as check
check.verdict = lambda *a, **k: {"total": 36, "passed": 36, "failures": [], "error": None}
check._differs = lambda *a, **k: None

def importance_ratio(new_logprobs, old_logprobs, mask):
    return torch.zeros_like(new_logprobs)
""",
    "the checker's code, from inside the function": """import torch

def importance_ratio(new_logprobs, old_logprobs, mask):
    import browser_runtime.check as check
    check._differs.__code__ = (lambda got, want, spec: None).__code__
    return torch.zeros_like(new_logprobs)
""",
    "the reference and the tensor class": """import torch
import rl_ops_numpy as ops
ops.importance_ratio.__code__ = (lambda *a, **k: 0.0).__code__
torch.Tensor.numpy = lambda self: None

def importance_ratio(new_logprobs, old_logprobs, mask):
    return torch.zeros_like(new_logprobs)
""",
}


@pytest.mark.parametrize("what", sorted(PATCHING_ANSWERS))
def test_a_wrong_answer_that_patches_what_checks_it_still_fails(page, what):
    edit(page, A, PATCHING_ANSWERS[what])
    out = press(page, A, "check")
    passed, total = map(int, cell(page, A).locator(".rl-status").text_content().split("/"))
    assert passed < total, out
    # and the right answer still passes afterwards: nothing stayed patched
    root = cell(page, A)
    root.locator("[data-action='edit']").click()
    for k, blank in enumerate(LESSONS[A].blanks):
        root.locator("input[data-blank]").nth(k).fill(blank.answer)
    press(page, A, "check")
    passed, total = map(int, root.locator(".rl-status").text_content().split("/"))
    assert passed == total


# ---- 2. one cell's code does not break the others; Reset always repairs -------------------------


BREAKERS = {
    "sys.stdout replaced": "import sys, io\nsys.stdout = io.StringIO()\n",
    "print replaced": "import builtins\nbuiltins.print = lambda *a, **k: None\n",
    "stderr closed": "import sys\nsys.stderr.close()\n",
    "recursion limit": "import sys\nsys.setrecursionlimit(25)\n",
    "excepthook": "import sys\nsys.excepthook = None\nsys.displayhook = None\n",
    "trace hook": "import sys\nsys.settrace(lambda *a: None)\n",
}


def test_what_one_cell_changes_in_python_does_not_reach_the_next_run(page):
    # every breaker in one run (stdout replaced: its "past" is not shown), and an error after
    # them still said as the learner's, on the line it came from (js/worker.js reads fd 2)
    code = _all_at_once(BREAKERS, "recursion limit") + "1 / 0\n"
    out = run(page, A, code)
    assert f"line {code.count(chr(10))}" in out and "ZeroDivisionError" in out, out
    out = run(page, B, "print('B prints')\n1 / 0\n")
    assert "B prints" in out and "ZeroDivisionError" in out
    assert "failed to load" not in out.lower() and "excepthook" not in out


def test_every_run_is_in_a_fresh_interpreter_in_a_fresh_worker(page):
    """No list of things to put back: each run has an interpreter and a JS realm of its own, so a
    file, a warnings filter, sys.path, an audit hook, the torch layer's random state and print
    options, a patched numpy and a global in the worker's JS are all gone at the next run."""
    run(page, A, "import builtins\nbuiltins.print = None\n")
    run(page, A, "import sys, warnings, torch, js, numpy\nopen('left.txt', 'w').write('x')\n"
        "warnings.simplefilter('error')\nsys.path.insert(0, '/left')\ntorch.manual_seed(1)\n"
        "torch.set_printoptions(precision=1)\n"
        "sys.addaudithook(lambda *a: None)\nnumpy.isclose = None\njs.eval('self.leftover = 1')\n")
    out = run(page, B, "import os, sys, warnings, js, numpy, torch\n"
              "draw = torch.randn(3)\ntorch.manual_seed(1)\n"
              "print(os.path.exists('left.txt'), '/left' in sys.path, numpy.isclose is None,\n"
              "      hasattr(js, 'leftover'), torch.equal(draw, torch.randn(3)),\n"
              "      torch.tensor([1.23456]), warnings.filters[:1])\n")
    assert out.startswith("False False False False False tensor([1.2346])"), out
    assert "'error'" not in out
    cell(page, A).locator("[data-action='reset']").click()  # Reset: the exercise as published
    assert cell(page, A).locator("input[data-blank]").first.is_visible()


def test_each_interpreter_seeds_random_numpy_and_torch_anew_as_a_new_process_would(page):
    """Every interpreter starts from one boot image, a snapshot of one interpreter's memory; its
    generators (Python's, numpy's global one, the torch layer's) are seeded afresh (js/boot.js
    fromImage), so two runs do not draw the same numbers, as two Python processes would not; and
    torch.manual_seed still makes a run's draws reproducible."""
    code = ("import random, numpy, torch\nprint(random.random(), numpy.random.random())\n"
            "print(torch.randn(2))\ntorch.manual_seed(0)\nprint(torch.randn(2))\n")
    first, second = (run(page, A, code).splitlines() for _ in range(2))
    assert first[0].split()[0] != second[0].split()[0], (first, second)
    assert first[0].split()[1] != second[0].split()[1], (first, second)
    assert first[1] != second[1], (first, second)  # unseeded torch.randn(2)
    assert first[2] == second[2], (first, second)  # after torch.manual_seed(0)


# ---- 3. background tasks end with their job ----------------------------------------------------


def test_a_background_task_neither_wedges_the_runtime_nor_prints_into_other_cells(page):
    out = run(page, A, """import asyncio
async def ghost():
    await asyncio.sleep(0.5)
    while True:
        pass
async def chatter():
    for i in range(100):
        print('GHOST', i)
        await asyncio.sleep(0.05)
asyncio.ensure_future(ghost())
asyncio.ensure_future(chatter())
import js
js.setTimeout(lambda: print('GHOST timer'), 300)
print('A done')
""")
    assert "A done" in out
    page.wait_for_timeout(1000)  # when the ghosts would have woken, had they survived
    for _ in range(2):
        out = run(page, B, "print('B runs')\n")
        assert out.strip() == "B runs"


# ---- 4. output is bounded, the page never freezes ---------------------------------------------


def test_endless_printing_is_stopped_by_the_time_limit_and_the_page_stays_responsive(page):
    page.eval_on_selector(f"[data-runner='{A}']", "el => el.dataset.timeout = '3'")
    edit(page, A, "while True:\n    print('y')\n")
    cell(page, A).locator("[data-action='run']").click()
    wait_state(page, A, "running")
    # the main thread answers while the worker floods: a timer fires, a click lands
    for _ in range(3):
        timers_fire(page)
    out = wait_output(page, A, "time limit")
    assert "not shown" in out  # the middle was cut, and it says how much
    assert len(out) < 30_000
    spans = cell(page, A).locator("[data-output] *").count()
    assert spans < 20
    assert run(page, A, "print('after the flood')\n").strip() == "after the flood"


def test_a_long_finite_output_keeps_its_head_and_tail_and_counts_the_rest(page):
    out = run(page, A, "for i in range(200_000):\n    print(i)\n")
    lines = out.split("\n")
    assert lines[0] == "0" and "199999" in lines[-2:]
    assert "characters of output not shown" in out


def test_a_deep_recursion_traceback_is_collapsed(page):
    out = run(page, A, "import sys\nsys.setrecursionlimit(30_000)\n"
                       "def f(n):\n    return f(n + 1)\nf(0)\n")
    assert "RecursionError" in out
    assert "Previous line repeated" in out
    assert len(out) < 5_000


# ---- 5. a dead or hung interpreter is replaced ------------------------------------------------


KILLERS = {
    "os._exit": "import os\nos._exit(1)\n",
    "a parser stack overflow": "eval('[' * 100_000 + ']' * 100_000)\n",
    "js.close": "import js\njs.close()\nwhile True:\n    pass\n",
    "a forged done message": (
        "import js\nfrom pyodide.ffi import to_js\n"
        "js.postMessage(to_js({'type': 'done', 'id': 1, 'ok': True}))\n"
        "while True:\n    pass\n"
    ),
    "a huge allocation": "x = [0] * (10 ** 9)\n",
}


@pytest.mark.parametrize("what", sorted(KILLERS))
def test_code_that_kills_or_hangs_python_leaves_the_next_run_working(page, what):
    page.eval_on_selector(f"[data-runner='{A}']", "el => el.dataset.timeout = '4'")
    run(page, A, "print('warm')\n")
    out = run(page, A, KILLERS[what])
    assert out.strip()  # it says what happened
    assert run(page, A, "print('alive')\n").strip() == "alive"
    assert run(page, B, "print('B alive')\n").strip() == "B alive"


def test_a_sleep_right_after_a_timed_out_run_is_stopped_at_its_own_limit(page):
    """The review's NoGilError: `time.sleep(30)` right after a timed-out run sometimes died in
    the interpreter the stopped run had left. Each run has an interpreter of its own now."""
    page.eval_on_selector(f"[data-runner='{A}']", "el => el.dataset.timeout = '3'")
    assert "3 s time limit" in run(page, A, "while True:\n    pass\n")
    out = run(page, A, "import time\nprint('asleep')\ntime.sleep(30)\nprint('woke')\n")
    assert "asleep" in out and "3 s time limit" in out, out
    assert "woke" not in out and "NoGilError" not in out and "Error" not in out, out
    assert run(page, A, "print('alive')\n").strip() == "alive"


def test_sys_exit_with_a_status_is_said(page):
    out = run(page, A, "import sys\nprint('before')\nsys.exit(3)\n")
    assert "before" in out and "SystemExit: 3" in out


@pytest.mark.parametrize("code", [
    "def importance_ratio(*args):\n    raise KeyboardInterrupt\n",
    "import browser_runtime.exercises as e\ne.Draw = None\n"
    "def importance_ratio(*args):\n    return args[0]\n",
], ids=["its own KeyboardInterrupt", "a patch that breaks drawing the inputs"])
def test_what_the_learners_code_does_to_check_is_named_as_theirs(page, code):
    """Check's failure that the learner's code caused is their error (their traceback, "The code
    raised an error"), never "the site's own code raised an error"."""
    edit(page, A, code)
    out = press(page, A, "check")
    status = cell(page, A).locator(".rl-status").text_content()
    assert status == "The code raised an error", (status, out)
    assert "site's own code" not in out
    assert ("KeyboardInterrupt" if "raise" in code else "TypeError") in out.splitlines()[-1]
    assert run(page, A, "print('alive')\n").strip() == "alive"


def test_stop_on_a_queued_run_cancels_only_it(page):
    page.eval_on_selector(f"[data-runner='{A}']", "el => el.dataset.timeout = '4'")
    run(page, A, "print('warm')\n")
    edit(page, A, "while True:\n    pass\n")
    cell(page, A).locator("[data-action='run']").click()
    wait_state(page, A, "running")
    edit(page, B, "print('B ran')\n")
    cell(page, B).locator("[data-action='run']").click()
    cell(page, B).locator("[data-action='stop']").click()  # queued behind A: cancelled at once
    wait_state(page, B, "idle")
    assert "B ran" not in cell(page, B).locator("[data-output]").text_content()
    assert run(page, B, "print('B ran')\n").strip() == "B ran"


# ---- 6. failed loads heal ---------------------------------------------------------------------


def test_offline_at_the_first_use_of_python_says_so_and_heals_when_back_online(fresh):
    fresh.context.set_offline(True)
    edit(fresh, A, "print('hello')\n")
    out = press(fresh, A, "run")
    assert "Could not load" in out
    assert not cell(fresh, A).locator("[data-action='run']").is_disabled()
    fresh.context.set_offline(False)
    assert run(fresh, A, "print('hello')\n").strip() == "hello"


def test_the_demo_page_offline_says_so_and_runs_once_back_online(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/s21/demo/")
    page.context.set_offline(True)
    page.locator("[data-demo] [data-action='run']").click()
    error = page.locator("[data-demo] [data-output]")
    error.wait_for(state="visible", timeout=60_000)
    assert "Could not load" in error.inner_text()
    assert page.locator("[data-demo] [data-action='run']").is_enabled()
    page.context.set_offline(False)
    page.locator("[data-demo] [data-action='run']").click()
    wait_until(
        page,
        "document.querySelector('[data-demo] [data-action=stop]').disabled &&"
        " !document.querySelector('[data-demo] [data-action=run]').disabled &&"
        " document.querySelector('[data-demo] .rl-status').textContent.startsWith('Done')",
        timeout=300_000, what="the demo's run done, once back online",
        now=lambda: page.locator("[data-demo] .rl-status").inner_text(),
    )
    assert error.is_hidden()
    assert not page.errors and not page.foreign
    page.context.close()


# ---- 7. nothing is lost -----------------------------------------------------------------------

KEY = f"rl-ops/cell/{A}"


def test_two_tabs_merge_blank_by_blank_and_ask_only_when_both_changed_one(chromium, site_url):
    first = new_page(chromium, f"{site_url}/en/ppo/")
    second = first.context.new_page()
    second.goto(f"{site_url}/en/ppo/")
    cell(first, A).locator("input[data-blank]").first.fill("from the first tab")
    # the second tab had no changes of its own: it shows the first tab's work
    wait_until(
        second,
        f"document.querySelector(\"[data-runner='{A}'] input[data-blank]\").value"
        " === 'from the first tab'",
        what="the first tab's work in the second tab",
    )
    blanks = [cell(page, A).locator("input[data-blank]") for page in (first, second)]
    blanks[1].nth(1).fill("second tab's own")
    blanks[0].first.fill("first tab again")
    # each changed another blank: both tabs end with both changes, and nobody is asked
    for page, blank in ((first, blanks[0]), (second, blanks[1])):
        wait_until(
            page, f"""() => [...document.querySelectorAll("[data-runner='{A}'] input[data-blank]")]
                .slice(0, 2).map((i) => i.value).join('|') === "first tab again|second tab's own"
            """, what="both tabs' changes in each tab",
        )
        assert blank.nth(1).input_value() == "second tab's own"
    assert cell(second, A).locator(".rl-notice").is_hidden()
    # the second tab goes on typing in its blank: the first tab's blank is not overwritten
    blanks[1].nth(1).fill("second tab's own, longer")
    saved = json.loads(second.evaluate(f"localStorage.getItem('{KEY}')"))
    assert saved["blanks"][:2] == ["first tab again", "second tab's own, longer"]
    # both changed the same blank: the second tab keeps its own and asks
    blanks[1].nth(2).fill("second's third")
    blanks[0].nth(2).fill("first's third")
    notice = cell(second, A).locator(".rl-notice")
    notice.wait_for()
    assert blanks[1].nth(2).input_value() == "second's third"
    notice.locator("[data-action='take-other']").click()
    assert blanks[1].nth(2).input_value() == "first's third"
    saved = json.loads(second.evaluate(f"localStorage.getItem('{KEY}')"))
    assert saved["blanks"][:3] == ["first tab again", "second tab's own, longer", "first's third"]
    first.context.close()


def test_a_full_storage_is_said_and_the_typed_work_stays_on_the_page(chromium, site_url):
    page = new_page(chromium)
    page.add_init_script("""
        Storage.prototype.setItem = function () {
            throw new DOMException('full', 'QuotaExceededError');
        };""")
    page.goto(f"{site_url}/en/ppo/")
    blank = cell(page, A).locator("input[data-blank]").first
    blank.fill("my answer")
    assert "could not be saved" in cell(page, A).locator(".rl-notice").inner_text()
    assert blank.input_value() == "my answer"
    page.context.close()


def test_answers_of_two_older_versions_are_both_kept_until_discarded(fresh):
    for version, answer in (("old-1", "first answer"), ("old-2", "second answer")):
        state = {"version": version, "blanks": [answer, "x"], "editor": None, "editing": False}
        fresh.evaluate("([k, v]) => localStorage.setItem(k, v)", [KEY, json.dumps(state)])
        fresh.reload()
    notice = cell(fresh, A).locator(".rl-notice")
    assert notice.is_visible()
    cell(fresh, A).locator("[data-action='reset']").click()  # Reset does not delete them
    fresh.reload()
    notice.locator("[data-action='restore-old']").click()  # the newest first
    assert "second answer" in cell(fresh, A).locator("textarea").input_value()
    notice.locator("[data-action='restore-old']").click()  # then the one before
    assert "first answer" in cell(fresh, A).locator("textarea").input_value()
    assert notice.is_hidden()


def test_unreadable_saved_work_is_set_aside_not_overwritten(fresh):
    fresh.evaluate("([k]) => localStorage.setItem(k, '{not json')", [KEY])
    fresh.reload()
    assert "could not be read" in cell(fresh, A).locator(".rl-notice").inner_text()
    cell(fresh, A).locator("input[data-blank]").first.fill("new work")
    kept = fresh.evaluate("""(k) => Object.keys(localStorage)
        .filter((key) => key.startsWith(k + '/unreadable/'))
        .map((key) => localStorage.getItem(key))""", KEY)
    assert kept == ["{not json"]


# ---- 8. the drill's record -----------------------------------------------------------------------

DRILL = "[data-drill='ppo/importance_ratio']"


def test_a_tampered_drill_record_is_set_aside_and_checks_still_count(fresh):
    fresh.evaluate("localStorage.setItem('rl-ops/drill/misses', '5')")
    fresh.evaluate("localStorage.setItem('rl-ops/drill/ppo/importance_ratio', '[1, 2]')")
    fresh.reload()
    fresh.locator(f"{DRILL} [data-action='check']").click()
    meta = fresh.locator(f"{DRILL} .rl-drill-meta").inner_text()
    assert "1 attempt" in meta
    misses = json.loads(fresh.evaluate("localStorage.getItem('rl-ops/drill/misses')"))
    assert isinstance(misses, dict)


def test_repeated_checks_of_one_mask_count_one_attempt(fresh):
    fresh.locator(f"{DRILL} input[data-slot]").first.fill("something_wrong")
    check = fresh.locator(f"{DRILL} [data-action='check']")
    check.click()
    check.click(force=True)
    check.click(force=True)
    fresh.locator(f"{DRILL} input[data-slot]").first.press("Control+Enter")
    wait_until(
        fresh, f"!document.querySelector(\"{DRILL} .rl-drill-note\").textContent.endsWith('…')",
        timeout=120_000, what="Python's answer in the drill's note",
        now=lambda: fresh.locator(f"{DRILL} .rl-drill-note").inner_text(),
    )
    record = json.loads(fresh.evaluate("localStorage.getItem('rl-ops/drill/ppo/importance_ratio')"))
    assert record["attempts"] == 1


def test_a_tampered_ratio_in_the_address_is_ignored(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/?drill-ppo-importance_ratio=1f.1000.d")
    assert page.locator(f"{DRILL} input[data-slot]").count() >= 1
    assert not page.errors
    page.context.close()


def test_an_error_a_learners_js_callback_raises_never_reaches_the_page_as_the_workers(page):
    """A microtask the learner's code queued runs before the worker says the job is done: its
    error is the learner's (js/worker.js cancels it), never the page's "could not load worker.js"
    (the page takes every error its current worker reports for a failure to start)."""
    run(page, A, "print('a spare is started for the next run')\n")
    page.evaluate("""async () => {
        const src = document.querySelector('script[src*="runner.js"]').src;
        const rt = (await import(new URL('python.js' + new URL(src).search, src))).runtime();
        window.__workerErrors = [];
        rt.worker.addEventListener('error', (e) => window.__workerErrors.push(e.message));
    }""")
    code = ("import js\nfrom pyodide.ffi import create_proxy\n"
            "for _ in range(3):\n    js.queueMicrotask(create_proxy(lambda: 1 / 0))\n"
            "print('queued')\n")
    assert run(page, A, code).strip() == "queued"
    assert run(page, A, "print('next')\n").strip() == "next"
    assert page.evaluate("window.__workerErrors") == []


def test_the_first_run_of_a_page_reaches_the_workers_own_globals(fresh):
    """The first run was once in the interpreter that made the boot image, whose `js` was the
    proxy a snapshot needs; native methods called through it threw "Illegal invocation". Every run
    now starts from the image, in a worker of its own, as the first does."""
    code = ("import js\nprint(js.performance.now() > 0, js.Math.max(1, 2))\n"
            "js.setTimeout(print, 1)\n")
    assert run(fresh, A, code).strip() == "True 2"


RUNTIME_FILES = ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json", ".whl")


def test_python_loads_the_long_way_once_per_page_and_each_runtime_file_comes_once(
    fresh, site_url
):
    """Three runs, each in a worker of its own: one long load (the judge's), and each file of
    the runtime sent once: every worker used to fetch the 10 MB of pyodide.asm.wasm again for
    nothing, and the standard library and the lock file again (js/boot.js)."""
    served = SERVED[site_url]
    before = served.copy()
    for _ in range(3):
        run(fresh, A, "print('again')\n")
    assert long_loads(fresh) == 1
    sent = {path: n - before[path] for path, n in served.items() if n > before[path]}
    runtime = {p: n for p, n in sent.items()
               if p.startswith(("/assets/pyodide/", "/assets/wheels/"))}
    # the four files, numpy's wheel and ours, each once; nothing else of the runtime twice
    assert sum(p.endswith(RUNTIME_FILES) for p in runtime) == 5, runtime
    assert set(runtime.values()) == {1}, runtime


# ---- 9. what a run could leave in the site's storage, or say on the worker's port (issue 35) ----
# The probe's attacks: a run writes Cache Storage (the boot image, the code, the runtime) or
# IndexedDB, or captures the worker's MessagePort and posts messages the page trusts. Each test
# plays the attack from a Run, and where the attack needs more than a Run may have (Cache Storage:
# a learner's worker has none since issue 35), from the page itself: what the site reads back
# must be checked anyway.


def _addresses(page) -> dict:
    """What the page's runtime uses: the runtime's and the wheel's addresses, its caches' names
    and its modules' URLs (as js/sw.js and js/python.js name them)."""
    return page.evaluate("""() => {
        const cfg = JSON.parse(document.getElementById('rl-config').textContent);
        const base = new URL(cfg.base, location.href);
        const src = document.querySelector('script[src*="runner.js"]').src;
        const ours = `rl:${base.pathname}:`;
        return {
            indexURL: new URL(cfg.pyodide, base).href, wheelUrl: new URL(cfg.wheel, base).href,
            imageCache: ours + 'boot-image', codeCache: ours + 'code',
            runtimeCache: ours + 'runtime-', bootURL: src.replace('runner.js', 'boot.js'),
            workerURL: src.replace('runner.js', 'worker.js'),
            fflateURL: new URL('assets/fflate/browser.js', base).href,
        };
    }""")


# A boot image of an interpreter whose checker passes everything, made as js/boot.js makes the real
# one (a second Pyodide, from the site's own files, its wheel's check.py patched), and stored where
# the page keeps its image across pages: what a learner's code with Cache Storage could do.
PLANT_IMAGE = """async (a) => {
    const boot = await import(a.bootURL);
    const { unzipSync, zipSync } = await import(a.fflateURL);
    const get = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
    const lockBytes = await get(a.indexURL + 'pyodide-lock.json');
    const lock = JSON.parse(new TextDecoder().decode(lockBytes));
    const stdlib = await get(a.indexURL + 'python_stdlib.zip');
    const numpy = await get(a.indexURL + lock.packages.numpy.file_name);
    const files = unzipSync(await get(a.wheelUrl));
    const check = 'browser_runtime/check.py';
    files[check] = new TextEncoder().encode(new TextDecoder().decode(files[check])
        + '\\n_differs = lambda *a, **k: None\\n');
    const wheel = zipSync(files);
    const main = await WebAssembly.compile(await get(a.indexURL + 'pyodide.asm.wasm'));
    const { version } = await import(a.indexURL + 'pyodide.mjs');
    const parts = await boot.parts(main, [numpy.buffer, wheel.buffer], { stdlib, lock: lockBytes });
    const runtime = { indexURL: a.indexURL, pyodideVersion: version };
    const { image } = await boot.makeImage(runtime, parts);
    const search = new URLSearchParams({ runtime: a.indexURL, wheel: a.wheelUrl });
    const key = new URL(`boot-image?${search}`, a.indexURL).href;
    const headers = { 'content-type': 'application/octet-stream',
                      'x-handles': JSON.stringify(image.handles) };
    await (await caches.open(a.imageCache)).put(key, new Response(image.snapshot, { headers }));
    return image.snapshot.length;
}"""

# worker.js with a first statement that makes every verdict a pass, kept where the service worker
# keeps the code of the page's version
PLANT_WORKER = """async (a) => {
    const forged = `{ const post = MessagePort.prototype.postMessage;
        MessagePort.prototype.postMessage = function (m, t) {
            const r = m && m.outcome && m.outcome.result;
            if (r && typeof r.total === 'number')
                Object.assign(r, { passed: r.total, failures: [], error: null });
            return post.call(this, m, t);
        }; }\\n` + await (await fetch(a.workerURL)).text();
    const headers = { 'content-type': 'text/javascript' };
    await (await caches.open(a.codeCache)).put(a.workerURL, new Response(forged, { headers }));
    return forged.length;
}"""

# what a run posts through the worker's port, once it has captured it: the port is `this` of the
# worker's next postMessage (the probe patched MessagePort.prototype.postMessage, from `import js`)
CAPTURE = """{ const post = MessagePort.prototype.postMessage;
    let captured = false;
    MessagePort.prototype.postMessage = function (m, t) {
        if (!captured && m && m.id !== undefined) { captured = true; (%s)(this, m.id, post); }
        return post.call(this, m, t);
    }; }"""


def attack_run(attack: str, args: dict) -> str:
    """A Run's code that starts `attack(args)` in its worker's JS and holds the worker's `done`
    until the attack is over (the page would end the worker at once): the port's postMessage,
    patched, is how the probe kept its worker alive."""
    hold = ("const post = MessagePort.prototype.postMessage;\n"
            "MessagePort.prototype.postMessage = function (m, t) {\n"
            "  if (!(m && m.type === 'done')) return post.call(this, m, t);\n"
            "  self.__attack.catch(() => null).finally(() => post.call(this, m, t));\n};")
    start = f"self.__attack = ({attack})({json.dumps(args)})"
    return f"import js\njs.eval({hold!r})\njs.eval({start!r})\nprint('attack started')\n"


def _controlled(page) -> None:
    wait_until(page, "navigator.serviceWorker.controller !== null", timeout=120_000,
               what="the service worker in control of the page")


def _service_worker_offline(page, index_url: str) -> None:
    """Wait until the service worker's own fetches fail. Playwright lets a service worker that
    (re)starts run before it applies the context's offline state to it (CI met the race: a
    worker stopped while idle came back online for its first fetches); a file no cache holds,
    under the runtime's folder, goes through the worker to the network."""
    wait_until(page, """async (url) => {
        try { await fetch(url, {cache: 'no-store'}); return false; } catch { return true; }
    }""", index_url + "no-such-file-offline-probe", timeout=30_000,
               what="the service worker offline")


@pytest.fixture
def with_sw(chromium, site_url):
    """A page of its own with the site's service worker in control (the caches it keeps)."""
    page = new_page(chromium, f"{site_url}/en/ppo/", service_workers="allow")
    _controlled(page)
    yield page
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def test_a_run_that_stores_a_boot_image_of_a_passing_checker_passes_nothing_after_a_reload(fresh):
    """The probe's attack from a Run: a boot image whose checker passes everything, stored under
    the key the page reads its image from. A learner's worker has no Cache Storage, and the page
    would not take an image it did not make anyway."""
    run(fresh, A, attack_run(PLANT_IMAGE, _addresses(fresh)))
    fresh.reload()
    passed, total = answer_check(fresh)
    assert passed < total
    assert run(fresh, A, "print('alive')\n").strip() == "alive"


def test_a_boot_image_the_page_did_not_make_is_deleted_and_made_again(fresh):
    """The same image stored by the page's own code (as a learner's worker with Cache Storage
    could): the page checks what it reads against the digest it kept where no worker can write,
    deletes it, and loads the long way."""
    args = _addresses(fresh)
    assert fresh.evaluate(f"({PLANT_IMAGE})({json.dumps(args)})") > 0
    fresh.reload()
    passed, total = answer_check(fresh)
    assert passed < total
    assert long_loads(fresh) == 1


def test_a_worker_js_a_run_writes_into_the_code_cache_is_not_served(with_sw):
    """The probe's attack: a rewritten worker.js (every verdict a pass) in the service worker's
    code cache, written by a Run, served after a reload. A learner's worker has no Cache Storage,
    and the service worker checks every hit against the build's hashes anyway."""
    args = _addresses(with_sw)
    run(with_sw, A, attack_run(PLANT_WORKER, args))
    with_sw.reload()
    passed, total = answer_check(with_sw)
    assert passed < total


def test_a_code_or_runtime_entry_not_as_the_build_wrote_it_is_refetched(with_sw):
    """A rewritten worker.js and a damaged pyodide.asm.js planted in the service worker's
    caches by the page's own code (Cache Storage's reach): each hit is checked, the entry is
    deleted and fetched again, so a wrong answer still fails and the next Run works."""
    args = _addresses(with_sw)
    assert run(with_sw, A, "print('cached')\n").strip() == "cached"  # the runtime is in its cache
    assert with_sw.evaluate(f"({PLANT_WORKER})({json.dumps(args)})") > 0
    asm = args["indexURL"] + "pyodide.asm.js"
    with_sw.evaluate("""async ([prefix, url]) => {
        const name = (await caches.keys()).find((n) => n.startsWith(prefix));
        await (await caches.open(name)).put(url, new Response("not javascript ("));
    }""", [args["runtimeCache"], asm])
    with_sw.reload()
    passed, total = answer_check(with_sw)
    assert passed < total
    assert run(with_sw, A, "print('alive')\n").strip() == "alive"
    healed = with_sw.evaluate("""async ([prefix, url]) => {
        const name = (await caches.keys()).find((n) => n.startsWith(prefix));
        const hit = await (await caches.open(name)).match(url);
        return hit ? (await hit.arrayBuffer()).byteLength : 0;
    }""", [args["runtimeCache"], asm])
    assert healed > 1000


def test_a_damaged_runtime_entry_offline_names_its_file_and_heals_online(with_sw):
    """The probe's torn write: offline, a damaged runtime file cannot be fetched again, and the
    failure names it (it named pyodide.mjs); back online, the next Run heals it, as it says."""
    args = _addresses(with_sw)
    assert run(with_sw, A, "print('cached')\n").strip() == "cached"
    with_sw.evaluate("""async ([prefix, url]) => {
        const name = (await caches.keys()).find((n) => n.startsWith(prefix));
        await (await caches.open(name)).put(url, new Response("not javascript ("));
    }""", [args["runtimeCache"], args["indexURL"] + "pyodide.asm.js"])
    with_sw.context.set_offline(True)
    with_sw.reload()
    _service_worker_offline(with_sw, args["indexURL"])
    out = run(with_sw, A, "print('hello')\n")
    assert "Could not load pyodide.asm.js" in out, out
    with_sw.context.set_offline(False)
    assert run(with_sw, A, "print('hello')\n").strip() == "hello"


def test_a_run_can_reach_neither_cache_storage_nor_indexeddb_nor_start_a_worker(page):
    """Defence in depth: what would let a learner's code write the site's storage is gone from
    its worker before the code runs (the checks above hold without it)."""
    out = run(page, A, "import js\n"
              "for what in ('caches.open(\"x\")', 'indexedDB.open(\"x\")',\n"
              "             'new Worker(\"x.js\")', 'navigator.storage.getDirectory()'):\n"
              "    try:\n        js.eval(what)\n        print(what, 'reached')\n"
              "    except Exception as err:\n        print(what, 'refused')\n")
    assert out.count("refused") == 4, out


def test_a_forged_stale_done_on_a_captured_port_does_not_end_the_pages_python(page):
    """The probe's forged `done` (failure "stale": every later job said "site updated"): posted
    through the port the run captured, after its code started."""
    forge = ("(port, id, post) => post.call(port, {id, type: 'done',"
             " outcome: {ok: false, failure: {kind: 'stale', message: 'forged'}}})")
    run(page, A, f"import js\njs.eval({CAPTURE % forge!r})\nprint('forging')\n")
    assert run(page, A, "print('alive')\n").strip() == "alive"
    assert run(page, B, "print('B alive')\n").strip() == "B alive"


def test_an_output_flood_on_a_captured_port_is_capped_by_the_page(page):
    """The probe's flood, past the worker's own cap: 5 MB of output posted on the captured port.
    The page keeps at most what the worker would send."""
    flood = ("(port, id, post) => { const text = 'x'.repeat(999) + '\\n';"
             " for (let i = 0; i < 5000; i++)"
             " post.call(port, {id, type: 'output', stream: 'stdout', text}); }")
    out = run(page, A, f"import js\njs.eval({CAPTURE % flood!r})\nprint('flooding')\n")
    assert len(out) < 30_000, len(out)
    assert run(page, A, "print('alive')\n").strip() == "alive"
