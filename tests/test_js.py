"""The page's JavaScript that can run outside a browser, under Node's own test runner
(``node --test tests/js/``): the job layer's state machine, with a scripted worker."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import ROOT


def test_node_test_suite_of_the_job_layer_passes():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: `make test` needs Node 20")
    proc = subprocess.run(
        [node, "--test", "--test-reporter=tap", str(ROOT / "tests" / "js")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    summary = "\n".join(ln for ln in proc.stdout.splitlines() if ln.startswith(("# ", "not ok")))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # every state pair, and the runtime's ways for a job to end
    assert "# fail 0" in summary and int(summary.split("# pass ")[1].split()[0]) >= 50, summary
