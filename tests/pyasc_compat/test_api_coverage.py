"""pyasc's public API names provided by the shim (``ascendc_py.pyasc_compat.api_coverage``),
from a checkout named by ``$PYASC_REPO``; skipped without it."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascendc_py.pyasc_compat import api_coverage

PYASC_REPO = os.environ.get("PYASC_REPO")

#: names provided today per module (a floor: raise it as names land)
FLOOR = {"asc.language.basic": 145, "asc.language.core": 108, "asc.language.fwk": 6,
         "asc.language.adv": 53, "asc.lib.host": 14}


@pytest.mark.skipif(not PYASC_REPO, reason="set PYASC_REPO to a checkout of hicann/pyasc")
def test_public_api_names_provided():
    result = api_coverage.coverage(Path(PYASC_REPO))
    fewer = {m: (len(have), FLOOR[m]) for m, (have, _) in result.items() if len(have) < FLOOR[m]}
    assert not fewer, f"fewer pyasc names than before (module: (now, before)): {fewer}"


def test_public_names_reads_a_literal_all(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text("from .x import a\n__all__ = ['a', 'b', 'a']\n")
    assert api_coverage.public_names(init) == ["a", "b"]
