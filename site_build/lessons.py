"""Lesson code files, and every view derived from them.

A lesson file (``docs/<chapter>/<name>.py``) is a runnable PyTorch script with three sections,
in pymdownx.snippets syntax::

    # --8<-- [start:exercise]
    import torch

    def some_function(...):
        # TODO 1: what this line computes
        x = the answer          <- the statement right after a "# TODO" comment is a blank
    # --8<-- [end:exercise]

    # --8<-- [start:test]
    ... prints what the function gives on example inputs ...
    # --8<-- [end:test]

    # --8<-- [start:check]
    TITLE, REFERENCE, inputs(draw): the exercise's manifest (browser_runtime/exercises.py)
    # --8<-- [end:check]

From it this module derives, never by hand:

- the blanked exercise (``x = _____``), for the page and the download;
- the answers (each TODO comment with its statement), for the collapsed "answer" block;
- the drill code (the function without docstring and comments);
- the downloadable exercise and solution files, one per lesson file or assembled from several;
- its manifest entry (:class:`browser_runtime.exercises.Exercise`): id, reference, inputs.

Used by the site's MkDocs plugin (``site_build/plugin.py``) and by the tests.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from browser_runtime.exercises import Exercise

BLANK = "_____"
SECTION_RE = re.compile(r"^\s*#\s*-+8<-+\s*\[(start|end):([a-z][-_0-9a-z]*)\]\s*$", re.I)
TODO_RE = re.compile(r"^\s*#\s*TODO\b")


@dataclass(frozen=True)
class Blank:
    """One fill-in: the TODO comment, the statement after it, and the part a learner types."""

    todo: str  # the comment line, e.g. "# TODO 1: log ρ = log π_θ − log π_old"
    statement: str  # the whole statement, as in the file (dedented)
    answer: str  # the source text replaced by _____
    start: tuple[int, int]  # (line, col) of the answer, 1-based line, 0-based col
    end: tuple[int, int]


@dataclass
class Lesson:
    """One lesson file and its derived views."""

    path: Path
    text: str = field(repr=False)

    @classmethod
    def load(cls, path: str | Path) -> Lesson:
        path = Path(path)
        return cls(path, path.read_text(encoding="utf-8"))

    # ---- structure -------------------------------------------------------------------------

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def section_spans(self) -> dict[str, tuple[int, int]]:
        """Section name -> (first line, last line), 1-based, inclusive, markers excluded."""
        spans = _section_spans(self.text, self.path)
        for required in ("exercise", "test", "check"):
            if required not in spans:
                raise ValueError(f"{self.path}: missing section {required!r}")
        return spans

    def section(self, name: str, text: str | None = None) -> str:
        """A section of the file, or of ``text`` (the file with blanks: a multi-line answer is
        one ``_____`` there, so its lines are counted in that text, not in the file)."""
        text = self.text if text is None else text
        first, last = _section_spans(text, self.path)[name]
        return "\n".join(text.split("\n")[first - 1 : last]).strip("\n") + "\n"

    @cached_property
    def tree(self) -> ast.Module:
        return ast.parse(self.text, filename=str(self.path))

    @cached_property
    def function(self) -> ast.FunctionDef:
        """The exercise's function: the one top-level def inside the exercise section."""
        first, last = self.section_spans["exercise"]
        defs = [
            n
            for n in self.tree.body
            if isinstance(n, ast.FunctionDef) and first <= n.lineno <= last
        ]
        if len(defs) != 1:
            raise ValueError(f"{self.path}: the exercise section must hold exactly one function")
        return defs[0]

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def id(self) -> str:
        """``<chapter>/<name>``, e.g. ``ppo/compute_gae``: the exercise's id everywhere."""
        return f"{self.path.parent.name}/{self.path.stem}"

    @cached_property
    def manifest(self) -> Exercise:
        """The check section, parsed: title, reference, time limit, tolerances, inputs."""
        return Exercise.parse(self.id, self.name, self.section("check"))

    # ---- blanks ----------------------------------------------------------------------------

    @cached_property
    def blanks(self) -> list[Blank]:
        todo_lines = [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline)
            if tok.type == tokenize.COMMENT and TODO_RE.match(tok.string)
        ]
        statements = [n for n in ast.walk(self.function) if isinstance(n, ast.stmt)]
        blanks = []
        for line, comment in todo_lines:
            after = [s for s in statements if s.lineno > line]
            if not after:
                raise ValueError(f"{self.path}:{line}: a TODO with no statement after it")
            stmt = min(after, key=lambda s: (s.lineno, s.col_offset))
            target = _blank_target(stmt)
            if target is None:
                raise ValueError(
                    f"{self.path}:{stmt.lineno}: after a TODO comes an assignment, a for loop, "
                    f"a return or an expression; found {type(stmt).__name__}"
                )
            segment = ast.get_source_segment(self.text, target)
            assert segment is not None
            # a compound statement (for …:) shows only its header
            stmt_lines = self.lines[stmt.lineno - 1 : target.end_lineno]
            indent = len(stmt_lines[0]) - len(stmt_lines[0].lstrip())
            blanks.append(
                Blank(
                    todo=comment.strip(),
                    statement="\n".join(s[indent:] for s in stmt_lines),
                    answer=segment,
                    start=(target.lineno, target.col_offset),
                    end=(target.end_lineno, target.end_col_offset),
                )
            )
        if not blanks:
            raise ValueError(f"{self.path}: no '# TODO' comment, so nothing to fill in")
        return blanks

    @cached_property
    def blanked_text(self) -> str:
        """The whole file with every blank replaced by ``_____``."""
        lines = self.lines[:]
        for b in sorted(self.blanks, key=lambda b: b.start, reverse=True):
            (l0, c0), (l1, c1) = b.start, b.end
            head, tail = lines[l0 - 1][:c0], lines[l1 - 1][c1:]
            lines[l0 - 1 : l1] = [head + BLANK + tail]
        return "\n".join(lines)

    # ---- views -----------------------------------------------------------------------------

    def exercise(self, blanked: bool = True) -> str:
        return self.section("exercise", self.blanked_text if blanked else None)

    def test(self) -> str:
        return self.section("test")

    def answers(self) -> str:
        """Each TODO comment followed by its statement: the collapsed answer block."""
        return "\n\n".join(f"{b.todo}\n{b.statement}" for b in self.blanks) + "\n"

    @cached_property
    def drill_code(self) -> str:
        """The answer function alone: no docstring, no comments, blank lines only at body level."""
        fn = self.function
        src_lines = self.lines[fn.lineno - 1 : fn.end_lineno]
        doc = ast.get_docstring(fn, clean=False)
        drop: set[int] = set()
        if doc is not None:
            d = fn.body[0]
            drop |= set(range(d.lineno, d.end_lineno + 1))
        out: list[str] = []
        for no, line in enumerate(src_lines, fn.lineno):
            if no in drop or line.lstrip().startswith("#"):
                continue
            out.append(_strip_comment(line))
        # a blank line survives only before a block (for, if, …) or after one ends
        kept: list[str] = []
        for i, line in enumerate(out):
            if line.strip():
                kept.append(line)
                continue
            nxt = next((x for x in out[i + 1 :] if x.strip()), None)
            if not kept or not kept[-1].strip() or nxt is None:
                continue
            if nxt.rstrip().endswith(":") or _indent(kept[-1]) > _indent(nxt):
                kept.append("")
        return "\n".join(kept) + "\n"

    def load_function(self):
        """The solution function, defined by running the exercise section (imports + def)."""
        namespace: dict = {"__name__": f"lesson_{self.id.replace('/', '_')}"}
        exec(compile(self.exercise(blanked=False), str(self.path), "exec"), namespace)
        return namespace[self.name]

    @cached_property
    def version(self) -> str:
        """Short hash of what the learner edits (blanked exercise + test): saved work from an
        older version is recognised by it."""
        data = (self.exercise() + "\0" + self.test()).encode()
        return hashlib.sha256(data).hexdigest()[:12]


