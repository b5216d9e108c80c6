"""The site's languages: the one source is the i18n plugin's configuration in ``mkdocs.yml``
(``plugins: - i18n: languages:``), the default language first. The build, the lessons, the
page's scripts (through rl-config) and the tests read them from here.

A default-language page lives at the site's root (``ppo/``), the others under their locale
(``en/ppo/``): :func:`prefix`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

MKDOCS_YML = Path(__file__).resolve().parents[1] / "mkdocs.yml"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml as data: its tags (``!ENV``, ``!!python/name``) are read as if untagged."""


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> object:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_Loader.add_multi_constructor("!", _untagged)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _untagged)


def read(path: Path = MKDOCS_YML) -> tuple[str, ...]:
    """The locales of the i18n plugin in ``path``, the default first, then in their order."""
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    for plugin in config.get("plugins", []):
        if isinstance(plugin, dict) and "i18n" in plugin:
            languages = plugin["i18n"]["languages"]
            default = [lang["locale"] for lang in languages if lang.get("default")]
            rest = [lang["locale"] for lang in languages if not lang.get("default")]
            if len(default) != 1:
                raise ValueError(f"{path}: the i18n plugin needs exactly one default language")
            return tuple(default + rest)
    raise ValueError(f"{path} configures no i18n plugin")


LANGUAGES = read()
DEFAULT = LANGUAGES[0]


def prefix(lang: str) -> str:
    """Where a language's pages are, relative to the site's root: "" or "en/"."""
    return "" if lang == DEFAULT else f"{lang}/"
