"""Site build: cold and warm full builds, and what KaTeX costs per formula, as a ratio against the
same build with math disabled.

Targets (issue 3): under 20 ms per formula cold; a warm rebuild within 2× of a build with no math.
"Cold" means markdown-katex's formula cache is empty (a fresh TMPDIR); "warm" reuses it.
"""

from __future__ import annotations

import os
import re
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
    """mkdocs.yml without markdown_katex (formulas stay as text), next to it so paths resolve."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = re.sub(r"\n  - markdown_katex:\n(?:      .*\n)+", "\n", text)
    path = ROOT / ".cache" / "mkdocs-no-math.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace("docs_dir: docs", "docs_dir: ../docs").replace(
        "custom_dir: overrides", "custom_dir: ../overrides").replace(
        "  - overrides/hooks/site.py", "  - ../overrides/hooks/site.py"), encoding="utf-8")
    return path


def build(config: Path, tmpdir: str) -> float:
    out = tempfile.mkdtemp(prefix="bench-site-")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": tmpdir}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", out],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )
    return time.perf_counter() - start


def main() -> bool:
    formulas = count_formulas()
    cold_tmp = tempfile.mkdtemp(prefix="bench-katex-")
    build(no_math_config(), cold_tmp)  # warm everything but math (wheel, demo run, jieba)
    no_math = min(build(no_math_config(), cold_tmp) for _ in range(2))
    cold = build(ROOT / "mkdocs.yml", cold_tmp)
    warm = min(build(ROOT / "mkdocs.yml", cold_tmp) for _ in range(2))
    per_formula = (cold - no_math) / formulas
    print(f"{formulas} formulas (both languages)")
    print(f"build without math:   {no_math:6.2f} s")
    print(f"cold build with math: {cold:6.2f} s   ({per_formula * 1000:.1f} ms per formula)")
    print(f"warm build with math: {warm:6.2f} s   ({warm / no_math:.2f}× the build without math)")
    ok_cold, ok_warm = per_formula < 0.020, warm / no_math <= 2
    print(f"target: under 20 ms per formula cold: {'PASS' if ok_cold else 'FAIL'}")
    print(f"target: warm rebuild within 2× of no math: {'PASS' if ok_warm else 'FAIL'}")
    return ok_cold and ok_warm
