"""Site build: cold and warm full builds, and what KaTeX costs per formula, as a ratio against the
same build with math disabled.

Targets (issue 3): under 20 ms per formula cold; a warm rebuild within 2× of a build with no math.
"Cold" means the plugin's formula cache (``.cache/katex``) is empty; "warm" reuses it. The build
without math sets the plugin's ``math: false``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def count_formulas() -> int:
    n = 0
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        n += len(re.findall(r"\$`", text)) + text.count("```math")
    return n


def no_math_config() -> Path:
    """mkdocs.yml with the plugin's ``math: false`` (formulas stay as text), next to it."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("  - rl-ops:\n", "  - rl-ops:\n      math: false\n")
    path = ROOT / "mkdocs-no-math.yml"
    path.write_text(text, encoding="utf-8")
    return path


def build(config: Path, cold: bool = False) -> float:
    if cold:
        shutil.rmtree(ROOT / ".cache" / "katex", ignore_errors=True)
    out = tempfile.mkdtemp(prefix="bench-site-")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", out],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )
    return time.perf_counter() - start


def main() -> bool:
    formulas = count_formulas()
    no_math_yml = no_math_config()
    try:
        build(no_math_yml)  # warm everything but math (demo run, Pyodide, jieba)
        no_math = min(build(no_math_yml) for _ in range(2))
    finally:
        no_math_yml.unlink()
    cold = build(ROOT / "mkdocs.yml", cold=True)
    warm = min(build(ROOT / "mkdocs.yml") for _ in range(2))
    per_formula = (cold - no_math) / formulas
    print(f"{formulas} formulas (both languages)")
    print(f"build without math:   {no_math:6.2f} s")
    print(f"cold build with math: {cold:6.2f} s   ({per_formula * 1000:.1f} ms per formula)")
    print(f"warm build with math: {warm:6.2f} s   ({warm / no_math:.2f}× the build without math)")
    ok_cold, ok_warm = per_formula < 0.020, warm / no_math <= 2
    print(f"target: under 20 ms per formula cold: {'PASS' if ok_cold else 'FAIL'}")
    print(f"target: warm rebuild within 2× of no math: {'PASS' if ok_warm else 'FAIL'}")
    return ok_cold and ok_warm
