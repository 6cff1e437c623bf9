"""Huge-page advice for the large outputs of torch ops (``torch_bridge/hostmem.py``)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

from ascendc_py.torch_bridge import hostmem

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _thp_mode() -> str:
    try:
        found = re.search(r"\[(\w+)\]", THP.read_text())
    except OSError:
        return ""
    return found.group(1) if found else ""


def _anon_huge_kib(address: int) -> int:
    """AnonHugePages (KiB) of the mapping of this process that holds ``address``."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
        if head:
            inside = int(head.group(1), 16) <= address < int(head.group(2), 16)
        elif inside and line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return 0


@pytest.mark.skipif(not sys.platform.startswith("linux") or _thp_mode() != "madvise",
                    reason="needs Linux with transparent huge pages in 'madvise' mode")
def test_a_large_output_is_backed_by_huge_pages_once_advised():
    n = 16 << 20                                   # 64 MiB of float32
    plain = torch.empty(n)
    plain.fill_(1.0)
    assert _anon_huge_kib(plain.data_ptr() + (32 << 20)) == 0   # "madvise" mode: not unasked
    advised = torch.empty(n)
    hostmem.advise_huge_pages((advised,))
    advised.fill_(1.0)
    assert _anon_huge_kib(advised.data_ptr() + (32 << 20)) > 0


def test_small_and_empty_outputs_are_left_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(hostmem, "_libc_madvise", lambda: calls.append(1) or None)
    hostmem.advise_huge_pages((torch.empty(0), torch.empty(1000), torch.empty((1 << 20) - 1)))
    assert calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux") or _thp_mode() != "madvise",
                    reason="needs Linux with transparent huge pages in 'madvise' mode")
def test_a_torch_op_advises_its_output():
    import ascendc_py.torch_bridge.ops  # noqa: F401  (registers torch.ops.ascendc.*)
    x = torch.ones(16 << 20)
    out = torch.ops.ascendc.add(x, x)
    assert bool((out == 2).all())
    assert _anon_huge_kib(out.data_ptr() + (32 << 20)) > 0
