"""One-off proof: the vector ``exp`` (``ln``) op's float32 element loop equals this host's
``expf`` (``logf``) bit for bit on all 2^32 float32 inputs (NaN payloads included).

    PYTHONPATH=. python tests/ops/check_libm_exhaustive.py [--op exp|ln] [--quick]

It runs the runtime library's element loop of the op for float32 (``asc_vec_exp_float32_na``,
the one kernels call; the fused loops inline the same IR) and the C library's function
(``libm_ref.apply``; the symbol's default version, what ``dlsym`` gives) over every bit
pattern, 2^24 at a time, and counts the patterns whose result bits differ; it exits 1 if there
are any (and prints at most 20). On glibc the compatibility symbol ``<name>@GLIBC_2.2.5`` (what
a reference without a symbol version binds to: a kernel's fused loop did, before these were
inlined) is compared too, for information: ``logf@GLIBC_2.2.5`` returns +NaN (0x7fc00000) for
negative inputs where ``logf`` returns the default NaN (0xffc00000). Not a pytest module: it
takes a minute or two (``test_exp_libm.py`` is the quick test).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libm_ref  # noqa: E402


def _compat(name: str) -> int | None:
    """glibc's ``<name>@GLIBC_2.2.5`` (None elsewhere)."""
    if libm_ref.glibc_version() is None:
        return None
    libc = ctypes.CDLL(None)
    libc.dlvsym.restype = ctypes.c_void_p
    libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    handle = libm_ref._libm()._handle
    return libc.dlvsym(handle, name.encode(), b"GLIBC_2.2.5") or None


def ours_loop(op: str):
    from ascendc_py.compiler.codegen import runtime_loader
    address = runtime_loader.symbol_address(f"asc_vec_{op}_float32_na")
    assert address, f"the {op} float32 element loop is not in the runtime library"
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return proto(address)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=("exp", "ln"), default="exp")
    ap.add_argument("--chunk-bits", type=int, default=24)
    ap.add_argument("--quick", action="store_true", help="every 4099th pattern only")
    args = ap.parse_args()
    loop = ours_loop(args.op)
    name = {"exp": "expf", "ln": "logf"}[args.op]
    refs = {name: libm_ref.libm_function(name)}
    compat = _compat(name)
    if compat and compat != refs[name]:
        refs[f"{name}@GLIBC_2.2.5"] = compat
    print(f"{args.op}: glibc {libm_ref.glibc_version()}, FMA build expected: "
          f"{libm_ref.glibc_fma_expf()}; "
          f"references: {', '.join(refs)}", flush=True)
    chunk = 1 << args.chunk_bits
    bad = {k: 0 for k in refs}
    shown = 0
    t0 = time.perf_counter()
    checked = 0
    base = np.arange(chunk, dtype=np.uint32)
    if args.quick:
        base = np.ascontiguousarray(base[::4099])
    bits = np.empty_like(base)
    x = bits.view(np.float32)
    ours = np.empty_like(x)
    for start in range(0, 1 << 32, chunk):
        np.add(base, np.uint32(start), out=bits)
        loop(ours.ctypes.data, x.ctypes.data, x.size)
        for ref_name, address in refs.items():
            ref = libm_ref.apply(address, x)
            diff = np.flatnonzero(ours.view(np.uint32) != ref.view(np.uint32))
            bad[ref_name] += diff.size
            for i in diff[:max(0, 20 - shown)] if ref_name == name else ():
                print(f"  MISMATCH vs {ref_name}: x=0x{bits[i]:08x} ({x[i]!r}) ours=0x"
                      f"{ours.view(np.uint32)[i]:08x} ref=0x{ref.view(np.uint32)[i]:08x}")
                shown += 1
        checked += x.size
        if (start // chunk) % 32 == 31:
            print(f"  {checked:,} inputs, {time.perf_counter() - t0:.0f} s", flush=True)
    took = time.perf_counter() - t0
    for ref in refs:
        print(f"{checked:,} inputs vs {ref}: {bad[ref]} mismatches")
    print(f"took {took:.1f} s")
    return 1 if bad[name] else 0


if __name__ == "__main__":
    sys.exit(main())
