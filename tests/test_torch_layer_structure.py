"""The torch layer's structure (``browser_runtime/torch_layer``), read from its source with ``ast``.

1. Its imports go one way: errors, kernels, dtypes, random, printing ← tensor ← nn.functional,
   functions ← the package. The graph counts imports at module level and inside functions alike
   (a function-level import is a cycle hidden until the call), and no function imports a module
   of the layer. Importing a submodule runs its packages' ``__init__`` first, as for any Python
   module; those implicit edges are not counted (as import-linter does not).
2. Every public name can be found with grep: each name a module exports (``__all__``) is a
   ``def``, a ``class`` or a ``name = …`` in the layer, and every attribute of a module or of an
   exported class comes from a statement in its source, none from ``globals().update`` or
   ``setattr`` at run time.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from browser_runtime import torch_layer

PACKAGE = torch_layer.__name__
LAYER = Path(torch_layer.__file__).parent
FUNCTION_OR_CLASS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# what Python itself puts in a class's namespace (no statement of the class body binds them)
CLASS_BOOKKEEPING = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                     "__firstlineno__", "__static_attributes__"}


def layer_modules() -> dict[str, Path]:
    """Every module of the layer, by its dotted name (packages by their ``__init__.py``)."""
    modules = {}
    for path in sorted(LAYER.rglob("*.py")):
        parts = path.relative_to(LAYER).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((PACKAGE, *parts))] = path
    return modules


MODULES = layer_modules()


@dataclass
class Import:
    target: str  # a module of the layer
    nested: bool  # inside a function or class body
    line: int


@dataclass
class Bindings:
    """The names a module's top-level statements bind."""

    defined: set[str] = field(default_factory=set)  # def, class, assignment, or a module import
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name → (module, name)
    star: list[str] = field(default_factory=list)  # modules imported with *


def parse(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(), str(MODULES[module]))


def import_base(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` names (relative to ``module``)."""
    if not node.level:
        return node.module or ""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return ".".join(p for p in (package, node.module) if p)


def import_targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The layer's modules an import statement loads: a named submodule, else the module named."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    base = import_base(module, node)
    submodules = [f"{base}.{alias.name}" for alias in node.names]
    found = [name for name in submodules if name in MODULES]
    if len(found) < len(submodules) and base in MODULES:
        found.append(base)
    return found


def imports(module: str) -> list[Import]:
    """Every import of a layer module in ``module``, at module level or nested."""
    found = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(Import(target, nested, child.lineno)
                             for target in import_targets(module, child))
            visit(child, nested or isinstance(child, FUNCTION_OR_CLASS))

    visit(parse(module), False)
    return found


def bound_names(body: list[ast.stmt]) -> set[str]:
    """Names that ``def``, ``class`` and assignment statements of ``body`` bind."""
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def bindings(module: str) -> Bindings:
    out = Bindings(defined=bound_names(parse(module).body))
    for stmt in parse(module).body:
        if isinstance(stmt, ast.Import):
            out.defined.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom):
            base = import_base(module, stmt)
            for alias in stmt.names:
                if alias.name == "*":
                    out.star.append(base)
                elif base in MODULES and f"{base}.{alias.name}" not in MODULES:
                    out.imported[alias.asname or alias.name] = (base, alias.name)
                else:  # a module, or a name from outside the layer
                    out.defined.add(alias.asname or alias.name)
    return out


def definition(module: str, name: str) -> str | None:
    """Where ``name`` of ``module`` is a literal ``def``/``class``/``name =`` (following the
    layer's imports and ``import *``), or None if it is bound by no statement."""
    found = bindings(module)
    if name in found.defined:
        return module
    if name in found.imported:
        return definition(*found.imported[name])
    for source in found.star:
        if name in importlib.import_module(source).__all__:
            return definition(source, name)
    return None


def load(module: str) -> ModuleType:
    return importlib.import_module(module)


# ---- 1. one direction ---------------------------------------------------------------------------


def test_import_parser_sees_the_layers_relative_imports():
    # so an empty graph cannot pass the tests below: one import of each form is found
    edges = {(m, i.target) for m in MODULES for i in imports(m)}
    assert (f"{PACKAGE}.tensor", f"{PACKAGE}.dtypes") in edges  # from .dtypes import …
    assert (f"{PACKAGE}.printing", f"{PACKAGE}.dtypes") in edges  # from . import dtypes
    assert (f"{PACKAGE}.nn.functional", f"{PACKAGE}.tensor") in edges  # from ..tensor import …
    assert (f"{PACKAGE}.nn", f"{PACKAGE}.nn.functional") in edges  # from . import functional
    assert (PACKAGE, f"{PACKAGE}.nn") in edges  # from . import nn, random


def test_the_layers_imports_at_module_and_function_level_form_no_cycle():
    graph = {module: {i.target for i in imports(module)} for module in MODULES}
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail("the layer's modules import each other in a circle: "
                    + " → ".join(cycle.args[1]))
    # dependencies first: the leaves, Tensor, then what builds on Tensor, then the package
    assert order.index(f"{PACKAGE}.dtypes") < order.index(f"{PACKAGE}.tensor")
    assert order.index(f"{PACKAGE}.tensor") < order.index(f"{PACKAGE}.functions")
    assert order[-1] == PACKAGE


def test_no_function_or_class_body_of_the_layer_imports_a_module_of_the_layer():
    nested = [f"{MODULES[m].relative_to(LAYER)}:{i.line} imports {i.target}"
              for m in MODULES for i in imports(m) if i.nested]
    assert nested == []


# ---- 2. every public name written out ------------------------------------------------------------


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_name_a_module_exports_is_a_def_class_or_assignment_in_the_layer(module: str):
    exported = load(module).__all__
    assert exported, "every module of the layer says what it exports"
    missing = [name for name in exported if definition(module, name) is None]
    assert missing == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_attribute_comes_from_a_statement_not_from_globals_update(module: str):
    found = bindings(module)
    star = {name for source in found.star for name in load(source).__all__}
    written = found.defined | set(found.imported) | star
    submodules = {m.rpartition(".")[2] for m in MODULES if m.rpartition(".")[0] == module}
    made = [name for name in vars(load(module))
            if name not in written | submodules and not name.startswith("__")]
    assert made == []


def class_statements(module: str) -> dict[str, ast.ClassDef]:
    return {stmt.name: stmt for stmt in parse(module).body if isinstance(stmt, ast.ClassDef)}


def exported_classes() -> list[tuple[str, str]]:
    """(module, name) of each class a module exports and defines with a class statement."""
    return [(module, name) for module in sorted(MODULES) for name in load(module).__all__
            if name in class_statements(module)]


@pytest.mark.parametrize(("module", "name"), exported_classes())
def test_every_attribute_of_an_exported_class_is_written_in_its_class_body(module: str, name: str):
    cls = getattr(load(module), name)
    written = bound_names(class_statements(module)[name].body) | set(getattr(cls, "__slots__", ()))
    made = [attr for attr in vars(cls) if attr not in written | CLASS_BOOKKEEPING]
    assert made == []


def test_tensor_is_among_the_classes_checked():
    assert (f"{PACKAGE}.tensor", "Tensor") in exported_classes()
