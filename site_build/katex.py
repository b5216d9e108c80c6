"""Math typeset at build time by npm's ``katex``: a Markdown extension, one Node process per build.

Syntax (the one markdown-katex introduced, which the pages use)::

    inline: $`\\rho_t = \\pi_\\theta / \\pi_{\\text{old}}`$
    block:  ```math
            \\hat A_t = \\delta_t + \\gamma\\lambda \\hat A_{t+1}
            ```

A preprocessor swaps every formula (outside code fences) for a marker and typesets it; a
postprocessor puts the HTML in place of the marker (a block becomes the paragraph). SVG parts of
KaTeX's output (``\\sqrt``, wide accents) become ``<img>`` data URIs, so the pages' HTML carries
no inline SVG. Readers need KaTeX's CSS and fonts only, which the site serves itself.

The plugin (``site_build/plugin.py``) registers :class:`KatexExtension` with the renderer it owns;
:class:`Katex` starts ``katex_server.cjs`` once and keeps every result in ``.cache/katex/``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

from . import write_atomic

SERVER = Path(__file__).with_name("katex_server.cjs")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})")
MATH_FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})math\s*$")
INLINE_RE = re.compile(r"\$(`{1,2})(.+?)\1\$")
SVG_RE = re.compile(r"<svg.*?</svg>", re.S)
SVG_XMLNS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '


class KatexError(RuntimeError):
    """A formula KaTeX cannot typeset, or a KaTeX that cannot run: says which and why."""


class Katex:
    """Typesets formulas with npm's ``katex`` in one Node process; caches each result on disk
    under a hash of KaTeX's version, the display mode and the formula."""

    def __init__(self, node_modules: Path, cache: Path) -> None:
        package = node_modules / "katex" / "package.json"
        if not package.exists():
            raise KatexError(f"{package.parent} is missing: run `npm ci` (or `make site`)")
        self.version = json.loads(package.read_text(encoding="utf-8"))["version"]
        self.node_modules = node_modules
        self.cache = cache
        self.proc: subprocess.Popen | None = None

    def render(self, tex: str, display: bool) -> str:
        key = hashlib.sha256(f"{self.version}\0{display}\0{tex}".encode()).hexdigest()
        cached = self.cache / f"{key}.html"
        if cached.exists():
            return cached.read_text(encoding="utf-8")
        html = _svg_to_img(self._typeset(tex, display))
        write_atomic(cached, html.encode("utf-8"))
        return html

    def _typeset(self, tex: str, display: bool) -> str:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                ["node", str(SERVER)], cwd=self.node_modules.parent, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
                env={**os.environ, "NODE_PATH": str(self.node_modules)},
            )
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"tex": tex, "displayMode": display}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise KatexError(f"KaTeX: the node process ended while typesetting {tex!r}")
        answer = json.loads(line)
        if "error" in answer:
            raise KatexError(f"KaTeX cannot typeset {tex!r}: {answer['error']}")
        return answer["html"].strip()

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
            self.proc = None


def _svg_to_img(html: str) -> str:
    def img(m: re.Match) -> str:
        svg = m.group(0)
        if "xmlns" not in svg:
            svg = svg.replace("<svg ", "<svg " + SVG_XMLNS, 1)
        data = base64.standard_b64encode(svg.encode("utf-8")).decode("ascii")
        return f'<img src="data:image/svg+xml;base64,{data}"/>'

    return SVG_RE.sub(img, html)


class _MathPreprocessor(Preprocessor):
    def __init__(self, md: Markdown, ext: KatexExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fence: str | None = None  # the closing fence of the code block we are in
        math: list[str] | None = None  # lines of the math block we are in
        for line in lines:
            if math is not None:
                if line.rstrip() == fence:
                    indent = math[0][: len(math[0]) - len(math[0].lstrip())]
                    # the lines between the fences, with their line breaks: MathML's
                    # <annotation> keeps the formula as written
                    tex = "\n" + "\n".join(ln[len(indent):] for ln in math[1:]).rstrip() + "\n"
                    out.append(indent + self.ext.marker("block", tex, display=True))
                    math, fence = None, None
                else:
                    math.append(line)
            elif fence is not None:
                out.append(line)
                if line.rstrip() == fence:
                    fence = None
            elif m := MATH_FENCE_RE.match(line):
                math, fence = [line], m.group(1) + m.group(2)
            elif m := FENCE_RE.match(line):
                fence = m.group(1) + m.group(2)
                out.append(line)
            else:
                out.append(INLINE_RE.sub(
                    lambda m: self.ext.marker("inline", m.group(2), display=False), line))
        if math is not None:
            raise KatexError(f"a ```math block never ends: {math[0].strip()}…")
        return out


class _MathPostprocessor(Postprocessor):
    def __init__(self, md: Markdown, ext: KatexExtension) -> None:
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        for marker, html in self.ext.html.items():
            text = text.replace(f"<p>{marker}</p>", html).replace(marker, html)
        return text


class KatexExtension(Extension):
    """``$`…`$`` and ```` ```math ```` typeset by :class:`Katex` (the plugin registers it)."""

    def __init__(self, katex: Katex, **kwargs) -> None:
        self.katex = katex
        self.html: dict[str, str] = {}
        super().__init__(**kwargs)

    def marker(self, kind: str, tex: str, display: bool) -> str:
        """A placeholder for the formula; a block is a paragraph of its own."""
        tag = f"tmp_{kind}_katex_{hashlib.md5((kind + tex).encode()).hexdigest()}"
        html = self.katex.render(tex, display)
        self.html[tag] = f"<p>{html}</p>" if display else html
        return tag

    def reset(self) -> None:
        self.html.clear()

    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(_MathPreprocessor(md, self), "rl_katex", 50)
        md.postprocessors.register(_MathPostprocessor(md, self), "rl_katex", 0)
        md.registerExtension(self)
