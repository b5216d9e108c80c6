"""Every page in headless Chromium, each loaded once per language (the tour): only local
requests, no console errors, its drills started, no WCAG 2.1 A/AA violation light or dark, a
layout that fits a phone; and a working language switcher and search that finds every page by
its words in both languages."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import urlparse

import pytest

from site_build.figures import FIGURES

from .browser import PAGES, wait_until
from .conftest import LESSONS
from .test_browser_a11y import SCHEMES, _scheme, _toggle_scheme, violations


@pytest.fixture
def page(chromium):
    context = chromium.new_context()
    page = context.new_page()
    yield page
    context.close()


LANGS = ("", "en/")
DESKTOP, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def tour(chromium, site_url) -> dict:
    """Every page in both languages, each loaded once, in one tab as a reader goes from page to
    page (service workers allowed): what each showed, by (lang, path), for the tests below.

    Each English page is reached from the Chinese one by the language switcher. Per page: where
    it is and its language, where its switcher leads; requests to other hosts, console errors,
    uncaught exceptions and HTTP errors; its drills (their stats line and blanks); its figures
    drawn; axe-core's violations (all of WCAG 2.1 A/AA in the light scheme, the colour rules in
    the dark one; switched with the palette's toggle, so each scheme is seen both as loaded and
    as switched to); and at 390 px, what scrolls sideways or is under 44 px tall. Each page is
    seen at both widths, one per language: the Chinese page at 1280 px (axe), then narrowed to
    a phone's 390 px (as a window is resized); the English page loaded at 390 px (axe there: a
    table or formula that scrolls only at that width must still be reachable by keyboard)."""
    page = chromium.new_context(color_scheme="light").new_page()
    host = urlparse(site_url).netloc
    now: dict = {}
    page.on("request", lambda r: urlparse(r.url).netloc not in (host, "")
            and now["foreign"].append(r.url))
    page.on("console", lambda m: m.type == "error" and now["errors"].append(m.text))
    page.on("pageerror", lambda e: now["errors"].append(str(e)))
    page.on("response", lambda r: r.status >= 400 and now["errors"].append(f"{r.status} {r.url}"))
    seen: dict = {}
    for path in PAGES:
        for lang in LANGS:
            now = seen[lang, path] = {"foreign": [], "errors": [], "wcag": {}, "schemes": set()}
            if lang == "":
                page.goto(f"{site_url}/{path}")
            else:  # from the Chinese page, by its language switcher, at a phone's width
                page.set_viewport_size(PHONE)
                with page.expect_navigation():
                    page.eval_on_selector(".md-select a[hreflang='en']", "a => a.click()")
            page.wait_for_load_state("networkidle")
            now["url"] = page.url.split("?")[0]
            now["lang"] = page.locator("html").get_attribute("lang")
            now["switch"] = {other: page.eval_on_selector(
                f".md-select a[hreflang='{other}']", "a => a.href.split('?')[0]")
                for other in ("zh", "en")}
            now["h1"] = page.locator("article h1").count()
            drills = page.locator("[data-drill]")
            if drills.count():
                drills.first.locator("pre input[data-slot]").first.wait_for()
            now["drills"] = [(d.locator("[data-drill-stats]").inner_text(),
                              d.locator("pre input[data-slot]").count()) for d in drills.all()]
            if page.locator("[data-demo]").count():  # the demo's eight charts
                now["demo charts"] = page.locator("[data-demo] .uplot").count()
            for figure in page.locator("[data-figure]").all():  # drawn as a reader sees them
                figure.scroll_into_view_if_needed()
                wait_until(page, "el => el.dataset.state === 'drawn'", figure.element_handle(),
                           what=f"{lang}{path}: figure {figure.get_attribute('data-figure')} drawn")
            now["figures drawn"] = page.locator("[data-figure] .uplot").count()
            for switched in (False, True):
                if switched:
                    _toggle_scheme(page)
                name, rules = SCHEMES[_scheme(page)]
                now["schemes"].add((name, switched))
                now["wcag"][name] = violations(page, rules)
            now["phone"] = _at_390_px(page)
            page.set_viewport_size(DESKTOP)
    yield seen
    page.context.close()


def _at_390_px(page) -> dict:
    """The page at a phone's width: how wide it is, its controls under 44 px, what it holds."""
    page.set_viewport_size(PHONE)
    wait_until(page, "() => document.documentElement.clientWidth === 390", what="390 px")
    return {
        # the page itself never scrolls sideways (code blocks and tables scroll inside themselves)
        "width": page.evaluate("document.documentElement.scrollWidth"),
        "small": page.evaluate("""() => [...document.querySelectorAll(
            'article button, article select, article .md-button, '
            + 'article .rl-figure-control label, article input[type=range]')]
            .filter((e) => e.offsetParent !== null)
            .map((e) => [e.outerHTML.slice(0, 80), e.getBoundingClientRect().height])
            .filter(([, h]) => h < 44)"""),
        "cells": page.locator("article [data-runner]").count(),
        "buttons": page.locator("article [data-runner] button").count(),
        "figures": page.locator("article [data-figure]").count(),
        "figure labels": page.locator("article .rl-figure-control label").count(),
    }


