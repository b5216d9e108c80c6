"""The MLM drill's build-time half: which tokens of an answer can be masked, and the HTML that
shows the code highlighted with every maskable token marked, so the widget parses nothing.

Maskable, by default (the source site's rule): every name, number and string token (Python's own
``tokenize``) of two or more characters; comments are never tokens here. This reproduces the
source's counts for its six snippets (17, 51, 35, 36, 20, 31). The extended mode adds operators and
one-character names and numbers (``-``, ``*``, ``t``, ``1``): the tokens that carry most of the
meaning of these formulas.
"""

from __future__ import annotations

import html
import io
import json
import keyword
import tokenize
from dataclasses import asdict, dataclass

from pygments import lex
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES

# operators worth typing; brackets, commas, colons, dots and plain "=" are structure, not meaning
OPERATORS = {
    "+", "-", "*", "/", "//", "%", "**", "@", "~",
    "<", ">", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=",
}


@dataclass(frozen=True)
class Slot:
    """A maskable token: its text, where it is, and which mode masks it."""

    text: str
    start: int  # character offsets into the code
    end: int
    line: int  # 1-based
    extended: bool  # True: only the extended mode masks it
    keyword: bool


def slots(code: str) -> list[Slot]:
    """Every maskable token of ``code``, in order, default and extended alike."""
    line_starts = [0]
    for line in code.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
            extended = len(tok.string) < 2
        elif tok.type == tokenize.OP and tok.string in OPERATORS:
            extended = True
        else:
            continue
        (l0, c0), (l1, c1) = tok.start, tok.end
        found.append(Slot(
            text=tok.string,
            start=line_starts[l0 - 1] + c0,
            end=line_starts[l1 - 1] + c1,
            line=l0,
            extended=extended,
            keyword=keyword.iskeyword(tok.string),
        ))
    return found


def count(code: str, extended: bool = False) -> int:
    """How many slots the drill offers in the given mode."""
    return sum(1 for s in slots(code) if extended or not s.extended)


def _css_class(token_type) -> str:
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


def highlighted(code: str, marks: list[Slot]) -> str:
    """Pygments-highlighted HTML of ``code`` (Material's ``.highlight`` classes), each slot
    wrapped in ``<span class="rl-slot" data-slot-index="i">``."""
    boundaries = {s.start: i for i, s in enumerate(marks)}
    ends = {s.end for s in marks}
    out: list[str] = []
    pos = 0
    open_slot = False
    for token_type, value in lex(code, PythonLexer(stripnl=False, ensurenl=False)):
        cls = _css_class(token_type)
        i = 0
        while i < len(value):
            # split the pygments token at slot boundaries
            cut = len(value)
            for b in sorted(set(boundaries) | ends):
                if pos + i < b < pos + len(value):
                    cut = min(cut, b - pos)
                    break
            if pos + i in ends and open_slot:
                out.append("</span>")
                open_slot = False
            if pos + i in boundaries:
                out.append(f'<span class="rl-slot" data-slot-index="{boundaries[pos + i]}">')
                open_slot = True
            piece = html.escape(value[i:cut], quote=False)
            out.append(f'<span class="{cls}">{piece}</span>' if cls else piece)
            i = cut
        pos += len(value)
    if open_slot:
        out.append("</span>")
    return "".join(out)


# what js/drill.js reads of a slot: its answer, where it is (offsets into the code, to build the
# program Check runs; line, for its label) and which mode masks it
SHIPPED = ("text", "start", "end", "line", "extended")


def drill_html(exercise_id: str, code: str, imports: str, version: str = "") -> str:
    """The drill's markup: data for the widget, then the highlighted code it masks in place.

    The data is the program: Check by meaning runs ``imports`` then ``code`` with one slot's text
    replaced by the learner's (offsets count characters; the drill code is ASCII and Greek, one
    UTF-16 unit each, as JavaScript counts them). ``version``: the lesson's, which the drill's
    record carries (a record of an older version is kept, not shown or counted)."""
    marks = slots(code)
    data = {
        "id": exercise_id,
        "version": version,
        "imports": imports,
        "code": code,
        "slots": [{k: v for k, v in asdict(s).items() if k in SHIPPED} for s in marks],
    }
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        f'<div class="rl-drill" data-drill="{html.escape(exercise_id)}">\n'
        f'<script type="application/json" class="rl-drill-data">{payload}</script>\n'
        f'<div class="highlight"><pre><code>{highlighted(code, marks)}</code></pre></div>\n'
        "</div>\n"
    )
