"""Run every benchmark section: ``python -m bench [section ...]`` (default: all)."""

from __future__ import annotations

import sys

from . import browser, demo, ops, site

SECTIONS = {
    "ops": ops.main,
    "site": site.main,
    "browser": browser.main,
    "demo": demo.main,
}


def main() -> None:
    wanted = sys.argv[1:] or list(SECTIONS)
    failed = []
    for name in wanted:
        print(f"\n=== {name} " + "=" * (60 - len(name)))
        if not SECTIONS[name]():
            failed.append(name)
    print("\nall targets met" if not failed else f"\ntargets missed in: {', '.join(failed)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
