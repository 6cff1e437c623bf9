"""Debug printing: printf, dump_tensor (declarations, format parsing and output decoding).

How it works. Sema parses the format string at compile time into segments (literal text and
conversions; compile-time arguments are formatted right away). At run time a ``printf`` appends
one binary record to its block's print buffer (``abi.PRINT_PTR``): the record's site id (which
identifies the format in ``CompiledKernel.sites``) and its runtime values as 64-bit words
(integers sign- or zero-extended, floats as float64 bits). ``dump_tensor`` appends its site id,
``desc``, the tensor's address and the raw bytes of its first ``count`` elements. No Python runs
during the launch; after it, ``format_block_output`` turns each block's records into text, and
the launch prints the blocks' text in block order (``Report.output``).

Output formats:
* ``printf(fmt, *args)``: C conversions ``%d %i %u %x %X %o %f %F %e %E %g %G %c %s %%`` with
  flags, width and precision (length modifiers such as ``l``/``ll``/``h`` are accepted and
  ignored). As on the NPU, ``%u``/``%x``/``%o`` print negative values as 64-bit unsigned.
  ``%s`` takes a string constant. Python's ``print(a, b, …)`` in a kernel prints its arguments
  separated by spaces plus a newline, like Python.
* ``dump_tensor(tensor, desc, count)`` prints, like Ascend C's DumpTensor::

      DumpTensor: desc=5, addr=0, data_type=float16, position=UB, dump_size=4
      [1.000000, 2.000000, 3.000000, 4.000000]

  (``addr`` is the UB byte address, or the byte offset into the GM argument for GM tensors;
  floating-point elements are printed with ``%f``, integers in decimal.)

Each block has a 1 MiB buffer (the size of Ascend C's per-core printf workspace); records that do
not fit are dropped and the output says how many. printf and dump_tensor take no simulated time.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from ...dsl.types import PipeID
from . import CostClass, Family, OpSpec, register

register(OpSpec("printf", Family.SYSTEM, PipeID.PIPE_S, CostClass.NONE, (),
                (("fmt", "*args"),),
                doc="printf(fmt, *args): C-style formatted output, collected per block and "
                    "printed after the launch in block order.", flops_per_elem=0))
register(OpSpec("dump_tensor", Family.SYSTEM, PipeID.PIPE_S, CostClass.NONE, (),
                (("tensor", "desc", "dump_size"),),
                doc="dump_tensor(tensor, desc, dump_size): print the first dump_size elements of "
                    "a UB or GM tensor with a user tag, after the launch.", flops_per_elem=0))

PRINT_BUFFER_BYTES = 1 << 20
HEADER_WORDS = 3           # capacity, used bytes, dropped records
INT_CONVERSIONS = "diuxXoc"
FLOAT_CONVERSIONS = "fFeEgG"
_SPEC = re.compile(r"%(?P<spec>[-+ #0]*\d*(?:\.\d*)?)(?P<len>hh|h|ll|l|L|q|j|z|t)?"
                   r"(?P<conv>[diuxXocfFeEgGsp%])")


class FormatError(ValueError):
    """A malformed printf format; sema turns it into a KernelValueError at the call's line."""


def parse_format(fmt: str) -> list[tuple]:
    """Split a C format into ``("text", s)`` and ``("conv", spec, conv)`` pieces."""
    out: list[tuple] = []
    pos = 0
    while True:
        i = fmt.find("%", pos)
        if i < 0:
            out.append(("text", fmt[pos:]))
            return [p for p in out if p != ("text", "")]
        out.append(("text", fmt[pos:i]))
        m = _SPEC.match(fmt, i)
        if m is None:
            bad = fmt[i:i + 4]
            raise FormatError(f"unsupported conversion '{bad}' in the format string; supported: "
                              f"%d %i %u %x %X %o %c %f %F %e %E %g %G %s %%")
        if m.group("conv") == "%":
            out.append(("text", "%"))
        elif m.group("conv") == "p":
            raise FormatError("%p is not supported: there are no pointers in kernels")
        else:
            out.append(("conv", m.group("spec"), m.group("conv")))
        pos = m.end()


def format_value(spec: str, conv: str, kind: str, dtype_name: str, value) -> str:
    """One converted value. ``kind``: 'i' signed, 'u' unsigned, 'b' bool, 'f' float; ``conv``
    'print' is Python's str() of the value in its dtype."""
    if conv == "print":
        if kind == "f":
            np_type = np.float16 if dtype_name == "float16" else (
                np.float64 if dtype_name == "float64" else np.float32)
            return str(np_type(value))
        return str(bool(value)) if kind == "b" else str(int(value))
    if conv in FLOAT_CONVERSIONS:
        value = float(value)
    else:
        value = int(value)
        if conv in "uxXo" and value < 0:
            value &= (1 << 64) - 1
        if conv == "c":
            value = value & 0xFF
    return f"%{spec}{conv}" % value


def _decode(kind: str, word: int):
    if kind == "f":
        return struct.unpack("<d", struct.pack("<q", word))[0]
    if kind == "u":
        return word & ((1 << 64) - 1)
    return word


def _elements_text(data: bytes, dtype_name: str) -> str:
    from ...dsl.types import as_dtype
    dt = as_dtype(dtype_name)
    arr = np.frombuffer(data, dt.numpy)
    if dtype_name == "bfloat16":
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    if dt.is_float:
        return ", ".join("%f" % float(v) for v in arr)
    return ", ".join(str(int(v)) for v in arr)


def _record_text(site, payload: bytes) -> str:
    words = np.frombuffer(payload[:len(payload) // 8 * 8], np.int64)
    detail = site.detail if site is not None else ()
    if site is not None and site.op == "dump_tensor":
        _, dtype_name, position = detail
        desc, addr, count = (int(w) for w in words[:3])
        data = payload[24:24 + count * _itemsize(dtype_name)]
        return (f"DumpTensor: desc={desc & 0xFFFFFFFF}, addr={addr}, data_type={dtype_name}, "
                f"position={position}, dump_size={count}\n[{_elements_text(data, dtype_name)}]\n")
    pieces, k = [], 0
    for seg in (detail[0] if detail else ()):
        if seg[0] == "text":
            pieces.append(seg[1])
        else:
            _, spec, conv, kind, dtype_name = seg
            pieces.append(format_value(spec, conv, kind, dtype_name,
                                       _decode(kind, int(words[k]))))
            k += 1
    return "".join(pieces)


def _itemsize(dtype_name: str) -> int:
    from ...dsl.types import as_dtype
    return as_dtype(dtype_name).sizeof()


def format_block_output(buf: np.ndarray, sites, block: int) -> str:
    """The text of one block's print buffer (an int64 array in the layout of ``abi.PRINT_PTR``)."""
    used, dropped = int(buf[1]), int(buf[2])
    raw = buf[HEADER_WORDS:].view(np.uint8)[:used].tobytes()
    out, pos = [], 0
    while pos + 16 <= len(raw):
        site_id, nbytes = struct.unpack_from("<qq", raw, pos)
        payload = raw[pos + 16:pos + 16 + nbytes]
        pos += 16 + (nbytes + 7) // 8 * 8
        site = sites[site_id] if 0 <= site_id < len(sites) else None
        out.append(_record_text(site, payload))
    if dropped:
        out.append(f"[ascendc_py: {dropped} printf/dump_tensor record(s) of block {block} were "
                   f"dropped: its {PRINT_BUFFER_BYTES >> 20} MiB print buffer is full]\n")
    return "".join(out)
