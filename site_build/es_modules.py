"""The files a set of ES modules needs: they, and whatever they import by relative path.

The site serves npm packages that ship plain ES modules (prism-code-editor) as they are, with no
bundler: the browser follows their ``import … from "./x.js"``. This finds every file such an
import reaches, so the build publishes exactly those and nothing of the rest of the package.
A bare import (``from "emmet"``) cannot be served that way: it is an error that names the file.
"""

from __future__ import annotations

import re
from pathlib import Path

# import x from "…"; import {a} from "…"; import "…"; export {a} from "…"; export * from "…";
# import("…") — the string of each, in files a package's build wrote (no comments hold these)
_SPECIFIER = re.compile(
    r"""(?:\bimport|\bexport)\s*(?:[\w*{}\s,$]*?\bfrom\s*)?\(?\s*(["'])([^"'\n]+)\1"""
)


class ModuleError(ValueError):
    """An import the site cannot serve as a file."""


def imports(path: Path) -> list[str]:
    """The specifiers ``path`` imports or re-exports, in order."""
    return [m.group(2) for m in _SPECIFIER.finditer(path.read_text(encoding="utf-8"))]


def closure(root: Path, entries: list[str]) -> list[str]:
    """Every file under ``root`` that ``entries`` (paths relative to it) reach, sorted.

    CSS entries are taken as they are; a JS module's relative imports are followed.
    """
    root = root.resolve()
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = root / name
        if not path.is_file():
            raise ModuleError(f"{path}: not found (run `npm ci`)")
        seen.add(name)
        if not name.endswith(".js"):
            continue
        for spec in imports(path):
            if not spec.startswith(("./", "../")):
                raise ModuleError(f"{path}: imports {spec!r}, which a browser cannot fetch "
                                  "without a bundler")
            target = (path.parent / spec).resolve()
            if root not in target.parents:
                raise ModuleError(f"{path}: imports {spec!r}, outside {root}")
            todo.append(target.relative_to(root).as_posix())
    return sorted(seen)
