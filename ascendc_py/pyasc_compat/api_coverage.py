"""How much of pyasc's public API this package provides: every name in the ``__all__`` of
pyasc's ``asc.language.{basic,core,fwk,adv}`` and ``asc.lib.host`` (read from a checkout named
by ``$PYASC_REPO`` with :mod:`ast`; pyasc's code is never imported or run), looked up on the
shim's module of the same name (:mod:`ascendc_py.pyasc_compat.shim`).

``python -m ascendc_py.pyasc_compat.api_coverage [--repo DIR]`` prints the count per module and
the missing names. A name counts when the shim's module has it; what it does is the business
of the op tests and of pyasc's own corpus (:mod:`ascendc_py.pyasc_compat.corpus`).
"""
from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import install
from .corpus import REPO_ENV

#: pyasc package directory (under python/asc/) -> the module a program imports
MODULES = {"language/basic": "asc.language.basic", "language/core": "asc.language.core",
           "language/fwk": "asc.language.fwk", "language/adv": "asc.language.adv",
           "lib/host": "asc.lib.host"}


def public_names(init_file: Path) -> list[str]:
    """The literal ``__all__`` of a pyasc ``__init__.py`` (unique, in order)."""
    tree = ast.parse(init_file.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                                for t in node.targets):
            return list(dict.fromkeys(ast.literal_eval(node.value)))
    return []


def coverage(repo: Path) -> dict[str, tuple[list[str], list[str]]]:
    """module -> (names provided, names missing)."""
    out = {}
    with install():
        for sub, module_name in MODULES.items():
            names = public_names(repo / "python" / "asc" / sub / "__init__.py")
            module = importlib.import_module(module_name)
            have = [n for n in names if _provides(module, n)]
            out[module_name] = (have, [n for n in names if n not in have])
    return out


def _provides(module, name: str) -> bool:
    try:
        return getattr(module, name) is not None
    except (AttributeError, ImportError):
        return False


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ascendc_py.pyasc_compat.api_coverage",
                                     description="pyasc public API names provided here")
    parser.add_argument("--repo", default=os.environ.get(REPO_ENV),
                        help=f"a checkout of hicann/pyasc (default: ${REPO_ENV})")
    args = parser.parse_args(argv)
    if not args.repo:
        parser.error(f"set {REPO_ENV} or pass --repo: a checkout of hicann/pyasc")
    result = coverage(Path(args.repo))
    total = sum(len(h) + len(m) for h, m in result.values())
    for module_name, (have, missing) in result.items():
        print(f"{module_name}: {len(have)} of {len(have) + len(missing)}"
              + (f"; missing: {', '.join(missing)}" if missing else ""))
    print(f"total: {sum(len(h) for h, _ in result.values())} of {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
