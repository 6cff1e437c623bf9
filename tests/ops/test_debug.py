"""printf / print / dump_tensor: the text, its order (blocks in order, calls in program order),
report.output and stdout, output printed before a fault, a full buffer, and the errors."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.debug import FormatError, format_value, parse_format


def _line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


# ----------------------------------------------------------------------------- printf
@asc.kernel
def printf_kernel(x: asc.GlobalAddress, n: int, f: float, neg: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    b = asc.get_block_idx()
    asc.printf("block %d of %d\n", b, asc.get_block_num())
    asc.printf("[%5d|%-4i|%03u] %.2f %e %s 100%%\n", n, n, n, f, f, "str")
    asc.printf("hex %x %X %#x neg %d as %%u: %u as %%x: %x\n", 255, n, n, neg, neg, neg)
    asc.printf("elem %f %d\n", xg.get_value(1), 7)
    print("py", n, f, n > 3, 0.25, "end", sep="|")


def test_printf_conversions_and_block_order(capsys):
    x = np.array([1.5, 2.25, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], np.float32)
    report = printf_kernel[3](x, 12, 0.5, -2)
    per_block = ("[   12|12  |012] 0.50 5.000000e-01 str 100%\n"
                 "hex ff C 0xc neg -2 as %u: 18446744073709551614 as %x: fffffffffffffffe\n"
                 "elem 2.250000 7\n"
                 "py|12|0.5|True|0.25|end\n")
    expected = "".join(f"block {b} of 3\n" + per_block for b in range(3))
    assert report.output == expected
    assert capsys.readouterr().out == expected
    assert "--- kernel output ---" in str(report)


@asc.kernel
def typed_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, u: asc.GlobalAddress):
    """Runtime values of narrow and unsigned types read from GM."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    ug = asc.GlobalTensor()
    xg.set_global_buffer(x, 16)
    yg.set_global_buffer(y, 16)
    ug.set_global_buffer(u, 16)
    asc.printf("%f %d %u %d\n", xg.get_value(0), yg.get_value(0), ug.get_value(0),
               ug.get_value(0))
    print(xg.get_value(0))


def test_narrow_and_unsigned_values():
    x = np.full(16, 0.1, np.float16)
    y = np.full(16, -7, np.int8)
    u = np.full(16, 2 ** 63 + 5, np.uint64)
    report = typed_kernel[1](x, y, u)
    assert report.output == (f"{float(np.float16(0.1)):f} -7 {2 ** 63 + 5} {2 ** 63 + 5}\n"
                             f"{str(np.float16(0.1))}\n")


@asc.kernel
def quiet_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    if asc.get_block_idx() == 2:
        asc.printf("only block %d\n", asc.get_block_idx())


def test_only_blocks_that_print_appear_and_silent_launches_print_nothing(capsys):
    x = np.zeros(8, np.float32)
    assert quiet_kernel[4](x).output == "only block 2\n"
    assert quiet_kernel[2](x).output == ""
    assert capsys.readouterr().out == "only block 2\n"


