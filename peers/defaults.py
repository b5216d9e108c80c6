"""The libraries' configuration defaults that the docstrings state, read from the wheels' source.

A default is a fact about a library as much as a formula is: "TRL 1.16.0 multiplies k3 by ρ by
default" is true only while ``use_bias_correction_kl`` defaults to True. ``make peers`` reads each
stated default where the library defines it (a dataclass field, a YAML key, an argparse option),
with its file and line, into the vector file's ``defaults``; ``tests/test_peers.py`` checks the
values the docstrings rely on.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml

from .fetch import read_source
from .lift import Source


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Lambda):  # default_factory=lambda: ["sigmoid"]
        node = node.body
    return ast.literal_eval(node)


def dataclass_fields(src: Source, cls: str, *names: str) -> dict[str, dict[str, Any]]:
    """``{"Cls.name": {"value", "module", "line"}}`` of dataclass fields ``name: T = field(
    default=…)`` (or ``default_factory=lambda: …``, or a plain value)."""
    out = {}
    for node in src.node(cls).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if name not in names or node.value is None:
                continue
            value = node.value
            if isinstance(value, ast.Call):
                kw = {k.arg: k.value for k in value.keywords}
                value = kw.get("default", kw.get("default_factory"))
            out[f"{cls}.{name}"] = {"value": _literal(value), "module": src.module_path,
                                    "line": node.lineno}
    missing = {f"{cls}.{n}" for n in names} - set(out)
    assert not missing, missing
    return out


def yaml_keys(wheel: Path, path: str, *keys: str) -> dict[str, dict[str, Any]]:
    """``{"path:key": {"value", "module", "line"}}`` of keys of a YAML file; a dotted key such
    as ``algorithm.kl_ctrl.kl_coef`` is looked up part by part."""
    _, text = read_source(wheel, path)
    data = yaml.safe_load(text)
    lines = text.splitlines()
    out = {}
    for key in keys:
        value: Any = data
        line = 0
        for part in key.split("."):
            value = value[part]
            # the part's line, after its parent's
            line = next(n for n in range(line, len(lines))
                        if re.match(rf"\s*{re.escape(part)}:", lines[n])) + 1
        out[f"{path}:{key}"] = {"value": value, "module": path, "line": line}
    return out


def argparse_options(src: Source, *flags: str) -> dict[str, dict[str, Any]]:
    """``{"--flag": {"value", "module", "line"}}``: the ``default=`` of ``add_argument(flag)``."""
    out = {}
    for node in ast.walk(src.tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument" and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in flags):
            kw = {k.arg: k.value for k in node.keywords}
            value = _literal(kw["default"]) if "default" in kw else None
            out[node.args[0].value] = {"value": value, "module": src.module_path,
                                       "line": node.lineno}
    missing = set(flags) - set(out)
    assert not missing, missing
    return out
