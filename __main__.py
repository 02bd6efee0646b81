"""``python -m unarray`` run from the folder that holds this clone, where the clone's folder is named
``unarray``: Python imports the clone's folder itself as a namespace package ``unarray`` (the current
folder comes first on ``sys.path``), which has none of the package's names, and then runs this file as
its ``__main__``. So this file puts the clone's package in its place and runs its command line.

Where unarray is installed from this clone (``pip install -e .``) or as a wheel, the real package is
found first and this file never runs; it is not part of the package. (``python <clone>`` runs it too.)
"""

from __future__ import annotations

import os
import sys


def _run_the_package() -> int:
    root = os.path.dirname(os.path.abspath(__file__))
    shadow = sys.modules.get("unarray")
    if shadow is not None and getattr(shadow, "__file__", None) is None:  # the folder, as a namespace package
        for name in [m for m in sys.modules if m == "unarray" or m.startswith("unarray.")]:
            del sys.modules[name]
    sys.path.insert(0, root)
    from unarray.__main__ import main

    return main(prog="python -m unarray")

if __name__ == "__main__":
    sys.exit(_run_the_package())
