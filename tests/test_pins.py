"""The library versions the site compares with are typed once, in ``peers/pins.toml``: pages take
them from there at build time, and no page, docstring or lesson names any other version."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_build import pins

ROOT = Path(__file__).resolve().parent.parent
PINS = pins.load()
# "verl 0.9.1", "TRL v1.16", "OpenRLHF 0.11": a library's name followed by a version
NAMED_VERSION = re.compile(r"\b(verl|TRL|OpenRLHF)\s+v?(\d+(?:\.\d+)+)", re.I)
PAGES = sorted((ROOT / "docs").rglob("*.md"))
SOURCES = sorted([*(ROOT / "rl_ops_numpy").rglob("*.py"), *(ROOT / "docs").rglob("*.py"),
                  *(ROOT / "browser_runtime").rglob("*.py")])


def _pinned(name: str) -> set[str]:
    return {p.version for p in PINS.values() if p.name.lower() == name.lower()}


def test_the_pin_file_names_verl_trl_and_openrlhf_with_a_wheel_and_its_sha256():
    assert {"verl", "trl", "openrlhf"} <= set(PINS)
    for pin in PINS.values():
        assert pin.wheel.startswith(f"{pin.key.split('_')[0]}-{pin.version}-"), pin
        assert re.fullmatch(r"[0-9a-f]{64}", pin.sha256), pin
        assert pin.source.startswith("https://github.com/") and pin.version in pin.source


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_types_no_library_version_it_takes_them_from_the_pin_file(path):
    text = path.read_text(encoding="utf-8")
    typed = [m.group(0) for m in NAMED_VERSION.finditer(text)]
    assert not typed, f"write {{{{verl}}}}, {{{{trl}}}} … instead of {typed}"
    links = re.findall(r"github\.com/[^/\s]+/(?:verl|trl|OpenRLHF)/blob/v\d[^)\s]*", text, re.I)
    assert not links, f"write ({{{{verl.src}}}}/path) instead of {links}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_docstring_or_lesson_names_only_the_pinned_versions(path):
    text = path.read_text(encoding="utf-8")
    other = [m.group(0) for m in NAMED_VERSION.finditer(text)
             if m.group(2) not in _pinned(m.group(1))]
    assert not other, f"{other}: the pinned versions are in peers/pins.toml"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_box_about_the_libraries_names_their_pinned_versions(path):
    # an admonition titled with a library ("How TRL, verl and OpenRLHF do it") says which release
    titles = re.findall(r'^!!! \w+ "([^"]*)"', path.read_text(encoding="utf-8"), re.M)
    for title in titles:
        bare = pins.PLACEHOLDER_RE.sub("", title)
        assert not re.search(r"\b(verl|TRL|OpenRLHF)\b", bare, re.I), title


def test_placeholders_become_the_name_and_version_and_links_the_release_source():
    text = pins.substitute("{{verl}}, {{trl}}, {{openrlhf}} ([x]({{trl.src}}/trl/x.py))",
                           "p.md", PINS)
    v, t, o = PINS["verl"], PINS["trl"], PINS["openrlhf"]
    assert text == (f"verl {v.version}, TRL {t.version}, OpenRLHF {o.version} "
                    f"([x](https://github.com/huggingface/trl/blob/v{t.version}/trl/x.py))")


def test_an_unknown_placeholder_is_an_error_naming_the_page_and_line():
    with pytest.raises(ValueError, match=r"page\.md:2: \{\{vllm\}\} names no pinned library"):
        pins.substitute("first line\nvLLM: {{vllm}}", "page.md", PINS)


def test_the_built_pages_show_the_pinned_versions(built_site):
    assert built_site["returncode"] == 0, built_site["log"][-3000:]
    html = (Path(built_site["dir"]) / "en" / "grpo" / "index.html").read_text(encoding="utf-8")
    assert "{{" not in html
    for key in ("verl", "trl", "openrlhf"):
        assert PINS[key].label in html
    assert f'href="{PINS["verl"].source}/verl/trainer/ppo/core_algos.py"' in html
