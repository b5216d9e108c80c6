"""The Python of each kind of job, the only Python the browser's worker calls (js/worker.js).

One function per kind of ``js/job.js`` ``KINDS`` whose ``python`` is true, of the kind's name
(``tests/test_jobs.py`` checks both ways). Each takes ``job``, the worker's handle, and the job's
payload as keyword arguments, plain data (str, int, float, bool, None, lists and dicts), and
returns the job's outcome as plain data, ``{"ok": bool, "result": ...}``:

- ``job.started()`` says that the job's code (the learner's, or the demo) runs from here: the page
  counts the time limit from it, and a Stop interrupts Python only after it. What is said before
  it (a syntax error) is said before anything else runs;
- ``job.emit(data)`` sends a value the page shows while the job runs (the demo's curves; the page
  takes events only from a kind with ``events``).

Where what is printed goes (the job's output, or nowhere for Check) is the kind's ``output`` in
``KINDS``, set by the worker before the call. The payload comes from the page, which a learner's
code never reaches, but each function still takes only what its kind's row names, and reads it
strictly (a seed that is no 32-bit unsigned integer is 0).
"""

from __future__ import annotations

import sys
from typing import Protocol

from . import check as checker
from . import runner


class Job(Protocol):
    """The worker's handle on the job (js/worker.js ``handle``)."""

    def started(self) -> None: ...

    def emit(self, data: dict) -> None: ...


def _seed(seed: object) -> int:
    """A Check's seed: a 32-bit unsigned integer (js/runtime.js draws it), else 0."""
    return seed if type(seed) is int and 0 <= seed < 2**32 else 0


def _parts(parts: object) -> list[dict] | None:
    """A cell's parts (``[{"name", "first", "length"}]``) as the runner reads them, else None."""
    return parts if type(parts) is list and parts else None


def run(job: Job, code: str, parts: list[dict] | None = None) -> dict:
    """Run: the cell's code, its errors on stderr in the learner's terms; ``ok`` when it ran to
    its end, else ``result.slip``: the common slip behind the error (:func:`runner.slip`, the
    page words it) or None. A syntax error is said before the job starts."""
    parts = _parts(parts)
    error = runner.syntax_error(code, parts)
    if error:
        sys.stderr.write(error)
        return {"ok": False, "result": {"slip": None}}
    job.started()
    ran = runner.run_cell(code, parts)
    return {"ok": ran["ok"], "result": None if ran["ok"] else {"slip": ran["slip"]}}


def check(job: Job, exercise: str | checker.Exercise, code: str,
          parts: list[dict] | None = None,
          seed: int = 0) -> dict:
    """Check's phase 1, in the learner's worker: their function on the seed's inputs, handed to
    the judge as plain data (``result.phase1``, :func:`browser_runtime.check.plain_phase1`)."""
    parts = _parts(parts)
    error = runner.syntax_error(code, parts)
    if error:
        phase1 = {"outputs": [], "error": {"code": "raised", "message": error, "slip": None},
                  "shrunk": None}
        return {"ok": True, "result": {"phase1": phase1}}
    job.started()
    phase1 = checker.learner_outputs(exercise, code, parts, seed=_seed(seed))
    return {"ok": True, "result": {"phase1": checker.plain_phase1(phase1)}}


def verdict(job: Job, exercise: str | checker.Exercise, seed: int = 0,
            phase1: object = None) -> dict:
    """Check's verdict, in the judge's worker (no learner code ever runs there): phase 1's plain
    data against the references (:func:`browser_runtime.check.judge`)."""
    job.started()
    return {"ok": True, "result": checker.judge(exercise, phase1, seed=_seed(seed))}


def demo(job: Job, config: dict | None = None) -> dict:
    """The toy RLHF run on the browser's configuration with the fields the page chose (e.g. the
    runs beside GRPO); each logged step is an event, and the result is its final metrics."""
    from rl_ops_numpy import demo as toy

    settings = toy.DemoConfig.browser(**(config if type(config) is dict else {}))
    job.started()

    def on_log(phase: str, step: int, total: int, metrics: dict) -> None:
        job.emit({"phase": phase, "step": step, "total": total, "metrics": metrics})

    return {"ok": True, "result": toy.run(settings, on_log)}
