"""Runs inside Pyodide (tests/wasm/pyodide_node.mjs): every Python path the browser takes.

Reads ``/work/tasks.json`` (written by tests/test_wasm.py), runs each task with the wheel the
site ships on Pyodide's wasm32 numpy, and writes ``/work/results.json``:

- ``lessons``: each lesson file run under the torch layer -> what it prints;
- ``checks``: the checker on a learner's code -> its result (as the page receives it);
- ``cells``: the cell runner on a learner's code -> ok, stdout, stderr;
- ``expressions``: torch expressions under the layer -> dtype, shape, repr and values;
- ``demo``: the toy RLHF run on a given configuration -> its final metrics.
"""

import contextlib
import io
import json
import math
import sys

import numpy as np

from browser_runtime import install_torch

torch = install_torch()

from browser_runtime import check, runner  # noqa: E402

tasks = json.loads(open("/work/tasks.json", encoding="utf-8").read())
results: dict = {"platform": {"intp": np.dtype(np.intp).name, "numpy": np.__version__,
                              "python": sys.version.split()[0]}}


def captured(fn):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        value = fn()
    return value, out.getvalue(), err.getvalue()


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


results["lessons"] = {ex: lesson_output(text) for ex, text in tasks["lessons"].items()}
# by id: the exercise comes from the manifest inside the site's wheel
results["checks"] = [
    check.check(t["exercise_id"], t["code"], t.get("parts")) for t in tasks["checks"]
]
results["cells"] = []
for cell in tasks["cells"]:
    ok, out, err = captured(lambda cell=cell: runner.run_cell(cell["code"], cell.get("parts")))
    results["cells"].append({"ok": ok, "stdout": out, "stderr": err})
results["expressions"] = {expr: expression(expr) for expr in tasks["expressions"]}

if tasks.get("demo") is not None:
    from rl_ops_numpy.demo import run

    demo = run(tasks["demo"])
    results["demo"] = {phase: {k: v[-1] for k, v in demo[phase].items() if k != "step"}
                       for phase in ("ppo", "dpo")}

open("/work/results.json", "w", encoding="utf-8").write(json.dumps(results))
