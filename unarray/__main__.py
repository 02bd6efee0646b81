"""``python -m unarray``: environment report (default), conformance check, benchmarks."""

from __future__ import annotations

import argparse
import sys


def _report() -> int:
    import unarray as ua

    print(f"unarray {ua.__version__} (array API {ua.__array_api_version__}), Python {sys.version.split()[0]}")
    print(f"{'backend':<12}{'version':<14}{'usable':<8}devices")
    for info in ua.backends(probe=True):
        if not info.installed:
            print(f"{info.name:<12}{'-':<14}{'-':<8}not installed (pip install 'unarray[{info.name}]')")
            continue
        usable = "yes" if info.usable else "no"
        devs = ", ".join(str(d) for d in info.devices) or (info.error or "")
        print(f"{info.name:<12}{info.version or '?':<14}{usable:<8}{devs}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m unarray", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("env", help="report installed backends and devices")
    args = parser.parse_args(argv)
    if args.command in (None, "env"):
        return _report()
    return 2


if __name__ == "__main__":
    sys.exit(main())
