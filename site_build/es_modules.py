"""The files a set of ES modules needs: they, and whatever they import by relative path; and
the site's own modules published under their version.

The site serves npm packages that ship plain ES modules (prism-code-editor) as they are, with no
bundler: the browser follows their ``import … from "./x.js"``. This finds every file such an
import reaches, so the build publishes exactly those and nothing of the rest of the package.
A bare import (``from "emmet"``) cannot be served that way: it is an error that names the file.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

# import x from "…"; import {a} from "…"; import "…"; export {a} from "…"; export * from "…";
# import("…") — the string of each (group 3; group 1 is the parenthesis of import()), in files a
# package's build wrote (no comments hold these)
_SPECIFIER = re.compile(
    r"""(?:\bimport|\bexport)\s*(?:[\w*{}\s,$]*?\bfrom\s*)?(\()?\s*(["'])([^"'\n]+)\2"""
)


class ModuleError(ValueError):
    """An import the site cannot serve as a file."""


def imports(path: Path, dynamic: bool = True) -> list[str]:
    """The specifiers ``path`` imports or re-exports, in order; ``dynamic=False``: without those
    of ``import()`` (what loading the module fetches at once)."""
    return [m.group(3) for m in _SPECIFIER.finditer(path.read_text(encoding="utf-8"))
            if dynamic or not m.group(1)]


def closure(root: Path, entries: list[str], dynamic: bool = True) -> list[str]:
    """Every file under ``root`` that ``entries`` (paths relative to it) reach, sorted.

    CSS entries are taken as they are; a JS module's relative imports are followed (with
    ``dynamic=False``, only its static ones: what a page that loads ``entries`` fetches at once).
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
        for spec in imports(path, dynamic):
            if not spec.startswith(("./", "../")):
                raise ModuleError(f"{path}: imports {spec!r}, which a browser cannot fetch "
                                  "without a bundler")
            target = (path.parent / spec).resolve()
            if root not in target.parents:
                raise ModuleError(f"{path}: imports {spec!r}, outside {root}")
            todo.append(target.relative_to(root).as_posix())
    return sorted(seen)


def version(paths: list[Path], *extra: str) -> str:
    """A short hash of the modules at ``paths`` (names and bytes) and of ``extra`` strings: the
    site's code version, which changes whenever any of them does."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for text in extra:
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()[:16]


def versioned(text: str, version: str) -> str:
    """A module of the site's as it is published: every relative import (static or dynamic)
    asks for ``?v=<version>``, and the literal ``"__VERSION__"`` is the version.

    A module URL then names one build's file: a page never runs one deploy's module with
    another's (a host's HTTP cache keeps files for minutes), and the service worker can keep an
    open page's modules across a deploy (js/sw.js)."""

    def ask(match: re.Match) -> str:
        spec, whole, at = match.group(3), match.group(0), match.start(3) - match.start(0)
        if not spec.startswith(("./", "../")) or "?" in spec:
            return whole
        return whole[:at] + f"{spec}?v={version}" + whole[at + len(spec):]

    return _SPECIFIER.sub(ask, text).replace('"__VERSION__"', f'"{version}"')
