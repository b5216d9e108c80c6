"""Expected outputs on the pages are golden files written by running the lesson code.

``python -m tests.golden --write`` (or ``make golden``) runs every lesson file with real PyTorch
and writes what it prints to ``docs/<lesson>/<name>.out``, and what its Chinese text (the file
with its prose translated by its own table, ``site_build.lessons.translate``) prints to
``<name>.zh.out``; the pages of each language include theirs.
``python -m tests.golden`` checks them instead (exit status 1 when one is stale), and with
``--layer`` runs the lessons under the browser's torch layer: what a reader's browser prints.
The tests run both, also under other CPU kernels, so no number on a page drifts from the code or
depends on the machine.
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from site_build.lessons import LANGUAGES, SOURCE_LANGUAGE, output_path, translate

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Script:
    """A runnable file of the pages, a lesson (an exercise and its test) or an example, in one
    language (English: the file as written)."""

    path: Path
    lang: str = SOURCE_LANGUAGE

    @property
    def text(self) -> str:
        return translate(self.path.read_text(encoding="utf-8"), self.path, self.lang)

    def in_language(self, lang: str) -> Script:
        return Script(self.path, lang)

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"


def scripts(docs: Path = ROOT / "docs") -> list[Script]:
    """Every lesson and example file under ``docs``, by their snippet sections."""
    return [
        Script(path) for path in sorted(docs.rglob("*.py"))
        if any(f"[start:{s}]" in path.read_text(encoding="utf-8") for s in ("exercise", "example"))
    ]


def golden_path(script, lang: str | None = None) -> Path:
    """The expected output of a script (or lesson) in ``lang``, by default its own language:
    ``compute_gae.out``, ``compute_gae.zh.out``."""
    return output_path(script.path, lang or getattr(script, "lang", SOURCE_LANGUAGE))


def run_lesson(lesson, layer: bool = False) -> str:
    """Run the whole lesson file (solution + test block) and return its stdout: with real torch,
    or with the browser's torch layer registered as ``torch``."""
    out = io.StringIO()
    namespace = {"__name__": "__main__"}
    code = compile(lesson.text, str(lesson.path), "exec")
    with contextlib.ExitStack() as stack:
        if layer:
            from browser_runtime import torch_layer_installed

            stack.enter_context(torch_layer_installed())
        stack.enter_context(contextlib.redirect_stdout(out))
        exec(code, namespace)
    return out.getvalue()


def main() -> int:
    write, layer = "--write" in sys.argv, "--layer" in sys.argv
    stale = []
    for script in (s.in_language(lang) for s in scripts() for lang in LANGUAGES):
        path, now = golden_path(script), run_lesson(script, layer=layer)
        if not path.exists() or path.read_text(encoding="utf-8") != now:
            stale.append(path.relative_to(ROOT))
            if write and not layer:
                path.write_text(now, encoding="utf-8")
    verb = "wrote" if write and not layer else "differs" if layer else "stale"
    print("\n".join(f"{verb}: {p}" for p in stale) or "all golden outputs are current")
    return 0 if write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
