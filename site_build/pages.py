"""The site's pages: the one list, mkdocs.yml's ``nav``.

The build orders its chapters by it (site_build/plugin.py), and the screenshots, the benchmark
and every site-wide test walk :data:`PAGES`, so a chapter added to the nav is built, measured and
tested without touching any of them.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def nav_files(nav: object) -> list[str]:
    """The Markdown files ``nav`` lists (``"ppo/index.md"``), in its order, sections walked."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in nav_files(value)]
    if isinstance(nav, list):
        return [f for value in nav for f in nav_files(value)]
    return []


def url_path(src: str) -> str:
    """A page's path under its language's root, as mkdocs writes it with directory URLs:
    ``index.md`` → ``""``, ``ppo/index.md`` → ``"ppo/"``, ``s21/demo.md`` → ``"s21/demo/"``."""
    path = Path(src).with_suffix("")
    parts = path.parts[:-1] if path.name == "index" else path.parts
    return "".join(f"{part}/" for part in parts)


class _Loader(yaml.SafeLoader):
    """mkdocs.yml as data: its tags (``!ENV``, ``!!python/name:``) read as nothing."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def nav_pages(config: Path = ROOT / "mkdocs.yml") -> list[str]:
    """Every page of ``config``'s nav, as :func:`url_path` names it, in the nav's order."""
    nav = yaml.load(config.read_text(encoding="utf-8"), Loader=_Loader).get("nav")
    return [url_path(src) for src in nav_files(nav)]


# the site's pages (paths under each language's root, "" the home page)
PAGES = nav_pages()
