"""sandbox.restore puts back what a learner's code changed in the shared interpreter (CPython
here; tests/test_wasm.py runs the same patches in Pyodide)."""

from __future__ import annotations

import builtins
import subprocess
import sys

import numpy as np
import pytest

from browser_runtime import check, sandbox, torch_layer
from browser_runtime.runner import run_cell

# learner code -> a probe that is true once the interpreter is as it was
PATCHES = {
    "numpy function": ("import numpy as np\nnp.allclose = lambda *a, **k: True",
                       lambda o: np.allclose is o["allclose"]),
    "builtin": ("import builtins\nbuiltins.print = None\nbuiltins.len = None",
                lambda o: builtins.print is o["print"] and builtins.len is o["len"]),
    "new builtin": ("import builtins\nbuiltins.cheat = 1",
                    lambda o: not hasattr(builtins, "cheat")),
    "stdout": ("import sys, io\nsys.stdout = io.StringIO()", lambda o: sys.stdout is o["stdout"]),
    "recursion limit": ("import sys\nsys.setrecursionlimit(120)",
                        lambda o: sys.getrecursionlimit() == o["limit"]),
    "trace hook": ("import sys\nsys.settrace(lambda *a: None)", lambda o: sys.gettrace() is None),
    "checker function": (
        "import browser_runtime.check as c\nc.verdict = None",
        lambda o: check.verdict is o["verdict"]),
    "function code": (
        "import browser_runtime.check as c\nc._differs.__code__ = (lambda *a: None).__code__",
        lambda o: check._differs.__code__ is o["differs_code"]),
    "function defaults": (
        "import browser_runtime.check as c\nc.check.__defaults__ = (None, 1, 1)",
        lambda o: check.check.__defaults__ is o["check_defaults"]),
    "class method": (
        "from browser_runtime import torch_layer as t\nt.Tensor.__add__ = None\n"
        "t.Tensor.extra = 1",
        lambda o: torch_layer.Tensor.__add__ is o["add"] and not hasattr(torch_layer.Tensor,
                                                                          "extra")),
    "fake module": ("import sys, types\nsys.modules['numpy'] = types.ModuleType('numpy')\n"
                    "sys.modules['planted'] = types.ModuleType('planted')",
                    lambda o: sys.modules["numpy"] is np and "planted" not in sys.modules),
    "modules dict": ("import sys\nsys.modules = {}", lambda o: sys.modules is o["modules"]),
    "numpy settings": ("import numpy as np\nnp.seterr(all='raise')\n"
                       "np.set_printoptions(precision=1)",
                       lambda o: np.geterr() == o["err"]
                       and np.get_printoptions()["precision"] == o["precision"]),
}


def _originals() -> dict:
    return {
        "allclose": np.allclose, "print": builtins.print, "len": builtins.len,
        "stdout": sys.stdout, "limit": sys.getrecursionlimit(), "verdict": check.verdict,
        "differs_code": check._differs.__code__, "check_defaults": check.check.__defaults__,
        "add": torch_layer.Tensor.__add__, "modules": sys.modules, "err": np.geterr(),
        "precision": np.get_printoptions()["precision"],
    }


@pytest.mark.parametrize("what", sorted(PATCHES))
def test_restore_puts_back_what_a_learners_code_changed(what):
    code, probe = PATCHES[what]
    originals = _originals()
    snap = sandbox.snapshot()
    try:
        assert run_cell(code)
        assert not probe(originals)  # the patch took effect
    finally:
        problems = sandbox.restore(snap)
    assert probe(originals) and problems == []


def test_restore_calls_nothing_a_learner_can_rebind():
    snap = sandbox.snapshot()
    # what restore would find by name, were it to look anything up, is broken first
    run_cell("import builtins\nfor name in ('dict', 'list', 'len', 'isinstance', 'print'):\n"
             "    setattr(builtins, name, None)\n"
             "import browser_runtime.sandbox as s\ns.snapshot = None\n")
    assert sandbox.restore(snap) == []
    assert builtins.dict is dict and builtins.len is len


def test_restore_reports_what_it_cannot_put_back():
    snap = sandbox.snapshot()
    assert sandbox.restore(snap, heap=2 * sandbox.HEAP_LIMIT) == ["the heap grew to 2048 MB"]


def test_an_added_audit_hook_asks_for_a_fresh_interpreter():
    # audit hooks cannot be removed: in a process of its own
    code = (
        "from browser_runtime import sandbox\nfrom browser_runtime.runner import "
        "run_cell\nsnap = sandbox.snapshot()\nrun_cell('import sys\\nsys.addaudithook("
        "lambda *a: None)')\nprint(sandbox.restore(snap))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "an audit hook was added" in out.stdout


def test_a_closed_standard_stream_asks_for_a_fresh_interpreter(monkeypatch):
    import io

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    snap = sandbox.snapshot()
    stream.close()
    assert "a standard stream was closed" in sandbox.restore(snap)


def test_restore_cancels_the_tasks_a_run_started_and_leaves_those_already_running():
    # pytest's own process can hold an event loop (Playwright's, in the browser tests): a job's
    # clean-up must not cancel what was running before it. In a fresh interpreter, so that the
    # loop the learner's code finds is the one this test made.
    code = """
import asyncio
from browser_runtime import sandbox
from browser_runtime.runner import run_cell
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
before = loop.create_task(asyncio.sleep(60))
seen = {}  # made before the snapshot: restore removes names bound after it
snap = sandbox.snapshot()
run_cell("import asyncio\\nghost = asyncio.ensure_future(asyncio.sleep(60))")
(seen["ghost"],) = asyncio.all_tasks(loop) - {before}
seen["problems"] = sandbox.restore(snap)
loop.run_until_complete(asyncio.sleep(0))  # let the cancellation land
print(seen["problems"], seen["ghost"].cancelled(), before.done())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True", "False"]
