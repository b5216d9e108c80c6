"""Each kind of job is declared once per side: a row of js/job.js ``KINDS`` and, where the row
says Python runs it, the function of its name in browser_runtime/jobs.py, the only Python the
worker calls. These tests read the table from the JS module itself (Node) and prove the two sides
name the same kinds and payloads, and that each function takes and returns plain data."""

from __future__ import annotations

import inspect
import json
import math
import shutil
import subprocess

import pytest

from browser_runtime import jobs

from .conftest import EXERCISES, LESSONS, ROOT

NODE = shutil.which("node")


@pytest.fixture(scope="module")
def kinds() -> dict:
    if NODE is None:
        pytest.fail("node is not installed")
    script = "import('./js/job.js').then((m) => console.log(JSON.stringify(m.KINDS)))"
    out = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def _functions() -> dict:
    return {name: fn for name, fn in vars(jobs).items() if inspect.isfunction(fn)
            and fn.__module__ == jobs.__name__ and not name.startswith("_")}


def test_every_python_kind_has_its_function_in_jobs_py_and_every_function_its_row(kinds):
    python_kinds = {kind for kind, row in kinds.items() if row["python"]}
    assert python_kinds == set(_functions())


def test_each_function_takes_the_job_then_exactly_its_kinds_payload(kinds):
    for name, fn in _functions().items():
        params = list(inspect.signature(fn).parameters)
        assert params[0] == "job", name
        assert set(params[1:]) == set(kinds[name]["payload"]), name


def test_each_row_says_its_worker_and_failures_from_the_known_ones(kinds):
    script = ("import('./js/job.js').then((m) => console.log(JSON.stringify("
              "{failures: m.FAILURES, watchdogs: m.WATCHDOGS})))")
    known = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT,
                                      check=True, capture_output=True, text=True).stdout)
    for kind, row in kinds.items():
        assert row["worker"] in ("learner", "judge"), kind
        assert row["failures"] and set(row["failures"]) <= set(known["failures"]), kind
        # the judge runs no learner code: none of its kinds has its worker retired after it
        assert not (row["worker"] == "judge" and row.get("retire")), kind


