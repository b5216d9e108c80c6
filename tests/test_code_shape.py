"""The shape of the code (issue 36): no Python function outside ``tests/`` runs over 150 lines.

A function's length is counted from its ``def`` line to its last line (docstring, comments and
blank lines inside it included); nested functions and methods are counted on their own too.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 150  # lines, def line to last line
# not the project's own code outside the tests: the tests, installed packages, built output
SKIPPED_DIRS = {"tests", ".venv", "node_modules", "site", ".cache", "build", "dist", ".git",
                "__pycache__"}


def python_files(root: Path) -> list[Path]:
    """Every ``.py`` file under ``root`` outside :data:`SKIPPED_DIRS` (and ``*.egg-info``)."""
    files = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
        files += [Path(here) / n for n in sorted(names) if n.endswith(".py")]
    return files


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of every function in ``source`` longer than ``limit``."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                length = child.end_lineno - child.lineno + 1
                if length > limit:
                    found.append((name[:-1], length))
            visit(child, name)

    visit(ast.parse(source), "")
    return found


def _function(lines: int) -> str:
    """A function of ``lines`` lines (def line to last line), nested in a class."""
    body = "".join(f"        x{k} = {k}\n" for k in range(lines - 2))
    return f"class C:\n    def f(self):\n{body}        return 0\n"


def test_the_length_check_finds_a_function_one_line_over_the_limit_and_not_one_at_it():
    assert long_functions(_function(LIMIT)) == []
    assert long_functions(_function(LIMIT + 1)) == [("C.f", LIMIT + 1)]


def test_no_python_function_body_outside_tests_is_over_150_lines():
    files = python_files(ROOT)
    assert ROOT / "peers" / "verl.py" in files  # the walk reaches the project's code
    offenders = [f"{path.relative_to(ROOT)}: {name} is {length} lines"
                 for path in files
                 for name, length in long_functions(path.read_text(encoding="utf-8"))]
    assert not offenders, f"functions over {LIMIT} lines:\n" + "\n".join(offenders)
