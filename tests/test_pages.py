"""The one list of pages (site_build/pages.py) is mkdocs.yml's nav, and it holds every page the
docs have: what the site-wide tests, the screenshots and the benchmark walk is the whole site."""

from __future__ import annotations

from site_build.pages import PAGES, nav_files, url_path

from .conftest import DOCS


def test_every_page_of_the_docs_is_in_the_list_the_site_wide_tests_walk():
    # each page has its Chinese source (the default language's)
    sources = {p.relative_to(DOCS).as_posix().replace(".zh.md", ".md")
               for p in DOCS.rglob("*.zh.md")}
    assert {url_path(s) for s in sources} == set(PAGES)


def test_the_list_is_the_navs_in_its_order_with_sections_walked():
    nav = [{"Home": "index.md"}, {"Part": [{"A": "a/index.md"}, {"B": "a/b.md"}]}, {"G": "g.md"}]
    assert nav_files(nav) == ["index.md", "a/index.md", "a/b.md", "g.md"]
    assert [url_path(f) for f in nav_files(nav)] == ["", "a/", "a/b/", "g/"]
    assert PAGES[0] == "" and len(PAGES) == len(set(PAGES))
    assert "dpo/" in PAGES  # the chapter the old hand-written list had lost