class FakeJob:
    """The worker's handle, recorded: when the code started, and what it emitted."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.events: list[dict] = []

    def started(self) -> None:
        self.calls.append("started")

    def emit(self, data: dict) -> None:
        self.events.append(data)


def _plain(x: object) -> bool:
    if isinstance(x, dict):
        return all(type(k) is str and _plain(v) for k, v in x.items())
    if isinstance(x, list):
        return all(_plain(v) for v in x)
    return x is None or type(x) in (bool, int, float, str)


def _cell(exercise_id: str) -> str:
    return LESSONS[exercise_id].exercise(blanked=False)


def test_run_says_a_syntax_error_before_it_starts_and_starts_a_good_cell(capfd):
    job = FakeJob()
    assert jobs.run(job, "x = (1 +\n") == {"ok": False, "result": {"slip": None}}
    assert job.calls == [] and "SyntaxError" in capfd.readouterr().err
    job = FakeJob()
    assert jobs.run(job, "print(6 * 7)\n", None) == {"ok": True, "result": None}
    assert job.calls == ["started"] and capfd.readouterr().out == "42\n"


def test_run_names_a_blank_left_in_as_a_slip_code_not_a_sentence(capfd):
    job = FakeJob()
    assert jobs.run(job, "x = _____\n") == {"ok": False, "result": {"slip": "blank"}}
    err = capfd.readouterr().err
    assert job.calls == ["started"] and "NameError" in err and "Hint" not in err


def test_check_then_verdict_pass_an_answer_through_plain_data_only():
    exercise_id = "ppo/importance_ratio"
    job = FakeJob()
    # by id in the browser (the wheel's manifest); under CPython, the lesson's own manifest entry
    exercise = EXERCISES[exercise_id]
    phase1 = jobs.check(job, exercise, _cell(exercise_id), None, 7)
    assert job.calls == ["started"] and _plain(phase1)
    judged = jobs.verdict(FakeJob(), exercise, 7, phase1["result"]["phase1"])
    assert _plain(judged)
    result = judged["result"]
    assert result["seed"] == 7 and result["passed"] == result["total"] > 0


def test_check_reads_a_seed_that_is_no_32_bit_unsigned_integer_as_0():
    exercise_id = "ppo/importance_ratio"
    exercise = EXERCISES[exercise_id]
    for seed in (-1, 2**32, 1.5, "3", None):
        phase1 = jobs.check(FakeJob(), exercise, _cell(exercise_id), None, seed)
        judged = jobs.verdict(FakeJob(), exercise, seed, phase1["result"]["phase1"])
        assert judged["result"]["seed"] == 0, seed


def test_check_hands_a_syntax_error_to_the_judge_without_starting():
    job = FakeJob()
    exercise = EXERCISES["ppo/importance_ratio"]
    phase1 = jobs.check(job, exercise, "def f(:\n", None, 1)
    assert job.calls == []
    judged = jobs.verdict(FakeJob(), exercise, 1, phase1["result"]["phase1"])
    error = judged["result"]["error"]
    assert judged["result"]["passed"] == 0 and "SyntaxError" in error["message"], error


def test_demo_emits_each_logged_step_and_returns_its_metrics():
    job = FakeJob()
    small = {"corpus_size": 100, "sft_steps": 2, "sft_batch": 8, "ppo_steps": 2, "ppo_batch": 8,
             "dpo_prompts": 16, "dpo_steps": 2, "dpo_batch": 8, "eval_words": 8, "log_every": 1}
    outcome = jobs.demo(job, small)
    assert job.calls == ["started"] and outcome["ok"] is True
    assert job.events and {"phase", "step", "total", "metrics"} <= set(job.events[0])
    assert _plain(outcome) and {"ppo", "dpo"} <= set(outcome["result"])
    assert all(math.isfinite(v) for v in job.events[-1]["metrics"].values())


def test_every_failure_code_is_worded_in_every_language_of_strings_toml():
    import tomllib

    script = ("import('./js/job.js').then((m) => console.log(JSON.stringify("
              "{watchdogs: m.WATCHDOGS, causes: m.LOAD_CAUSES})))")
    codes = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT,
                                      check=True, capture_output=True, text=True).stdout)
    table = tomllib.loads((ROOT / "js" / "strings.toml").read_text(encoding="utf-8"))
    for group, names in (("stuck", codes["watchdogs"]), ("load", codes["causes"])):
        assert set(table[group]) == set(names), group
        for name in names:
            assert set(table[group][name]) == {"zh", "en"}, (group, name)


def test_the_page_arms_only_watchdogs_the_table_names():
    import re

    script = "import('./js/job.js').then((m) => console.log(JSON.stringify(m.WATCHDOGS)))"
    watchdogs = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT,
                                          check=True, capture_output=True, text=True).stdout)
    source = (ROOT / "js" / "python.js").read_text(encoding="utf-8")
    armed = set(re.findall(r'(?:_watchdog\(job, |stuck\()"(\w+)"', source))
    assert armed and armed <= set(watchdogs), armed


# one outcome of each failure code, with the values the page gives it (js/job.js FAILURES)
FAILED_OUTCOMES = [
    *({"state": "failed", "failure": {"kind": "load", "what": "pyodide.asm.wasm", "cause": cause,
                                      "status": 404, "seconds": 30, "detail": "E", "offline": off}}
      for cause in ("http", "network", "timeout", "start") for off in (False, True)),
    *({"state": "failed", "restarted": True,
       "failure": {"kind": "stuck", "watchdog": w, "seconds": 5, "offline": off}}
      for w in ("ack", "stall", "quiet", "verdict") for off in (False, True)),
    {"state": "failed", "failure": {"kind": "stale", "what": "wheel", "got": "a", "want": "b"}},
    {"state": "failed", "failure": {"kind": "died", "message": "E"}},
    {"state": "failed", "failure": {"kind": "error", "message": "E"}},
    {"state": "timed-out", "restarted": True},
    {"state": "stopped", "restarted": True},
    {"state": "stopped"},
]
# what a Chinese sentence may hold in Latin letters: names of files and programs
NAMES = {"Python", "worker", "HTTP", "pyodide", "asm", "wasm"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_failure_is_said_in_the_pages_language_and_only_errors_blame_the_site(lang):
    import re

    from site_build.ui_strings import table

    script = f"""
      const config = {json.dumps({"strings": table(lang)})};
      globalThis.document = {{ getElementById: () => ({{ textContent: JSON.stringify(config) }}),
                               documentElement: {{ lang: "{lang}" }} }};
      const {{ describeOutcome, strings }} = await import("./js/i18n.js");
      const t = strings();
      const said = {json.dumps(FAILED_OUTCOMES)}
        .map((o) => describeOutcome(o, t, {{ limitMs: 3000 }}));
      console.log(JSON.stringify(said));
    """
    said = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT,
                                     check=True, capture_output=True, text=True).stdout)
    site_blamed = table(lang)["exerciseError"].split("{")[0]
    for outcome, words in zip(FAILED_OUTCOMES, said, strict=True):
        text = words["text"]
        assert "{" not in text and "undefined" not in text, (outcome, text)
        # the site's own code is blamed for an exception in it, and for nothing else
        is_error = outcome.get("failure", {}).get("kind") == "error"
        assert (site_blamed in text) == is_error, (outcome, text)
        if lang == "zh":
            english = set(re.findall(r"[A-Za-z]{2,}", text)) - NAMES
            assert not english, (outcome, text)


def _check_failures() -> list[dict]:
    """One Check result of each error and reason code Python reports (browser_runtime/check.py),
    made the way a learner (or a forged phase 1) makes it, through the judge's plain data."""
    from browser_runtime import check as checker

    exercise = EXERCISES["ppo/importance_ratio"]

    def judged(code: str, **forged: object) -> dict:
        phase1 = json.loads(json.dumps(checker.plain_phase1(
            checker.learner_outputs(exercise, code, seed=1))))
        return checker.judge(exercise, {**phase1, **forged}, seed=1)

    blank = LESSONS["ppo/importance_ratio"].exercise(blanked=True)
    head = "import numpy as np\ndef importance_ratio(*args):\n"
    return [
        judged("def importance_ratio(:\n"),  # raised: a syntax error
        judged("x = _____\n"),  # raised, slip blank: at the top level
        judged(blank),  # a reason raised, slip blank: inside the function
        judged("def something_else(): pass\n"),  # undefined
        judged(head + "    return {}\n"),  # type: returned
        judged(head + "    return np.array([object()])\n"),  # type: dtype
        judged(head + "    return 1.0\n", outputs=[{"type": {"holding": "str"}}] * 36,
               shrunk=None),
        judged(head + "    return 1.0\n", outputs=[{"type": "a forged sentence"}] * 36,
               shrunk=None),
        judged(head + "    return 1.0\n", error={"code": "raised", "message": "m", "slip": "x"}),
        checker.judge(exercise, "not a dict", seed=1),  # norun
    ]


