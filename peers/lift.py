"""A library's own code, lifted from its wheel with ``ast`` and run without importing the package.

``Source(wheel, "verl/trainer/ppo/core_algos.py")`` parses one module of the wheel. From it:

- :meth:`Source.define` compiles top-level functions, classes and constants (by name, or a
  method by its qualified name ``Class.method``, which becomes a plain function taking a stand-in
  ``self``) into a namespace that holds stand-ins for what the module imports;
- :meth:`Source.statements` compiles a run of statements inside a function, for formulas that
  sit in the middle of a trainer method too large to call (generation, reward models).

Decorators are dropped (registries, ``torch.no_grad``, ``torch.compile``); nothing else is changed.
Every lifted piece records where it came from (module path, qualified name, first and last line),
which goes into the vectors' provenance.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from .fetch import Pin, read_source


def _find(body: list[ast.stmt], name: str) -> ast.stmt:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
    raise KeyError(name)


class Source:
    """One module of a pinned wheel, parsed."""

    def __init__(self, pin: Pin, wheel: Path, module_path: str):
        self.pin = pin
        self.member, self.text = read_source(wheel, module_path)
        self.module_path = module_path  # "verl/trainer/ppo/core_algos.py": no wheel-layout prefix
        self.tree = ast.parse(self.text, filename=self.member)
        self.lifted: dict[str, dict[str, Any]] = {}  # qualified name → where it came from

    def node(self, qualname: str) -> ast.stmt:
        """The definition ``qualname`` ("agg_loss", "GRPOTrainer._compute_loss") in the module."""
        body: list[ast.stmt] = self.tree.body
        node: ast.stmt | None = None
        for part in qualname.split("."):
            node = _find(body, part)
            body = getattr(node, "body", [])
        assert node is not None
        return node

    def _where(self, qualname: str, first: int, last: int, kind: str) -> dict[str, Any]:
        return {"module": self.module_path, "qualname": qualname, "lines": [first, last],
                "kind": kind}

    def define(self, namespace: dict[str, Any], *qualnames: str) -> dict[str, Any]:
        """Compile each definition into ``namespace`` (its globals) and return the namespace.

        A method ``Class.method`` is bound under its own name (``_compute_loss``) as a plain
        function of a stand-in ``self``."""
        for qualname in qualnames:
            node = self.node(qualname)
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                node.decorator_list = []  # registries, torch.no_grad, torch.compile
            code = compile(ast.Module(body=[node], type_ignores=[]), self.member, "exec")
            exec(code, namespace)
            kind = "method" if "." in qualname else type(node).__name__
            self.lifted[qualname] = self._where(qualname, node.lineno, node.end_lineno, kind)
        return namespace

    def statements(self, qualname: str, first: str, last: str) -> tuple[Any, dict[str, Any]]:
        """The statements of ``qualname`` from the one that starts with source text ``first`` to
        the one that starts with ``last`` (both included, in one block of statements, at any
        depth: a loop's or a ``with``'s body too), compiled; run the code object with
        ``exec(code, namespace)``."""
        func = self.node(qualname)
        lines = self.text.splitlines()

        def starts(stmt: ast.stmt, prefix: str) -> bool:
            return lines[stmt.lineno - 1].strip().startswith(prefix)

        blocks = [getattr(n, f) for n in ast.walk(func)
                  for f in ("body", "orelse", "finalbody") if isinstance(getattr(n, f, None), list)]
        found = []
        for body in blocks:
            i = [k for k, st in enumerate(body) if starts(st, first)]
            j = [k for k, st in enumerate(body) if starts(st, last)]
            if len(i) == 1 and len(j) == 1 and i[0] <= j[0]:
                found.append(body[i[0] : j[0] + 1])
        if len(found) != 1:
            raise RuntimeError(f"{qualname}: {len(found)} blocks run from {first!r} to {last!r}")
        run = found[0]
        code = compile(ast.Module(body=run, type_ignores=[]), self.member, "exec")
        where = {**self.pin.provenance(),
                 **self._where(qualname, run[0].lineno, run[-1].end_lineno, "statements")}
        self.lifted[f"{qualname}[{run[0].lineno}:{run[-1].end_lineno}]"] = where
        return code, where

    def where(self, qualname: str) -> dict[str, Any]:
        """Provenance of a lifted definition: pin, module, qualified name, lines."""
        return {**self.pin.provenance(), **self.lifted[qualname]}
