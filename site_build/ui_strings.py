"""The widgets' UI strings: ``js/strings.toml``, checked, as one language's table for a page.

In the file each string has every language of the site side by side (``run = { zh = "运行",
en = "Run" }``); a TOML table of such entries is a group (``[drill]``). A string's ``{name}``
placeholders are the values the widget passes, the same in every language and plural form; a
plural is a table of CLDR forms (``{ one = …, other = … }``), picked in the browser by the value
``count``. The build writes :func:`table` of the page's language into the page's rl-config, and
``js/i18n.js`` ``strings()`` makes each templated string a function of its values. The group
``[build]`` holds the words the build itself writes (a page's "Expected output", a download's
instructions): :func:`build` gives them to site_build, and no page's table carries them.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from .languages import LANGUAGES

STRINGS_TOML = Path(__file__).resolve().parents[1] / "js" / "strings.toml"
PLURAL_FORMS = frozenset({"zero", "one", "two", "few", "many", "other"})
_PLACEHOLDER = re.compile(r"\{(\w+)\}")

Text = str | dict[str, str]  # a string, or its plural forms
Table = dict[str, "Text | Table"]


class StringsError(ValueError):
    """A string missing in a language, or its languages disagreeing on its placeholders."""


def placeholders(text: Text) -> set[str]:
    """The ``{name}`` values a string (every plural form of it) needs."""
    forms = text.values() if isinstance(text, dict) else [text]
    return {name for form in forms for name in _PLACEHOLDER.findall(form)}


def _check(key: str, entry: dict[str, Text]) -> None:
    for lang, text in entry.items():
        if isinstance(text, dict):
            if "other" not in text or not set(text) <= PLURAL_FORMS or not all(
                    isinstance(form, str) for form in text.values()):
                raise StringsError(f"{key}.{lang}: a plural is a table of the forms "
                                   f"{sorted(PLURAL_FORMS)} with at least `other`, got {text!r}")
            if len({frozenset(_PLACEHOLDER.findall(form)) for form in text.values()}) > 1:
                raise StringsError(f"{key}.{lang}: its plural forms use different placeholders")
        elif not isinstance(text, str):
            raise StringsError(f"{key}.{lang}: a string or a table of plural forms, got {text!r}")
    names = {lang: placeholders(text) for lang, text in entry.items()}
    if len({frozenset(n) for n in names.values()}) > 1:
        raise StringsError(f"{key}: the languages use different placeholders: {names}")


def _tables(node: dict, path: str = "") -> dict[str, Table]:
    """Split the file's tree into one table per language, checking every entry."""
    out: dict[str, Table] = {lang: {} for lang in LANGUAGES}
    for key, value in node.items():
        where = f"{path}{key}"
        if not isinstance(value, dict):
            raise StringsError(f"{where}: give it every language: {{ "
                               + ", ".join(f'{lang} = "…"' for lang in LANGUAGES) + " }")
        if set(value) & set(LANGUAGES) or not value:  # a string: its languages
            if set(value) != set(LANGUAGES):
                raise StringsError(f"{where}: has {sorted(value)}, the site's languages are "
                                   f"{list(LANGUAGES)}")
            _check(where, value)
            for lang in LANGUAGES:
                out[lang][key] = value[lang]
        else:  # a group
            for lang, table in _tables(value, f"{where}.").items():
                out[lang][key] = table
    return out


@cache
def tables(path: Path = STRINGS_TOML) -> dict[str, Table]:
    """Every language's table of ``path``; :class:`StringsError` names what is wrong in it."""
    try:
        tree = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise StringsError(f"{path}: {err}") from err
    try:
        return _tables(tree)
    except StringsError as err:
        raise StringsError(f"{path}: {err}") from err


BUILD = "build"  # the group of the build's own words


def table(lang: str) -> Table:
    """The strings of one language, as the page's rl-config carries them."""
    return {key: value for key, value in tables()[lang].items() if key != BUILD}


def build(lang: str) -> Table:
    """The words the build writes into pages and downloads in ``lang`` (the group ``[build]``)."""
    return tables()[lang][BUILD]
