"""Run benchmark sections: ``python -m bench [section ...]`` (all by default; ``--help``)."""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
import textwrap
from pathlib import Path

SECTIONS = ["ops", "site", "browser", "demo"]  # each a module of bench with main() -> bool


def summary(name: str) -> str:
    """The first paragraph of a section's docstring, read without importing it (``ops`` imports
    torch, ``browser`` loads a lesson)."""
    source = Path(__file__).with_name(f"{name}.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    return " ".join(doc.split("\n\n")[0].split())


def parse(argv: list[str]) -> list[str]:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Timings of the site, as ratios where a baseline exists; each section "
        "prints its targets, PASS or FAIL. The exit status is 1 if any target is missed.",
        epilog="sections:\n" + "\n".join(
            textwrap.fill(summary(n), 96, initial_indent=f"  {n:9s}", subsequent_indent=" " * 11)
            for n in SECTIONS
        ) + "\n\n`python -m bench.floor` alone (a few seconds, no torch, no browser): GAE "
        "against a copy of its inputs.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sections", nargs="*", metavar="section",
                        help=f"any of {', '.join(SECTIONS)} (default: all, in that order)")
    wanted = parser.parse_args(argv).sections or SECTIONS
    unknown = [name for name in wanted if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    return wanted


def main(argv: list[str] | None = None) -> int:
    failed = []
    for name in parse(sys.argv[1:] if argv is None else argv):
        print(f"\n=== {name} " + "=" * (60 - len(name)))
        if not importlib.import_module(f"bench.{name}").main():
            failed.append(name)
    print("\nall targets met" if not failed else f"\ntargets missed in: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
