"""The storage prefix and the key shapes have one home, js/dom.js: the page's head runs dom.js's
own head block (inlined by the build), backup.js reads dom.js's KEYS, and no other file spells a
key."""

from __future__ import annotations

import re

import pytest
from mkdocs.exceptions import PluginError

from site_build.plugin import storage_head

from .conftest import ROOT

JS = ROOT / "js"


def test_the_pages_head_runs_dom_js_own_head_block(built_site):
    block = storage_head(JS / "dom.js")
    assert "const prefixOf" in block and "const SETTINGS" in block
    assert "//" not in block.split("\n")[0]  # the code, its comment lines left in dom.js
    for page in ("index.html", "en/ppo/index.html", "404.html"):
        html = (built_site["dir"] / page).read_text(encoding="utf-8")
        head = html.split("</head>")[0]
        assert block in head, page
        assert "prefixOf(path) + SETTINGS" in head, page


def test_a_dom_js_without_its_head_block_stops_the_build(tmp_path):
    js = tmp_path / "dom.js"
    js.write_text('const LEGACY = "rl-ops/";\n', encoding="utf-8")
    with pytest.raises(PluginError, match="head"):
        storage_head(js)


def test_no_file_but_dom_js_spells_the_prefix_or_a_key_shape():
    shapes = re.compile(r"""["'`](rl-ops/|rl-ops@|cell/|solved/|drill/|review/|revealed/|"""
                        r"""/previous|/imported/|/unreadable/|/v/)""")
    files = [*JS.glob("*.js"), *(ROOT / "overrides").rglob("*.html")]
    spelled = {f.name: shapes.findall(f.read_text(encoding="utf-8"))
               for f in files if f.name != "dom.js"}
    assert not {name: found for name, found in spelled.items() if found}
