"""Runs inside Pyodide (tests/wasm/pyodide_node.mjs): every Python path the browser takes.

Reads ``/work/tasks.json`` (written by tests/test_wasm.py), runs each task with the wheel the
site ships on Pyodide's wasm32 numpy, and writes ``/work/results.json``:

- ``lessons``: each lesson file run under the torch layer -> what it prints;
- ``checks``: Check on a learner's code as the page runs it (phase 1, its plain data through
  JSON, then the judge's verdict) -> the verdict the page receives, by the task's key;
- ``runs``: Run on a cell's program (the cell runner) -> ok, stdout, stderr, by the task's key;
- ``cells``: the cell runner on a learner's code -> ok, stdout, stderr;
- ``expressions``: torch expressions under the layer -> dtype, shape, repr and values;
- ``demo``: the toy RLHF run on a given configuration -> its final metrics;
- ``seconds``: how long each kind of task took (for whoever reads the timings; not asserted).
"""

import contextlib
import io
import json
import math
import os
import sys
import time

import numpy as np

from browser_runtime import install_torch

torch = install_torch()

from browser_runtime import check, runner  # noqa: E402

tasks = json.loads(open("/work/tasks.json", encoding="utf-8").read())
results: dict = {"platform": {"intp": np.dtype(np.intp).name, "numpy": np.__version__,
                              "python": sys.version.split()[0]}}


def captured(fn):
    """What ``fn`` prints: stdout from sys.stdout; stderr from file descriptor 2 itself, where
    the cell runner says an error (``runner.tell``) and sys.stderr writes too, as the page's
    worker reads it."""
    out = io.StringIO()
    sys.stderr.flush()
    saved = os.dup(2)
    with open("/tmp/stderr", "w+b") as err:
        os.dup2(err.fileno(), 2)
        try:
            with contextlib.redirect_stdout(out):
                value = fn()
            sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return value, out.getvalue(), err.read().decode("utf-8")


def lesson_output(text: str) -> str:
    _, out, _ = captured(lambda: exec(compile(text, "<lesson>", "exec"), {"__name__": "__main__"}))
    return out


def summary(value):
    if isinstance(value, torch.Tensor):
        data = value.detach().numpy()  # a tensor that requires grad refuses numpy()
        return {"tensor": True, "dtype": str(value.dtype), "shape": list(value.shape),
                "repr": repr(value), "values": data.astype(np.float64).reshape(-1).tolist()}
    if isinstance(value, tuple):
        return {"tuple": type(value).__name__, "items": [summary(v) for v in value]}
    if isinstance(value, list):
        return [summary(v) for v in value]
    if isinstance(value, torch.dtype):
        return repr(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


def expression(expr: str):
    names = {"torch": torch, "F": torch.nn.functional, "np": np, "math": math}
    try:
        return summary(eval(expr, names))
    except Exception as exc:
        return {"error": type(exc).__name__}


def run(task: dict) -> dict:
    ran, out, err = captured(lambda: runner.run_cell(task["code"], task.get("parts")))
    return {"ok": ran["ok"], "slip": ran.get("slip"), "stdout": out, "stderr": err}


def checked(task: dict) -> dict:
    """Check as the page does it: phase 1 in the learner's worker, only its plain data (through
    JSON, as structuredClone hands it over) to the judge, the judge's verdict."""
    phase1 = check.learner_outputs(task["exercise_id"], task["code"], task["parts"],
                                   seed=task["seed"])
    plain = json.loads(json.dumps(check.plain_phase1(phase1)))
    return check.judge(task["exercise_id"], plain, seed=task["seed"])


results["seconds"] = {}


def timed(name: str, fn):
    start = time.perf_counter()
    value = fn()
    results["seconds"][name] = round(time.perf_counter() - start, 2)
    return value


results["lessons"] = timed("lessons", lambda: {
    ex: lesson_output(text) for ex, text in tasks["lessons"].items()})
results["runs"] = timed("runs", lambda: {key: run(t) for key, t in tasks["runs"].items()})
# by id: the exercise comes from the manifest inside the site's wheel
results["checks"] = timed("checks", lambda: {
    key: checked(t) for key, t in tasks["checks"].items()})
results["cells"] = [run(cell) for cell in tasks["cells"]]
results["expressions"] = timed("expressions", lambda: {
    expr: expression(expr) for expr in tasks["expressions"]})

if tasks.get("demo") is not None:
    from rl_ops_numpy.demo import run as run_demo

    demo = timed("demo", lambda: run_demo(tasks["demo"]))
    results["demo"] = {phase: {k: v[-1] for k, v in demo[phase].items() if k != "step"}
                       for phase in ("ppo", "dpo")}

open("/work/results.json", "w", encoding="utf-8").write(json.dumps(results))
