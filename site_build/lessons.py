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
    TITLE and inputs(draw): the exercise's manifest (browser_runtime/exercises.py)
    # --8<-- [end:check]

    # --8<-- [start:traps]
    TRAPS = [("what the page warns about", "the answer's text", "the mistake's text"), ...]
    # --8<-- [end:traps]

The ``traps`` section lists every mistake the exercise's TODO comments, hints and page warn
about, each as a change to the answer (:attr:`Lesson.traps`); ``tests/test_mutants.py`` makes
each one and proves that Check fails it at every seed.

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

from . import ui_strings
from .languages import LANGUAGES

BLANK = "_____"
SECTION_RE = re.compile(r"^\s*#\s*-+8<-+\s*\[(start|end):([a-z][-_0-9a-z]*)\]\s*$", re.I)
TODO_RE = re.compile(r"^\s*#\s*TODO\b")
SOURCE_LANGUAGE = "en"  # the lesson file is written in it; the others are translated
TRANSLATED_SECTIONS = ("exercise", "test", "example")
TABLE_NAME = {"zh": "ZH"}  # language -> the dict its section (named by the language) sets
# what every lesson's docstring says alike, translated once here; a file's own table adds to it
SHARED_TABLE = {"zh": {"Args:": "参数：", "Returns:": "返回："}}