def test_each_check_error_and_reason_is_a_code_with_values_never_a_sentence_of_ours():
    results = _check_failures()
    errors = [r["error"] for r in results]
    reasons = [r["failures"][0]["reason"] if r["failures"] else None for r in results]
    assert [e and e["code"] for e in errors] == [
        "raised", "raised", None, "undefined", None, None, None, None, "norun", "norun"]
    assert errors[0]["slip"] is None and errors[1]["slip"] == "blank"
    assert errors[3] == {"code": "undefined", "name": "importance_ratio"}
    assert reasons[2]["code"] == "raised" and reasons[2]["slip"] == "blank"
    assert reasons[4:8] == [{"code": "type", "returned": "dict"},
                            {"code": "type", "dtype": "object"},
                            {"code": "type", "holding": "str"}, {"code": "type"}]
    # what Python says is Python's own: no hint or explanation of the site's is left in it
    for text in [e["message"] for e in errors if e and "message" in e] + [reasons[2]["message"]]:
        assert "Hint" not in text and "fill" not in text, text


# what a Chinese Check report may hold in Latin letters besides Python's own traceback: the names
# of Python's errors and types and the learner's function
PYTHON_NAMES = {"NameError", "TypeError", "dtype", "object", "dict", "str", "importance_ratio"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_check_error_and_reason_is_said_in_the_pages_language(lang):
    import re

    from site_build.ui_strings import table

    results = _check_failures()
    script = f"""
      const config = {json.dumps({"strings": table(lang)})};
      globalThis.document = {{ getElementById: () => ({{ textContent: JSON.stringify(config) }}),
                               documentElement: {{ lang: "{lang}" }} }};
      const {{ checkErrorText, reasonText, strings }} = await import("./js/i18n.js");
      const t = strings();
      const said = {json.dumps(results)}.map((r) =>
        r.error ? checkErrorText(r.error, t) : reasonText(r.failures[0].reason, t));
      console.log(JSON.stringify(said));
    """
    said = json.loads(subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT,
                                     check=True, capture_output=True, text=True).stdout)
    slip = table(lang)["slip"]["blank"]
    for result, text in zip(results, said, strict=True):
        assert "{" not in text.replace("{}", "") and "undefined" not in text.replace(
            "'undefined'", ""), (result, text)
        assert (slip in text) == (1 <= results.index(result) <= 2), text
        said_by_python = (result["error"] or result["failures"][0]["reason"]).get("message", "")
        assert said_by_python in text
        if lang == "zh":
            ours = text.replace(said_by_python, "")
            english = set(re.findall(r"[A-Za-z][A-Za-z_]+", ours)) - PYTHON_NAMES
            assert not english, (result, ours)