def _section_spans(text: str, path: Path) -> dict[str, tuple[int, int]]:
    """Section name -> (first line, last line) of ``text``, 1-based, markers excluded."""
    spans: dict[str, tuple[int, int]] = {}
    open_at: dict[str, int] = {}
    for no, line in enumerate(text.split("\n"), 1):
        m = SECTION_RE.match(line)
        if not m:
            continue
        kind, name = m.groups()
        if kind == "start":
            open_at[name] = no + 1
        elif name in open_at:
            spans[name] = (open_at.pop(name), no - 1)
        else:
            raise ValueError(f"{path}:{no}: section {name!r} ends but never starts")
    if open_at:
        raise ValueError(f"{path}: section(s) never end: {sorted(open_at)}")
    return spans


def _blank_target(stmt: ast.stmt) -> ast.expr | None:
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return):
        return stmt.value
    if isinstance(stmt, ast.For):
        return stmt.iter
    if isinstance(stmt, ast.Expr):
        return stmt.value
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _strip_comment(line: str) -> str:
    """Drop a trailing comment (the lines here hold no '#' inside strings)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError):
        return line.rstrip()
    for tok in toks:
        if tok.type == tokenize.COMMENT:
            return (line[: _indent(line)] + line.strip()[: tok.start[1]]).rstrip()
    return line.rstrip()


# ---- downloads -------------------------------------------------------------------------------

_IMPORT_RE = re.compile(r"^(import|from)\s")


def _split_imports(code: str) -> tuple[list[str], str]:
    lines = code.split("\n")
    imports = [ln for ln in lines if _IMPORT_RE.match(ln)]
    rest = "\n".join(ln for ln in lines if not _IMPORT_RE.match(ln)).strip("\n")
    return imports, rest


def download(lessons: list[Lesson], title: str, blanked: bool) -> str:
    """One runnable file from one or more lessons: imports once, each function, then each test
    block as a function of its own. ``python exercise.py`` runs every test, and
    ``python exercise.py compute_gae`` only that one; a test whose function still has blanks
    says "not done yet" and the others go on. ``blanked`` gives the exercise (every TODO answer
    is ``_____``), else the solution.
    """
    imports: list[str] = []
    bodies, tests = [], []
    for lesson in lessons:
        imp, body = _split_imports(lesson.exercise(blanked))
        imports += [i for i in imp if i not in imports]
        bodies.append(body)
        tests.append(f"def test_{lesson.name}():\n" + _indent_block(lesson.test().strip("\n")))
    if blanked:
        how = ("Replace every _____ with your code, then run:  python {file}\n"
               "or one exercise at a time:  python {file} " + lessons[0].name)
    else:
        how = "The solution. Run it:  python {file}  (or: python {file} " + lessons[0].name + ")"
    header = f'"""{title}\n\n{how}\n"""\n'
    names = ", ".join(f'"{lesson.name}": test_{lesson.name}' for lesson in lessons)
    return (
        header.format(file="exercise.py" if blanked else "solution.py")
        + "\n"
        + "\n".join(["import sys", *imports])
        + "\n\n\n"
        + "\n\n\n".join(bodies)
        + "\n\n\n# ---- tests ---------------------------------------------------------------"
        + "\n\n"
        + "\n\n\n".join(tests)
        + f"\n\n\nTESTS = {{{names}}}\n\n"
        + _MAIN
    )


_MAIN = '''
if __name__ == "__main__":
    for name in sys.argv[1:] or list(TESTS):
        if name not in TESTS:
            sys.exit(f"no exercise {name!r}; there are: {', '.join(TESTS)}")
        print(f"---- {name}")
        try:
            TESTS[name]()
        except NameError as err:
            if "_____" not in str(err):
                raise
            print("not done yet: fill in its blanks (_____) first")
'''.lstrip("\n")


def _indent_block(code: str) -> str:
    return "\n".join(("    " + ln) if ln.strip() else "" for ln in code.split("\n"))


def find_lessons(docs_dir: str | Path) -> list[Lesson]:
    """Every lesson file under ``docs_dir`` (a .py file holding an ``exercise`` section)."""
    found = []
    for path in sorted(Path(docs_dir).rglob("*.py")):
        if "[start:exercise]" in path.read_text(encoding="utf-8"):
            found.append(Lesson.load(path))
    return found
