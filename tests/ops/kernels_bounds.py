"""Kernels that pass bad run-time values to one instruction each (issue 11 §2, issue 12 items 1
and 2). ``python kernels_bounds.py CASE`` runs one case in a fresh process (on a build without
the checks most of them crash it) and prints ``{"outcome": <error class or "ok">, "guards":
<GM guard bytes intact>}`` as JSON."""
from __future__ import annotations

import json
import sys

import numpy as np

import ascendc_py as asc

TILE = 256
GUARD = 64   # guard elements before and after every GM array


@asc.kernel
def masked_stride(x: asc.GlobalAddress, blk: int, rep: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 4096, 1024)
    asc.adds(a, a, 1.0, 64, 2, asc.UnaryRepeatParams(blk, 1, rep, 8))


@asc.kernel
def reduce_stride(x: asc.GlobalAddress, which: asc.ConstExpr[int], blk: int, rep: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 4096, 1024)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    if which == 0:
        asc.block_reduce_sum(d, a, 2, 64, 1, blk, rep)
    elif which == 1:
        asc.whole_reduce_sum(d, a, 64, 2, 1, blk, rep)
    else:
        asc.pair_reduce_sum(d, a, 2, 64, 1, blk, rep)


@asc.kernel
def reduce_count(x: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 1024)
    w = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 8192, 1024)
    asc.reduce_sum(a, a, w, n)


@asc.kernel
def copy_count(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    a = asc.LocalTensor(asc.int8, asc.TPosition.VECIN, 0, 1024)
    asc.data_copy(a, xg, n)


@asc.kernel
def dump_count(x: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.dump_tensor(a, 1, n)


@asc.kernel
def local_set(x: asc.GlobalAddress, i: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
    a.set_value(i, 1.0)


@asc.kernel
def local_get(x: asc.GlobalAddress, i: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
    xg.set_value(0, a.get_value(i))


@asc.kernel
def gm_set(x: asc.GlobalAddress, i: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    xg.set_value(i, 1.0)


@asc.kernel
def static_addr(x: asc.GlobalAddress, addr: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, addr, 64)
    asc.duplicate(a, 1.0, 64)


@asc.kernel
def dup_count(x: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.duplicate(a, 3.0, n)


@asc.kernel
def counter_mode(x: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 1024)
    asc.set_mask_count()
    asc.set_vector_mask(n, dtype=asc.float32)
    asc.adds(a, a, 1.0, 64, 1, asc.UnaryRepeatParams(1, 1, 8, 8), is_set_mask=False)
    asc.set_mask_norm()


@asc.kernel
def next_buffer(z: asc.GlobalAddress, n: int):
    """Issue 11's reproducer: a count past a 256-element queue tensor into the next queue."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2 * TILE)
    pipe = asc.TPipe()
    qa = asc.TQue(asc.TPosition.VECOUT, 1)
    qb = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qa, 1, TILE * 4)
    pipe.init_buffer(qb, 1, TILE * 4)
    a = qa.alloc_tensor(asc.float32)
    b = qb.alloc_tensor(asc.float32)
    asc.duplicate(b, 8.0, TILE)
    asc.duplicate(a, 7.0, n)
    qa.enque(a)
    qb.enque(b)
    a = qa.deque(asc.float32)
    b = qb.deque(asc.float32)
    asc.data_copy(zg, a, TILE)
    asc.data_copy(zg[TILE:], b, TILE)
    qa.free_tensor(a)
    qb.free_tensor(b)


@asc.kernel
def count_in_bytes(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress):
    """The README's vadd with the count-in-bytes mistake: add(c, a, b, TILE * 4)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, TILE)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, TILE)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, TILE)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qy = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qx, 1, TILE * 4)
    pipe.init_buffer(qy, 1, TILE * 4)
    pipe.init_buffer(qz, 1, TILE * 4)
    a = qx.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, TILE)
    qx.enque(a)
    b = qy.alloc_tensor(asc.float32)
    asc.data_copy(b, yg, TILE)
    qy.enque(b)
    a = qx.deque(asc.float32)
    b = qy.deque(asc.float32)
    c = qz.alloc_tensor(asc.float32)
    asc.add(c, a, b, TILE * 4)
    qz.enque(c)
    qx.free_tensor(a)
    qy.free_tensor(b)
    c = qz.deque(asc.float32)
    asc.data_copy(zg, c, TILE)
    qz.free_tensor(c)


def guarded(n: int, dtype=np.float32):
    """An n-element array inside a larger one whose GUARD elements on each side are 0x5A."""
    whole = np.zeros(n + 2 * GUARD, dtype)
    whole.view(np.uint8)[:] = 0x5A
    inner = whole[GUARD:GUARD + n]
    inner[:] = 0
    return whole, inner


def guards_intact(whole) -> bool:
    raw = whole.view(np.uint8)
    k = GUARD * whole.itemsize
    return bool((raw[:k] == 0x5A).all() and (raw[-k:] == 0x5A).all())


#: case -> (kernel, arguments after the GM array(s), GM element count, GM dtype)
CASES = {
    "masked_negative_rep": (masked_stride, (1, -8), 64, np.float32),
    "masked_negative_blk": (masked_stride, (-1, 8), 64, np.float32),
    "masked_huge_blk": (masked_stride, (1 << 58, 8), 64, np.float32),
    "masked_huge_rep": (masked_stride, (1, 1 << 58), 64, np.float32),
    "block_reduce_negative_rep": (reduce_stride, (0, 1, -8), 64, np.float32),
    "whole_reduce_huge_blk": (reduce_stride, (1, 1 << 58, 8), 64, np.float32),
    "pair_reduce_negative_blk": (reduce_stride, (2, -1, 8), 64, np.float32),
    "reduce_sum_count_2_62": (reduce_count, (1 << 62,), 64, np.float32),
    "int8_copy_2_63": (copy_count, ((1 << 63) - 1,), 1024, np.int8),
    "dump_tensor_huge": (dump_count, (1 << 61,), 64, np.float32),
    "set_value_2_62_plus_3": (local_set, ((1 << 62) + 3,), 64, np.float32),
    "get_value_minus_2_63_plus_5": (local_get, (-(1 << 63) + 5,), 64, np.float32),
    "gm_set_value_2_62_plus_3": (gm_set, ((1 << 62) + 3,), 8, np.float32),
    "static_addr_2_32": (static_addr, (1 << 32,), 64, np.float32),
    "duplicate_2_32_plus_8": (dup_count, ((1 << 32) + 8,), 64, np.float32),
    "counter_mode_huge": (counter_mode, (1 << 40,), 64, np.float32),
    "next_buffer": (next_buffer, (2 * TILE,), 2 * TILE, np.float32),
}


def run(case: str) -> dict:
    kernel, args, n, dtype = CASES[case]
    whole, inner = guarded(n, dtype)
    try:
        kernel[1](inner, *args)
        outcome = "ok"
    except asc.KernelError as exc:
        outcome = type(exc).__name__
    return {"outcome": outcome, "guards": guards_intact(whole)}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1])))
