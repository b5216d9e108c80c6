"""Run a learner's cell and report errors as a teacher would.

The Pyodide worker calls :func:`run_cell` with the cell's code (the exercise with the blanks filled
in, then its test block) and a description of its parts. Errors point at the learner's own lines
("exercise, line 14"), never at wrapper code: a syntax error shows the line and a caret, a runtime
error shows only the learner's frames. A common slip (``_____`` left in the code) is returned as a
code, :func:`slip`, which the page words in its language (``js/strings.toml`` ``[slip]``): what
Python writes here is Python's own format, and no sentence of the site's. The same code runs
under CPython in the tests.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from dataclasses import dataclass
from types import TracebackType

CELL = "<cell>"  # the filename learner code is compiled under


@dataclass(frozen=True)
class Part:
    """A named stretch of the cell: ``first`` is its first line in the combined code (1-based)."""

    name: str
    first: int
    length: int


def parts_from(spec: list[dict] | None, code: str) -> list[Part]:
    """Parts from the worker's JSON (``[{"name", "first", "length"}]``), or the whole cell."""
    if not spec:
        return [Part("cell", 1, code.count("\n") + 1)]
    return [Part(p["name"], int(p["first"]), int(p["length"])) for p in spec]


def where(line: int, parts: list[Part]) -> str:
    """``"exercise, line 3"``: a line of the combined code, in the learner's terms."""
    for p in parts:
        if p.first <= line < p.first + p.length:
            return f"{p.name}, line {line - p.first + 1}"
    return f"line {line}"


def _source_line(code: str, line: int) -> str:
    lines = code.split("\n")
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def format_syntax_error(err: SyntaxError, code: str, parts: list[Part]) -> str:
    """``SyntaxError: … (exercise, line 14)`` with the learner's line and a caret under it."""
    line = err.lineno or 1
    text = _source_line(code, line)
    out = [f"{type(err).__name__}: {err.msg} ({where(line, parts)})"]
    if text.strip():
        indent = len(text) - len(text.lstrip())
        out.append("    " + text.strip())
        if err.offset:
            caret = max(0, err.offset - 1 - indent)
            width = 1
            if err.end_offset and err.end_lineno == err.lineno and err.end_offset > err.offset:
                width = err.end_offset - err.offset
            out.append("    " + " " * caret + "^" * width)
    return "\n".join(out) + "\n"


SHOWN_FRAMES = 10  # runs of frames shown at each end of a long traceback
MESSAGE_CHARS = 2000  # characters of an exception's message shown


def _learner_runs(tb: TracebackType | None) -> list[list]:
    """The learner's frames as runs ``[line, function, times]``: a recursion that repeats one
    line 10 000 times is one run. Walks the traceback without building every frame summary."""
    runs: list[list] = []
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename != CELL:
            continue
        key = [lineno, frame.f_code.co_name]
        if runs and runs[-1][:2] == key:
            runs[-1][2] += 1
        else:
            runs.append([*key, 1])
    return runs


def slip(err: BaseException) -> str | None:
    """The common slip behind ``err``, as a code the page words (``js/strings.toml`` ``[slip]``):
    ``"blank"`` for a ``_____`` left in the code (a NameError of that name), else None."""
    return "blank" if isinstance(err, NameError) and getattr(err, "name", None) == "_____" else None


def format_exception(err: BaseException, code: str, parts: list[Part]) -> str:
    """A traceback of the learner's frames only, then the error (its slip is :func:`slip`).

    Repeated frames are counted, not repeated; past ``2 × SHOWN_FRAMES`` runs only the first and
    the last are shown; a message is cut at ``MESSAGE_CHARS``.
    """
    runs = _learner_runs(err.__traceback__)
    out = []
    if runs:
        out.append("Traceback (most recent call last):")
        hidden = max(0, len(runs) - 2 * SHOWN_FRAMES)
        shown = runs if not hidden else [*runs[:SHOWN_FRAMES], None, *runs[-SHOWN_FRAMES:]]
        for run in shown:
            if run is None:
                out.append(f"  [... {hidden} more frames ...]")
                continue
            line, name, times = run
            fn = "" if name == "<module>" else f", in {name}"
            out.append(f"  {where(line or 0, parts)}{fn}")
            text = _source_line(code, line or 0).strip()
            if text:
                out.append(f"    {text}")
            if times > 1:
                out.append(f"  [Previous line repeated {times - 1} more times]")
    message = "".join(traceback.format_exception_only(type(err), err)).strip()
    if len(message) > MESSAGE_CHARS:
        message = f"{message[:MESSAGE_CHARS]} [... {len(message) - MESSAGE_CHARS} characters more]"
    out.append(message)
    return "\n".join(out) + "\n"


def syntax_error(code: str, parts: list[dict] | None = None) -> str | None:
    """The learner's syntax error, formatted, or None: said before anything else runs."""
    try:
        compile(code, CELL, "exec")
    except SyntaxError as err:
        return format_syntax_error(err, code, parts_from(parts, code))
    return None


def _room() -> None:
    """Python's default recursion limit back, if the learner's code lowered it: room for the
    site's own frames once theirs have run."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))


def tell(text: str) -> None:
    """``text`` on the job's stderr, past whatever the learner's code did to ``sys.stderr``
    (replaced, closed) or to the recursion limit: what they printed to it first, then ``text``
    on file descriptor 2 itself, which the worker reads. A learner who closed fd 2 is told
    nothing; the site's code still raises no error of its own."""
    _room()
    try:
        sys.__stderr__.flush()
    except Exception:  # closed, or replaced by something that is not a stream
        pass
    try:
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass


def _formatted(err: BaseException, code: str, parts: list[Part]) -> str:
    """:func:`format_exception`, or the error's type alone where formatting it raised (its
    ``__str__`` raises, or the learner's code patched what formatting calls)."""
    _room()
    try:
        return format_exception(err, code, parts)
    except Exception:
        return f"{type(err).__qualname__}\n"


def run_cell(code: str, parts: list[dict] | None = None,
             namespace: dict | None = None) -> dict[str, object]:
    """Compile and run ``code``; print any error to stderr in the learner's terms.

    Returns ``{"ok": True}`` when the code ran to the end, else ``{"ok": False, "slip": code}``
    (:func:`slip`, None when no common slip explains the error). KeyboardInterrupt (the Stop
    button) is not the learner's error and propagates to the worker.
    """
    cell_parts = parts_from(parts, code)
    # tracebacks and linecache can show the learner's source for <cell> frames
    linecache.cache[CELL] = (len(code), None, code.splitlines(True), CELL)
    try:
        compiled = compile(code, CELL, "exec")
    except SyntaxError as err:  # IndentationError included
        sys.stderr.write(format_syntax_error(err, code, cell_parts))
        return {"ok": False, "slip": None}
    ns = namespace if namespace is not None else {"__name__": "__main__"}
    try:
        exec(compiled, ns)
    except KeyboardInterrupt:
        raise  # Stop was pressed: the page says so, in its own language
    except SystemExit as err:  # sys.exit(): said, not hidden
        if err.code in (None, 0):
            return {"ok": True}
        tell(f"SystemExit: {err.code}\n")
        return {"ok": False, "slip": None}
    except BaseException as err:  # the learner's error, whatever it is, is reported
        tell(_formatted(err, code, cell_parts))
        return {"ok": False, "slip": slip(err)}
    return {"ok": True}
