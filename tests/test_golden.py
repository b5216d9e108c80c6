"""Every expected output shown on a page is what the lesson code prints today, in the page's
language (``compute_gae.out`` from the file as written, ``compute_gae.zh.out`` from its Chinese
text): with PyTorch on this machine, with PyTorch's generic CPU kernels, and in the browser's
torch layer, also on NumPy's baseline kernels. So every reader sees the page's numbers, whatever
their CPU."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from site_build.lessons import LANGUAGES

from .conftest import ROOT, SCRIPTS
from .golden import golden_path, run_lesson

CASES = [(script_id, lang) for script_id in sorted(SCRIPTS) for lang in LANGUAGES]


@pytest.mark.parametrize(("exercise_id", "lang"), CASES)
def test_golden_output_is_what_torch_prints(exercise_id, lang):
    lesson = SCRIPTS[exercise_id].in_language(lang)
    path = golden_path(lesson)
    assert path.exists(), f"{path} is missing: run `make golden`"
    assert run_lesson(lesson) == path.read_text(encoding="utf-8"), (
        f"{path} is stale: the lesson now prints something else; run `make golden`"
    )


@pytest.mark.parametrize(("exercise_id", "lang"), CASES)
def test_golden_output_is_what_the_browsers_torch_layer_prints(exercise_id, lang):
    lesson = SCRIPTS[exercise_id].in_language(lang)
    assert run_lesson(lesson, layer=True) == golden_path(lesson).read_text(encoding="utf-8")


@pytest.mark.parametrize("exercise_id", sorted(SCRIPTS))
def test_each_language_has_its_own_output_with_the_same_numbers(exercise_id):
    # compute_gae.out and compute_gae.zh.out: both there, with the same numbers (only words are
    # translated; a print with no words prints the same in both)
    en, zh = (golden_path(SCRIPTS[exercise_id], lang).read_text("utf-8") for lang in ("en", "zh"))
    assert golden_path(SCRIPTS[exercise_id], "zh").name == f"{exercise_id.split('/')[1]}.zh.out"
    number = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
    assert sorted(number.findall(en)) == sorted(number.findall(zh))
    assert zh == en or re.search(r"[\u4e00-\u9fff]", zh)


def _golden_check(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.golden", *args], cwd=ROOT, env={**os.environ, **env},
        capture_output=True, text=True,
    )


def test_golden_outputs_hold_with_torchs_generic_cpu_kernels():
    # torch's kernels without AVX2/AVX-512: what an ARM or an older x86 CPU runs
    proc = _golden_check(ATEN_CPU_CAPABILITY="default")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_golden_outputs_hold_in_the_layer_on_numpys_baseline_kernels():
    from numpy._core._multiarray_umath import __cpu_dispatch__

    # NumPy without any of its dispatched SIMD kernels (on AVX-512 CPUs: no SVML exp/log/pow)
    proc = _golden_check("--layer", NPY_DISABLE_CPU_FEATURES=",".join(__cpu_dispatch__))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("exercise_id", sorted(SCRIPTS))
def test_lessons_draw_random_inputs_on_torchs_cpu_independent_path(exercise_id, monkeypatch):
    # torch's randn of 16 or more values depends on the CPU's vector kernels; fewer do not
    from browser_runtime.torch_layer.random import Generator

    sizes: list[int] = []
    randn = Generator.randn

    def recorded(self, n, np_dtype):
        sizes.append(n)
        return randn(self, n, np_dtype)

    monkeypatch.setattr(Generator, "randn", recorded)
    run_lesson(SCRIPTS[exercise_id], layer=True)
    assert all(n < 16 for n in sizes), sizes