@asc.kernel
def many_blocks(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    for i in range(2):
        asc.printf("b%d.%d ", asc.get_block_idx(), i)


def test_block_order_with_parallel_blocks():
    x = np.zeros(8, np.float32)
    report = many_blocks[40](x)
    assert report.output == "".join(f"b{b}.0 b{b}.1 " for b in range(40))


@asc.kernel
def flood(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    for i in range(n):
        asc.printf("%d\n", i)


def test_full_buffer_drops_records_and_says_so():
    x = np.zeros(8, np.float32)
    n = 50_000                           # 24 bytes a record: ~43,690 fit in 1 MiB
    out = flood[1](x, n).output
    lines = out.splitlines()
    kept = (1 << 20) // 24 - 1
    assert lines[:3] == ["0", "1", "2"] and lines[kept - 1] == str(kept - 1)
    assert lines[-1].startswith(f"[ascendc_py: {n - kept} printf/dump_tensor record(s) of "
                                f"block 0 were dropped")


# ----------------------------------------------------------------------------- dump_tensor
@asc.kernel
def dump_kernel(x: asc.GlobalAddress, n: int, count: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 256, n)
    asc.data_copy(a, xg, n)
    asc.dump_tensor(a, 5, count)
    asc.dump_tensor(xg[2:], asc.get_block_idx(), 3)


@pytest.mark.parametrize("dtype,text", [
    (np.float32, "0.000000, 1.000000, 2.000000, 3.000000"),
    (np.float16, "0.000000, 1.000000, 2.000000, 3.000000"),
    (np.int32, "0, 1, 2, 3"),
    (np.uint8, "0, 1, 2, 3"),
    (np.int64, "0, 1, 2, 3"),
])
def test_dump_tensor_ub_and_gm(dtype, text):
    n = 64
    x = np.arange(n).astype(dtype)
    es = np.dtype(dtype).itemsize
    report = dump_kernel[2](x, n, 4)
    name = np.dtype(dtype).name
    blocks = []
    for b in range(2):
        gm_vals = [2, 3, 4]
        gm = ", ".join(f"{v:f}" if np.dtype(dtype).kind == "f" else str(v) for v in gm_vals)
        blocks.append(f"DumpTensor: desc=5, addr=256, data_type={name}, position=UB, "
                      f"dump_size=4\n[{text}]\n"
                      f"DumpTensor: desc={b}, addr={2 * es}, data_type={name}, position=GM, "
                      f"dump_size=3\n[{gm}]\n")
    assert report.output == "".join(blocks)


def test_dump_tensor_bfloat16_and_empty():
    torch = pytest.importorskip("torch")
    x = torch.arange(64, dtype=torch.bfloat16) / 4
    report = dump_kernel[1](x, 64, 0)
    assert report.output.splitlines()[:2] == [
        "DumpTensor: desc=5, addr=256, data_type=bfloat16, position=UB, dump_size=0", "[]"]
    assert report.output.splitlines()[3] == "[0.500000, 0.750000, 1.000000]"


def test_dump_tensor_past_the_tensor_is_checked_against_memory():
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(asc.LocalMemoryError) as info:
        dump_kernel[1](x, 64, 192 * 1024 // 4)
    assert info.value.loc.line == _line(dump_kernel, "asc.dump_tensor(a, 5, count)")
    assert "tensor" in str(info.value)


# ----------------------------------------------------------------------------- faults
@asc.kernel
def print_then_fail(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    asc.printf("before %d\n", asc.get_block_idx())
    if asc.get_block_idx() == 1:
        v = xg.get_value(n)          # out of bounds in block 1
    asc.printf("after %d\n", asc.get_block_idx())


def test_output_before_a_fault_is_printed(capsys):
    x = np.zeros(8, np.float32)
    with pytest.raises(asc.GMOutOfBoundsError) as info:
        print_then_fail[2](x, 8)
    assert info.value.output == "before 0\nafter 0\nbefore 1\n"
    assert capsys.readouterr().out == "before 0\nafter 0\nbefore 1\n"


# ----------------------------------------------------------------------------- compile errors
COMPILE_ERRORS = [
    ('asc.printf("%d %d\\n", n)', "2 conversions but 1 argument"),
    ('asc.printf("%d\\n", n, n)', "1 conversion but 2 arguments"),
    ('asc.printf("%d\\n", f)', "needs an integer, got a float32"),
    ('asc.printf("%s\\n", n)', "%s needs a string constant"),
    ('asc.printf("%k\\n", n)', "unsupported conversion '%k"),
    ('asc.printf("%p\\n", n)', "%p is not supported"),
    ('asc.printf(n)', "format string constant"),
    ('asc.printf("%d", xg)', "dump_tensor"),
    ('print(xg)', "dump_tensor"),
    ('print(n, flush=True)', "only sep= and end="),
    ('asc.dump_tensor(n, 1, 2)', "LocalTensor or GlobalTensor"),
    ('asc.dump_tensor(xg, 1, -2)', "negative"),
    ('asc.dump_tensor(xg, 1.5, 2)', "desc must be an integer"),
]


@pytest.mark.parametrize("stmt,words", COMPILE_ERRORS)
def test_compile_errors_name_the_line(tmp_path, stmt, words):
    src = ("import ascendc_py as asc\n\n"
           "@asc.kernel\n"
           "def k(x: asc.GlobalAddress, n: int, f: float):\n"
           "    xg = asc.GlobalTensor()\n"
           "    xg.set_global_buffer(x, n)\n"
           f"    {stmt}\n")
    path = tmp_path / "kmod.py"
    path.write_text(src)
    ns: dict = {}
    exec(compile(src, str(path), "exec"), ns)
    with pytest.raises(asc.KernelError) as info:
        ns["k"][1](np.zeros(8, np.float32), 8, 1.0)
    assert info.value.loc.line == 7, str(info.value)
    assert words in str(info.value), str(info.value)


def test_format_helpers():
    assert parse_format("a%%b%5.1fc") == [("text", "a"), ("text", "%"), ("text", "b"),
                                          ("conv", "5.1", "f"), ("text", "c")]
    assert parse_format("%lld %hu") == [("conv", "", "d"), ("text", " "), ("conv", "", "u")]
    with pytest.raises(FormatError):
        parse_format("50%")
    assert format_value("08.3", "f", "f", "float32", 3.14159) == "0003.142"
    assert format_value("", "x", "i", "int32", -1) == "ffffffffffffffff"
    assert format_value("", "c", "i", "int32", 65) == "A"