@dataclass(frozen=True)
class Trap:
    """A mistake a page warns about, as a change to the answer: ``old`` (text of the exercise
    section, found exactly once) becomes ``new``."""

    why: str  # what the page says, and where (a TODO, a hint, the walkthrough)
    old: str
    new: str

    def apply(self, code: str) -> str:
        """``code`` (the answer) with the mistake made; ValueError unless ``old`` is there once."""
        if code.count(self.old) != 1:
            raise ValueError(f"trap {self.why!r}: {self.old!r} occurs {code.count(self.old)} "
                             "times in the answer, not once")
        return code.replace(self.old, self.new)


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
    """One lesson file and its derived views, in one language: the file as written is English;
    ``in_language("zh")`` is the same lesson with its prose in Chinese (see :func:`translate`)."""

    path: Path
    text: str = field(repr=False)
    lang: str = SOURCE_LANGUAGE
    original: Lesson | None = field(default=None, repr=False)  # the file as written

    @classmethod
    def load(cls, path: str | Path) -> Lesson:
        path = Path(path)
        return cls(path, path.read_text(encoding="utf-8"))

    @cached_property
    def _languages(self) -> dict[str, Lesson]:
        return {self.lang: self}

    def in_language(self, lang: str) -> Lesson:
        """This lesson in ``lang``: the same code, its comments, docstring and printed words
        translated by the file's own table. Errors name the file and the line."""
        if self.original is not None:
            return self.original.in_language(lang)
        if lang not in self._languages:
            text = translate(self.text, self.path, lang)
            self._languages[lang] = Lesson(self.path, text, lang, original=self)
        return self._languages[lang]

    @property
    def out_path(self) -> Path:
        """Where ``make golden`` writes what this lesson prints in its language."""
        return output_path(self.path, self.lang)

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
        """The check section, parsed: title, reference, time limit, tolerances, inputs; with the
        function's defaults, which a share of Check's cases leaves out."""
        return Exercise.parse(self.id, self.name, self.section("check"), LANGUAGES,
                              defaults=self.defaults,
                              answer=(self.original or self).exercise(blanked=False))

    @cached_property
    def defaults(self) -> dict[str, str]:
        """The function's parameters that have a default, in order: name -> the default's
        source text (``{"gamma": "1.0", "lam": "0.95"}``)."""
        args = self.function.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults,
                         strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
        return {a.arg: ast.get_source_segment(self.text, d) or ast.unparse(d) for a, d in pairs}

    @cached_property
    def traps(self) -> list[Trap]:
        """The mistakes the page warns about (the ``traps`` section's ``TRAPS``, a literal)."""
        if "traps" not in self.section_spans:
            return []
        for node in ast.parse(self.section("traps")).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TRAPS":
                return [Trap(*entry) for entry in ast.literal_eval(node.value)]
        raise ValueError(f"{self.path}: the traps section does not set TRAPS")

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
        older version is recognised by it. The same in every language (the English text's), so
        work saved on one language's page is this version's on the other's too."""
        if self.original is not None:
            return self.original.version
        data = (self.exercise() + "\0" + self.test()).encode()
        return hashlib.sha256(data).hexdigest()[:12]


def output_path(path: Path, lang: str = SOURCE_LANGUAGE) -> Path:
    """``compute_gae.py`` -> ``compute_gae.out`` (English), ``compute_gae.zh.out`` (Chinese)."""
    return path.with_suffix(".out" if lang == SOURCE_LANGUAGE else f".{lang}.out")


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


# ---- languages -------------------------------------------------------------------------------
#
# A lesson file is written in English and carries its Chinese in a section of its own:
#
#     # --8<-- [start:zh]
#     ZH = {  # English fragment -> Chinese, for the zh pages (site_build.lessons.translate)
#         "walk back in time": "沿时间倒着走",
#         ...
#     }
#     # --8<-- [end:zh]
#
# Only prose is translated: comments, docstrings and the string literals a print() call prints,
# in the exercise, test and example sections. Each key is replaced where it occurs in them, the
# longest key first, and nowhere else, so code is the same in both languages (checked: the two
# files parse to the same tree but for those strings). A fragment of prose left in English, or a
# key that matches nothing, is an error naming the file and the line: translations cannot go
# stale. Python runs the file as it is (English); ZH is just a dict there. What every lesson's
# docstring says alike (its "Args:" and "Returns:") is translated once, in SHARED_TABLE.


# English a Chinese text keeps as it is (the site's pages write these in Latin letters too), and
# what counts as an English word: two letters or more, not part of a name, a number or a formula
KEPT_WORDS = frozenset({
    "token", "tokens", "padding", "batch", "critic", "prompt", "prompts", "rollout", "logits",
    "verl", "log", "exp", "sqrt", "softmax", "onehot", "clip", "min", "max", "std", "var",
    "mean", "sum", "argmax", "TODO", "ln", "inf", "nan", "True", "False", "None",
    "Dr", "Bradley", "Terry",  # Dr. GRPO, Bradley–Terry
})
KEPT_TERMS = ("clip-higher",)
_WORD_RE = re.compile(r"(?<![\w.\\])[A-Za-z][a-z]+(?![\w(])")
_CODE_RE = re.compile(r"`[^`]*`|\"[^\"\n]*\"|'[^'\n]*'")  # inline code and quoted values in prose
_BRACES_RE = re.compile(r"\{[^{}]*\}")  # an f-string's fields
_QUOTE_RE = re.compile(r"[rRuU]?(\"\"\"|'''|\"|')")  # a docstring's prefix and quotes


class TranslationError(ValueError):
    """A lesson file whose translation is missing, stale or changes code: names file and line."""


@dataclass(frozen=True)
class _Span:
    line: int  # 1-based
    start: int  # character columns in that line
    end: int
    kind: str  # "comment", "docstring" or "print"


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def prose_spans(text: str, path: Path | str = "<lesson>") -> list[_Span]:
    """Where a file's prose is: comments, docstring lines, print()ed strings, in the exercise,
    test and example sections; in file order."""
    lines = text.split("\n")
    sections = _section_spans(text, Path(path))
    inside = [span for name, span in sections.items() if name in TRANSLATED_SECTIONS]

    def wanted(line: int) -> bool:
        return any(a <= line <= b for a, b in inside)

    spans: list[_Span] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT and wanted(tok.start[0]):
            spans.append(_Span(tok.start[0], tok.start[1] + 1, tok.end[1], "comment"))
    tree = ast.parse(text, filename=str(path))
    strings: list[ast.expr] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        documented = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        first = body[0] if isinstance(node, documented) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            doc = first.value
            opening = _char_col(lines[doc.lineno - 1], doc.col_offset)
            quote = _QUOTE_RE.match(lines[doc.lineno - 1], opening)
            skip, close = (len(quote.group(0)), len(quote.group(1))) if quote else (0, 0)
            for no in range(doc.lineno, doc.end_lineno + 1):
                line = lines[no - 1]
                start = opening + skip if no == doc.lineno else len(line) - len(line.lstrip())
                end = _char_col(line, doc.end_col_offset) - close if no == doc.end_lineno \
                    else len(line)
                if wanted(no) and end > start:
                    spans.append(_Span(no, start, end, "docstring"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "print":
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                strings += [n for n in ast.walk(arg) if isinstance(n, ast.JoinedStr) or (
                    isinstance(n, ast.Constant) and isinstance(n.value, str))]
    inner = {id(v) for s in strings if isinstance(s, ast.JoinedStr)
             for v in ast.walk(s) if v is not s}
    for s in strings:
        if id(s) in inner:
            continue
        for no in range(s.lineno, s.end_lineno + 1):
            line = lines[no - 1]
            start = _char_col(line, s.col_offset) if no == s.lineno else \
                len(line) - len(line.lstrip())
            end = _char_col(line, s.end_col_offset) if no == s.end_lineno else len(line)
            if wanted(no):
                spans.append(_Span(no, start, end, "print"))
    return sorted(spans, key=lambda s: (s.line, s.start))


def english_words(prose: str, kind: str, names: frozenset[str] = frozenset()) -> list[str]:
    """The English words of a piece of prose: not inline code, quoted values, an f-string's
    fields, names of the code, or the words a Chinese text keeps."""
    if kind == "print":
        prose = _BRACES_RE.sub(" ", _BRACES_RE.sub(" ", prose))
        prose = re.sub(r"""\b[rbfuRBFU]{1,2}(?=["'])|["']""", " ", prose)
    else:
        prose = _CODE_RE.sub(" ", prose)
    for term in KEPT_TERMS:
        prose = prose.replace(term, " ")
    return [w for w in _WORD_RE.findall(prose) if w not in KEPT_WORDS and w not in names
            and w.lower() not in KEPT_WORDS]


def translation_table(text: str, path: Path | str, lang: str) -> dict[str, str]:
    """The ``ZH = {...}`` of the file's ``zh`` section (empty without one)."""
    spans = _section_spans(text, Path(path))
    if lang not in spans:
        return {}
    first, last = spans[lang]
    source = "\n".join(text.split("\n")[first - 1 : last])
    name = TABLE_NAME[lang]
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise TranslationError(f"{path}:{first + (err.lineno or 1) - 1}: the {lang} section is "
                               f"not valid Python: {err.msg}") from err
    for node in tree.body:
        targets = [getattr(t, "id", None) for t in getattr(node, "targets", [])]
        if isinstance(node, ast.Assign) and targets == [name]:
            try:
                table = ast.literal_eval(node.value)
            except ValueError as err:
                raise TranslationError(f"{path}:{first + node.lineno - 1}: {name} must be a "
                                       f"literal dict of strings ({err})") from err
            if not isinstance(table, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) and k and "\n" not in k + v
                    for k, v in table.items()):
                raise TranslationError(f"{path}:{first + node.lineno - 1}: {name} maps English "
                                       "fragments to translations, each one line of text")
            return table
    raise TranslationError(f"{path}:{first}: the {lang} section sets no {name} = {{...}}")


def translate(text: str, path: Path | str, lang: str) -> str:
    """The file in ``lang``: its prose translated by its own table, code untouched. Raises
    :class:`TranslationError` for prose left in English, a key that matches nothing, or a
    translation that changes code."""
    if lang == SOURCE_LANGUAGE:
        return text
    own = translation_table(text, path, lang)
    table = {**SHARED_TABLE.get(lang, {}), **own}
    lines = text.split("\n")
    names = frozenset(
        tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.NAME
    )
    pattern = re.compile("|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))) \
        if table else None
    used: set[str] = set()
    missing: list[str] = []

    def replace(match: re.Match) -> str:
        used.add(match.group(0))
        return table[match.group(0)]

    for span in reversed(prose_spans(text, path)):  # right to left: columns stay valid
        line = lines[span.line - 1]
        prose = line[span.start : span.end]
        done = pattern.sub(replace, prose) if pattern else prose
        left = english_words(done, span.kind, names)
        if left:
            missing.append(f"{path}:{span.line}: no {lang} for {prose.strip()!r} "
                           f"(English left: {' '.join(left)})")
        lines[span.line - 1] = line[: span.start] + done + line[span.end :]
    if missing:
        raise TranslationError(
            "\n".join(reversed(missing))
            + f"\n(add the fragments to {TABLE_NAME[lang]} in the file's {lang} section)")
    unused = [k for k in own if k not in used]
    if unused:
        first = _section_spans(text, Path(path))[lang][0]
        where = {k: next((no for no, ln in enumerate(lines[first - 1 :], first)
                          if repr(k)[1:-1] in ln or k in ln), first) for k in unused}
        raise TranslationError("\n".join(
            f"{path}:{where[k]}: {TABLE_NAME[lang]} key {k!r} matches no comment, docstring or "
            "printed string (stale: the English changed?)" for k in unused))
    result = "\n".join(lines)
    if _code_only(result) != _code_only(text):
        raise TranslationError(f"{path}: the {lang} translation changes code, not only prose")
    return result


def _code_only(text: str) -> str:
    """The file's syntax tree with every string's value left out: what a translation keeps."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


# ---- downloads -------------------------------------------------------------------------------

_IMPORT_RE = re.compile(r"^(import|from)\s")


def _split_imports(code: str) -> tuple[list[str], str]:
    lines = code.split("\n")
    imports = [ln for ln in lines if _IMPORT_RE.match(ln)]
    rest = "\n".join(ln for ln in lines if not _IMPORT_RE.match(ln)).strip("\n")
    return imports, rest


def download(lessons: list[Lesson], title: str, blanked: bool,
             lang: str = SOURCE_LANGUAGE) -> str:
    """One runnable file from one or more lessons, in ``lang``: imports once, each function, then
    each test block as a function of its own. ``python exercise.py`` runs every test, and
    ``python exercise.py compute_gae`` only that one; a test whose function still has blanks
    says "not done yet" and the others go on. ``blanked`` gives the exercise (every TODO answer
    is ``_____``), else the solution. ``title`` is its first line (the chapter's title in that
    language).
    """
    words = ui_strings.build(lang)["download"]
    imports: list[str] = []
    bodies, tests = [], []
    for lesson in (lesson.in_language(lang) for lesson in lessons):
        imp, body = _split_imports(lesson.exercise(blanked))
        imports += [i for i in imp if i not in imports]
        bodies.append(body)
        tests.append(f"def test_{lesson.name}():\n" + _indent_block(lesson.test().strip("\n")))
    how = words["exercise" if blanked else "solution"].format(
        file="exercise.py" if blanked else "solution.py", name=lessons[0].name)
    header = f'"""{title}\n\n{how}\n"""\n'
    names = ", ".join(f'"{lesson.name}": test_{lesson.name}' for lesson in lessons)
    return (
        header
        + "\n"
        + "\n".join(["import sys", *imports])
        + "\n\n\n"
        + "\n\n\n".join(bodies)
        + "\n\n\n# ---- tests ---------------------------------------------------------------"
        + "\n\n"
        + "\n\n\n".join(tests)
        + f"\n\n\nTESTS = {{{names}}}\n\n"
        + _main(words)
    )


def _main(words: dict[str, str]) -> str:
    """The download's ``__main__``: run the tests named (all by default), in ``words``' language."""
    unknown = words["unknown"].replace("{names}", "{', '.join(TESTS)}")  # {name}: the f-string's
    return f'''
if __name__ == "__main__":
    for name in sys.argv[1:] or list(TESTS):
        if name not in TESTS:
            sys.exit(f"{unknown}")
        print(f"---- {{name}}")
        try:
            TESTS[name]()
        except NameError as err:
            if "_____" not in str(err):
                raise
            print({words["notDone"]!r})
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
