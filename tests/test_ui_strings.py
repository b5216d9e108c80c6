"""The widgets' UI strings (js/strings.toml, site_build/ui_strings.py): every string in every
language with the same placeholders, every string the widgets read is there and every string
there is read, and a broken file is a build error that names the string."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rl_ops_numpy.demo.plot import PANELS
from site_build import ui_strings
from site_build.languages import LANGUAGES

from .conftest import ROOT

# `t.drill.seed`, `this.t.finished`: a path into the page's table (js/i18n.js strings())
_READ = re.compile(r"\bt((?:\.[A-Za-z_]\w*)+)(\[)?")


def _reads() -> tuple[set[str], set[str]]:
    """The paths the widgets read, and the groups they index by an id (``t.demo.chart[id]``)."""
    paths, indexed = set(), set()
    for path in (ROOT / "js").glob("*.js"):
        for m in _READ.finditer(path.read_text(encoding="utf-8")):
            (indexed if m.group(2) else paths).add(m.group(1)[1:])
    return paths, indexed


def _leaves(table: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in table.items():
        if isinstance(value, dict) and "other" not in value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_language_has_every_string_with_the_same_placeholders():
    tables = ui_strings.tables()
    leaves = {lang: _leaves(tables[lang]) for lang in LANGUAGES}
    keys = set(leaves[LANGUAGES[0]])
    assert len(keys) > 100
    for lang in LANGUAGES:
        assert set(leaves[lang]) == keys, lang
    for key in keys:
        names = {lang: ui_strings.placeholders(leaves[lang][key]) for lang in LANGUAGES}
        assert len({frozenset(n) for n in names.values()}) == 1, (key, names)


def test_every_string_the_widgets_read_exists_and_every_string_is_read():
    leaves = _leaves(ui_strings.table(LANGUAGES[0]))
    groups = {key.rsplit(".", 1)[0] for key in leaves if "." in key}
    paths, indexed = _reads()
    missing = {p for p in paths if p not in leaves and p not in groups}
    # a call of a method on a string or a group (t.why.output(…) is a string read) is no path
    assert not missing, f"the widgets read strings that js/strings.toml lacks: {sorted(missing)}"
    unread = {key for key in leaves
              if key not in paths and key.rsplit(".", 1)[0] not in indexed}
    assert not unread, f"js/strings.toml has strings no widget reads: {sorted(unread)}"


def test_the_demo_titles_exactly_its_charts_metrics_and_phases():
    table = ui_strings.table(LANGUAGES[0])["demo"]
    assert set(table["chart"]) == {panel[0] for panel in PANELS}
    assert set(table["metric"]) == {panel[2] for panel in PANELS}
    assert set(table["phaseName"]) == {"sft", *(p for panel in PANELS for p in panel[1])}


def _broken(tmp_path: Path, text: str) -> str:
    path = tmp_path / "strings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ui_strings.StringsError) as err:
        ui_strings.tables.__wrapped__(path)
    return str(err.value)


def test_a_string_missing_a_language_is_an_error_naming_it(tmp_path):
    assert "drill.seed" in _broken(tmp_path, '[drill]\nseed = { zh = "种子 {seed}" }\n')


def test_languages_disagreeing_on_placeholders_is_an_error_naming_them(tmp_path):
    message = _broken(tmp_path, 'done = { zh = "完成（{ms}）", en = "Done ({s})" }\n')
    assert "done" in message and "ms" in message and "'s'" in message


def test_a_plural_without_other_or_with_forms_that_disagree_is_an_error(tmp_path):
    assert "plural" in _broken(
        tmp_path, 'n = { zh = "{count} 个", en = { one = "{count} value" } }\n')
    assert "plural forms" in _broken(
        tmp_path, 'n = { zh = "{count} 个", en = { one = "a value", other = "{count} values" } }\n')


def test_a_file_that_is_no_toml_is_an_error_naming_the_file(tmp_path):
    assert "strings.toml" in _broken(tmp_path, "run = { zh = \n")


def test_the_builds_own_words_are_each_read_by_the_build_and_no_page_carries_them():
    words = _leaves(ui_strings.build(LANGUAGES[0]))
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "site_build").glob("*.py"))
    unread = {key for key in words
              if not re.search(rf"""["']{key.rsplit('.', 1)[-1]}["']""", source)}
    assert words and not unread, f"[build] strings the build never reads: {sorted(unread)}"
    for lang in LANGUAGES:
        assert ui_strings.BUILD not in ui_strings.table(lang)


# a JS comment or string literal (a template's ${…} fields are not its words)
_JS_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/"  # comments
                       r"""|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`""", re.S)
_SENTENCE = re.compile(r"[A-Za-z]{2,}[,:;]? [A-Za-z]{2,} [A-Za-z]{2,}")  # three words in a row


def test_no_js_module_holds_an_english_sentence_outside_strings_toml():
    """Every sentence a learner can see comes from js/strings.toml: a fault of the site's code is
    a code with its values (js/job.js Fault), and Python the page runs is Python, not words."""
    found = []
    for path in sorted((ROOT / "js").glob("*.js")):
        for m in _JS_TOKEN.finditer(path.read_text(encoding="utf-8")):
            literal = m.group(0)
            if literal.startswith("/"):
                continue
            body = re.sub(r"\$\{[^}]*\}", "", literal[1:-1])
            if body.startswith(("import ", "from ")):  # Python source the worker runs
                continue
            if _SENTENCE.search(body):
                found.append(f"{path.name}: {literal[:80]}")
    assert not found, found
