"""Every page in headless Chromium: only local requests, no console errors, a working language
switcher, search that finds every page by its words in both languages, and a layout that fits a
phone."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import urlparse

import pytest

from .browser import PAGES, wait_until
from .conftest import LESSONS


@pytest.fixture
def page(chromium):
    context = chromium.new_context()
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("lang", ["", "en/"])
@pytest.mark.parametrize("path", PAGES)
def test_page_loads_locally_without_console_errors(page, site_url, path, lang):
    host = urlparse(site_url).netloc
    foreign, errors = [], []
    page.on("request", lambda r: urlparse(r.url).netloc not in (host, "") and foreign.append(r.url))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status} {r.url}"))
    page.goto(f"{site_url}/{lang}{path}")
    page.wait_for_load_state("networkidle")
    assert not foreign, f"requests to other hosts: {foreign}"
    assert not errors, errors
    assert page.locator("article h1").count() == 1


@pytest.mark.parametrize("path", PAGES)
def test_language_switcher_leads_to_the_same_page(page, site_url, path):
    page.goto(f"{site_url}/{path}")
    for lang, expected in (("en", f"{site_url}/en/{path}"), ("zh", f"{site_url}/{path}")):
        with page.expect_navigation():
            page.eval_on_selector(f".md-select a[hreflang='{lang}']", "a => a.click()")
        assert page.url.split("?")[0] == expected
        assert page.locator("html").get_attribute("lang") == lang


def test_chinese_search_finds_a_chinese_term(page, site_url):
    page.goto(f"{site_url}/")
    page.wait_for_load_state("networkidle")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    search = page.locator(".md-search__input")
    search.fill("重要性")
    search.press("End")  # Material searches on key events; fill() alone types no key
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=10000)
    assert results.count() > 0
    assert "重要性" in page.locator(".md-search-result").inner_text()


@pytest.mark.parametrize("lang", ["", "en/"])
@pytest.mark.parametrize("word", ["arxiv", "verl", "trl", "grpo", "deepseekmath"])
def test_a_name_typed_in_lower_case_finds_the_page_that_cites_it(page, site_url, lang, word):
    # "arXiv" and "DeepSeekMath" are one word each in the index (no camelCase split), and search
    # ignores case: the GRPO page cites all five names
    page.goto(f"{site_url}/{lang}")
    page.wait_for_load_state("networkidle")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator(".md-search__input")
    box.fill(word)
    box.press("End")  # Material searches on key events; fill() alone types no key
    page.locator(".md-search-result__item").first.wait_for(timeout=10000)
    hrefs = page.eval_on_selector_all(
        ".md-search-result__item > .md-search-result__link",
        "els => els.map((a) => new URL(a.href).pathname)",
    )
    assert f"/{lang}grpo/" in hrefs, hrefs


@pytest.mark.parametrize("lang", ["", "en/"])
def test_at_390_px_pages_fit_and_every_control_is_44_px_tall(chromium, site_url, lang):
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    for path in PAGES:
        page.goto(f"{site_url}/{lang}{path}")
        page.wait_for_load_state("networkidle")
        # the page itself never scrolls sideways (code blocks and tables scroll inside themselves)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        small = page.evaluate("""() => [...document.querySelectorAll(
            'article button, article select, article .md-button, '
            + 'article .rl-figure-control label, article input[type=range]')]
            .filter((e) => e.offsetParent !== null)
            .map((e) => [e.outerHTML.slice(0, 80), e.getBoundingClientRect().height])
            .filter(([, h]) => h < 44)""")
        assert not small, (path, small[:3])
        # the count is not vacuous: a chapter's page has a cell, with its buttons, for each of
        # its exercises, and a page with figures has their controls
        exercises = sum(1 for ex in LESSONS if f"{ex.split('/')[0]}/" == path)
        assert page.locator("article [data-runner]").count() == exercises, path
        assert page.locator("article [data-runner] button").count() >= 2 * exercises, path
        if page.locator("article [data-figure]").count():
            assert page.locator("article .rl-figure-control label").count() >= 1, path
    context.close()


def _sample(words: set[str], n: int = 6) -> list[str]:
    """``n`` of ``words``, spread over them in sorted order (the same every run)."""
    vocabulary = sorted(words)
    step = max(1, len(vocabulary) // n)
    return vocabulary[step // 2::step][:n]


class _Text(HTMLParser):
    """The text of a page's <article>, without scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.depth = 0  # inside <article>
        self.hidden = 0  # inside <script> or <style>

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.depth += tag == "article"
        self.hidden += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag == "article"
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if self.depth and not self.hidden:
            self.parts.append(data)


