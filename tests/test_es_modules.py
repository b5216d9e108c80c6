"""site_build.es_modules: the files of an npm package's ES modules the site publishes."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_build.es_modules import ModuleError, closure, imports, version, versioned
from site_build.plugin import EDITOR_DIST, EDITOR_ENTRIES

ROOT = Path(__file__).resolve().parent.parent


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_every_form_of_static_and_dynamic_import_is_read(tmp_path):
    text = """import { a as b, c } from "./one.js";
import * as ns from './two.js';
import "./three.js";
export { d } from "../four.js";
export * from "./five.js";
const m = import("./six.js");
var notAnImport = "import it";
"""
    found = imports(_package(tmp_path, {"m.js": text}) / "m.js")
    assert found == ["./one.js", "./two.js", "./three.js", "../four.js", "./five.js", "./six.js"]
    assert imports(tmp_path / "m.js", dynamic=False) == found[:-1]  # import() left out


def test_closure_follows_relative_imports_and_leaves_out_the_rest(tmp_path):
    root = _package(tmp_path, {
        "index.js": 'import { x } from "./chunk-a.js";\nexport { x };\n',
        "chunk-a.js": 'import "./sub/b.js";\nexport const x = 1;\n',
        "sub/b.js": 'import { y } from "../chunk-a.js";\n',
        "unused.js": "export const z = 0;\n",
        "style.css": ".a{}\n",
    })
    assert closure(root, ["index.js", "style.css"]) == [
        "chunk-a.js", "index.js", "style.css", "sub/b.js"]
    lazy = _package(tmp_path / "lazy", {"a.js": 'import "./b.js";\nimport("./c.js");\n',
                                        "b.js": "", "c.js": ""})
    assert closure(lazy, ["a.js"]) == ["a.js", "b.js", "c.js"]
    assert closure(lazy, ["a.js"], dynamic=False) == ["a.js", "b.js"]


def test_a_bare_import_or_a_missing_file_is_an_error_that_names_the_file(tmp_path):
    root = _package(tmp_path, {"a.js": 'import "emmet";\n', "b.js": 'import "./gone.js";\n'})
    with pytest.raises(ModuleError, match=r"a\.js: imports 'emmet'"):
        closure(root, ["a.js"])
    with pytest.raises(ModuleError, match=r"gone\.js: not found"):
        closure(root, ["b.js"])
    with pytest.raises(ModuleError, match="outside"):
        closure(_package(tmp_path / "p", {"c.js": 'import "../../x.js";\n'}), ["c.js"])


def test_the_published_editor_files_import_only_each_other():
    dist = ROOT / "node_modules" / EDITOR_DIST
    files = closure(dist, EDITOR_ENTRIES)
    for name in files:
        if name.endswith(".js"):
            for spec in imports(dist / name):
                target = (dist / name).parent.joinpath(spec).resolve().relative_to(dist.resolve())
                assert target.as_posix() in files, (name, spec)
    assert len(files) < 30  # a few chunks, not the package's 600 grammars


def test_versioned_asks_each_relative_import_for_the_version_and_stamps_the_literal():
    text = """import { a } from "./one.js";
import uPlot from "../uplot/uPlot.esm.js";
const later = import("./two.js");
const pyodide = import(`${indexURL}pyodide.mjs`);
import "./already.js?v=old";
const VERSION = "__VERSION__";
"""
    out = versioned(text, "abc")
    assert out == """import { a } from "./one.js?v=abc";
import uPlot from "../uplot/uPlot.esm.js?v=abc";
const later = import("./two.js?v=abc");
const pyodide = import(`${indexURL}pyodide.mjs`);
import "./already.js?v=old";
const VERSION = "abc";
"""


def test_the_code_version_changes_with_any_module_and_with_the_runtime(tmp_path):
    a, b = tmp_path / "a.js", tmp_path / "b.js"
    a.write_text("1")
    b.write_text("2")
    first = version([a, b], "0.27.8")
    assert version([b, a], "0.27.8") == first  # the order given does not matter
    assert version([a, b], "0.27.9") != first
    b.write_text("3")
    assert version([a, b], "0.27.8") != first