def _exercises(path: str) -> int:
    """How many exercises the page at ``path`` holds: its chapter's (none off a chapter)."""
    return sum(1 for ex in LESSONS if f"{ex.split('/')[0]}/" == path)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("path", PAGES)
def test_page_loads_locally_without_console_errors(tour, path, lang):
    seen = tour[lang, path]
    assert not seen["foreign"], f"requests to other hosts: {seen['foreign']}"
    assert not seen["errors"], seen["errors"]
    assert seen["h1"] == 1


@pytest.mark.parametrize(("lang", "words"), [("", "个可挖空位"), ("en/", "maskable slots")])
@pytest.mark.parametrize("path", PAGES)
def test_every_drill_of_a_page_starts_in_its_language(tour, path, lang, words):
    drills = tour[lang, path]["drills"]
    # one drill per exercise of the page's chapter (a page off a chapter has none)
    assert len(drills) == _exercises(path)
    for stats, slots in drills:
        assert words in stats
        assert slots >= 1


def test_every_page_has_no_wcag_violation_in_either_language_light_or_dark(tour):
    """Every WCAG 2.1 A/AA rule in the light scheme; in the dark one, the rules that colours
    decide (the rest see the same page). Each page is loaded once and checked in both schemes,
    switched by the palette's toggle: it loads in the scheme the last page was left in, so the
    dark scheme is seen both as loaded and as switched to, and the light one too."""
    found = {f"{lang}{path} ({name})": bad for (lang, path), seen in tour.items()
             for name, bad in seen["wcag"].items() if bad}
    assert not found, found
    # with the demo and every figure drawn, in both languages
    assert sum(seen["figures drawn"] for seen in tour.values()) == 2 * len(FIGURES)
    assert all(seen.get("demo charts", 8) == 8 for seen in tour.values())
    assert any("demo charts" in seen for seen in tour.values())
    schemes = set().union(*(seen["schemes"] for seen in tour.values()))
    assert schemes == {(name, switched) for name, _ in SCHEMES.values() for switched in (0, 1)}


@pytest.mark.parametrize("lang", LANGS)
def test_at_390_px_pages_fit_and_every_control_is_44_px_tall(tour, lang):
    for path in PAGES:
        phone = tour[lang, path]["phone"]
        assert phone["width"] <= 390, path
        assert not phone["small"], (path, phone["small"][:3])
        # the count is not vacuous: a chapter's page has a cell, with its buttons, for each of
        # its exercises, and a page with figures has their controls
        assert phone["cells"] == _exercises(path), path
        assert phone["buttons"] >= 2 * _exercises(path), path
        if phone["figures"]:
            assert phone["figure labels"] >= 1, path


@pytest.mark.parametrize("path", PAGES)
def test_language_switcher_leads_to_the_same_page(tour, site_url, path):
    pages = {"zh": f"{site_url}/{path}", "en": f"{site_url}/en/{path}"}
    for lang, prefix in (("zh", ""), ("en", "en/")):
        seen = tour[prefix, path]
        # where it is (the English page as the Chinese page's switcher led to it), in its language
        assert (seen["url"], seen["lang"]) == (pages[lang], lang)
        assert seen["switch"] == pages  # each language's link leads to this page in it


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