def _page_words(page, site_url: str, lang: str, path: str) -> list[str]:
    """Words of a page as a reader would type them: English words as the page writes them;
    Chinese words as the build's jieba cut them (a Chinese reader types a word, and which
    characters form one depends on the sentence, so the words are read from the index)."""
    if lang == "en/":
        # the page as served (the widgets' own labels, drawn by JavaScript, are not its words)
        text = _Text()
        text.feed(page.request.get(f"{site_url}/{lang}{path}").text())
        return _sample(set(re.findall(r"\b[A-Za-z][a-z]{3,}\b", " ".join(text.parts))))
    docs = page.request.get(f"{site_url}/search/search_index.json").json()["docs"]
    text = " ".join(d["text"] for d in docs if d["location"].split("#")[0] == path)
    return _sample({w for w in re.split(r"[\s\u200b]+", text)
                    if re.fullmatch(r"[\u4e00-\u9fff]{2,}", w)})


@pytest.mark.parametrize("lang", ["", "en/"])
def test_words_a_page_says_find_that_page(page, site_url, lang):
    words = {path: _page_words(page, site_url, lang, path) for path in PAGES}
    page.goto(f"{site_url}/{lang}")
    page.wait_for_load_state("networkidle")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator(".md-search__input")
    meta = page.locator(".md-search-result__meta")
    idle = meta.inner_text()  # "Type to start searching", in the page's language
    missed = []
    for path, sample in words.items():
        assert len(sample) == 6, (path, sample)
        for word in sample:
            box.fill(word)
            box.press("End")  # Material searches on key events
            # wait for this query's results to replace the idle line
            wait_until(page, "idle => document.querySelector("
                       "'.md-search-result__meta').textContent !== idle", idle,
                       what=f"results for {word!r}")
            # Material draws results ten at a time, more as the list is scrolled, in its own
            # time: scroll to the end at every poll until this page's result is drawn, or all
            # are (it counts documents, and draws the sections of a page as one item, so a
            # common word's count can exceed the items ever drawn)
            shown = re.search(r"\d+", meta.inner_text())
            total = int(shown.group()) if shown else 0
            wait_until(
                page,
                "([n, path]) => { document.querySelector('.md-search__scrollwrap')"
                ".scrollTo(0, 1e6); const links = [...document.querySelectorAll("
                "'.md-search-result__item > .md-search-result__link')];"
                " return links.some((a) => new URL(a.href).pathname === path)"
                " || document.querySelectorAll('.md-search-result__list > li').length >= n; }",
                [total, f"/{lang}{path}"], what=f"results for {word!r} drawn",
                now=lambda: page.locator(".md-search-result__list > li").count(),
            )
            hrefs = page.eval_on_selector_all(
                ".md-search-result__item > .md-search-result__link",
                "els => els.map((a) => new URL(a.href).pathname)",
            )
            if f"/{lang}{path}" not in hrefs:
                missed.append((path, word))
            box.fill("")
            box.press("End")
            wait_until(page, "idle => document.querySelector("
                       "'.md-search-result__meta').textContent === idle", idle,
                       what=f"the idle line back after {word!r}")
    assert not missed, missed


def test_a_missing_page_shows_the_404_page_without_errors_at_any_depth(page, site_url):
    """The server answers a missing path with the site's 404 page, as GitHub Pages does; its
    scripts run without an error (its rl-config `base` was "//", an invalid URL) and register
    the service worker at the site's root."""
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # (the console's line for the page's own 404 status is no error of its scripts)
    page.on("console", lambda m: m.type == "error" and "404" not in m.text
            and errors.append(m.text))
    for path in ("no-such-page/", "ppo/no/such/page/"):
        response = page.goto(f"{site_url}/{path}")
        assert response.status == 404
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").first.inner_text() == "404 - Not found"
        config = page.locator("#rl-config").text_content()
        assert json.loads(config)["base"] == "/"
    assert not errors, errors
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == f"{site_url}/"
