"""The error catalogue (docs/errors.md): one test per error and warning class.

Each test launches the class's minimal kernel from catalogue_kernels.py exactly as the catalogue
shows it and checks the exact class, the kernel file and the line marked ``# <-`` (with the
source line and a caret under the column), the words that say what happened, and the hint. The
other tests check that every class in ascendc_py/compiler/errors.py is catalogued (or is a
family base listed as abstract) and that docs/errors.md is what make_catalogue.py writes now.
"""
from __future__ import annotations

import inspect
import re

import pytest

import catalogue_kernels as ck
import make_catalogue as mc
from ascendc_py.compiler import errors
from kernels_for_tests import assert_still_works

FILE = ck.__file__
FORBIDDEN = ("lark", "llvmlite", "Traceback", "site-packages")

# Words each message must contain (what happened and, with "hint:", how to fix it).
EXPECT = {
    "KernelSyntaxError": ["tensor slices take only a start offset", "t[offset:]"],
    "UnsupportedConstructError": ["list comprehensions are not supported", "hint:", "for"],
    "AssignmentTargetError": ["only plain names and struct fields can be assigned", "hint:",
                              "set_value"],
    "UndefinedNameError": ["'block_lenght' is not defined", "hint:",
                           "did you mean 'block_length'"],
    "MaybeUndefinedError": ["'scale'", "only some paths", "hint:"],
    "UnknownAttributeError": ["'set_valu'"],
    "ArgumentError": ["asc.GlobalTensor() takes no arguments", "set_global_buffer"],
    "DtypeError": ["float32", "float16"],
    "OperandKindError": ["set_global_buffer needs a GlobalAddress", "int32"],
    "ReassignmentError": ["'total' is an integer variable", "float32", "hint:"],
    "ReturnValueError": ["cannot return a value", "hint:"],
    "NotConstantError": ["static_range", "compile-time", "hint:"],
    "StaticAssertionError": ["assertion failed", "TILE must be a multiple of 32"],
    "ConstantRangeError": ["TQue depth must be 1..8, got 9"],
    "RecursiveCallError": ["recursive call", "'k_RecursiveCallError'"],
    "SourceChangedError": ["the source of 'k_SourceChangedError'", "changed since it was "
                           "imported", "hint:", "reload"],
    "InternalCompilerError": ["internal compiler error", "KeyError", "simulated bug"],
    "BlockDimError": ["block_dim", "1..65535", "got 0"],
    "LaunchArgumentError": ["k_LaunchArgumentError", "'n'", "declared int", "1.5"],
    "UnsupportedArrayError": ["k_UnsupportedArrayError", "'x'", "numpy array or torch tensor",
                              "list"],
    "NonContiguousArrayError": ["k_NonContiguousArrayError", "'x'", "not contiguous",
                                "np.ascontiguousarray(x)"],
    "DeviceError": ["k_DeviceError", "'x'", "meta", "CPU"],
    "GMAlignmentError": ["k_GMAlignmentError", "'x'", "element size 4", "hint:"],
    "ReadOnlyArgumentError": ["k_ReadOnlyArgumentError", "argument 'y'", "immutable bytes",
                              "the kernel writes it (data_copy)", "nothing was run", "hint:",
                              "np.array(y)"],
    "RequiresGradArgumentError": ["k_RequiresGradArgumentError", "argument 'y'",
                                  "requires grad (a leaf)", "(set_value)", "nothing was run",
                                  "hint:", "torch.no_grad()"],
    "ReadOnlyWriteError": ["set_value would write global argument 'y'", "passed read-only",
                           "stopped before writing", "(block 0)", "hint:"],
    "GMOutOfBoundsError": ["get_value", "[64, 65)", "'x'", "(block 0)", "hint:"],
    "LocalOutOfRangeError": ["[196480, 196736)", "196608 bytes", "hint:"],
    "MisalignedAddressError": ["4100", "32-byte aligned", "hint:"],
    "BufferCapacityError": ["262144 bytes", "196608", "hint:"],
    "QueueEmptyError": ["deque on an empty queue", "hint:"],
    "NoFreeBufferError": ["alloc_tensor", "1 buffers", "hint:"],
    "QueueFullError": ["full queue", "depth 1", "hint:"],
    "ForeignTensorError": ["free_tensor", "does not belong", "hint:"],
    "UseAfterFreeError": ["adds uses src 'a' after free_tensor at line", "hint:"],
    "HandoverError": ["adds on pipe V uses src 'a', which pipe MTE2 wrote (data_copy at line",
                      "no hand-over", "HardEvent.MTE2_V", "hint:"],
    "DoubleFreeError": ["free_tensor", "already free", "hint:"],
    "DoubleEnqueError": ["enque", "already enqueued", "hint:"],
    "QueueNotInitializedError": ["alloc_tensor", "before pipe.init_buffer", "hint:"],
    "QueueReinitError": ["init_buffer called twice"],
    "BufferCountError": ["1..8", "got 9"],
    "TooManyLiveTensorsError": ["more than 8 tensors", "hint:"],
    "MatmulStateError": ["without the A matrix", "set_tensor_a", "hint:"],
    "EventIdError": ["event id 8", "0..7"],
    "DoubleSetFlagError": ["V_MTE3 id 0", "already set", "hint:"],
    "UnsatisfiedWaitError": ["MTE2_V id 1", "never satisfied", "hint:"],
    "CrossCoreDeadlockError": ["cross_core_wait_flag(flag 3)", "AIV0 of block 0",
                               "never be satisfied", "hang", "hint:"],
    "CrossCoreFlagIdError": ["flag id 11", "0..10", "(block 0, AIC)", "hint:"],
    "CrossCoreCounterError": ["flag 2", "AIV0 of block 0", "more than 16", "hint:"],
    "CrossCoreModeError": ["mode 2", "AIV_ONLY", "no AIC", "MIX_AIC_1_2"],
    "CoreMemoryError": ["duplicate", "UB is not on the cube core (AIC)", "AIC of block 0",
                        "ascend_is_aiv()"],
    "LoopLimitError": ["33554432 iterations", "hung", "ASCENDC_PY_LOOP_BUDGET"],
    "KernelAssertionError": ["assertion failed", "n must be at most 64"],
    "ZeroStepError": ["step is zero"],
    "DivisionByZeroError": ["division by zero"],
    "NegativeCountError": ["duplicate", "negative", "-8"],
    "MaskRangeError": ["mask 100", "1..64", "hint:"],
    "RepeatRangeError": ["repeat_times 300", "0..255", "hint:"],
    "StrideRangeError": ["adds dst repeat stride -8", "0..255", "hint:"],
    "ValueRangeError": ["the LocalTensor offset is 1099511627776", "2147483647", "hint:"],
    "GlobalTensorUnsetError": ["set_value element is a GlobalTensor whose set_global_buffer "
                               "has not run", "hint:"],
    "TensorExtentError": ["duplicate dst 'c' would use elements [0, 1024)", "256 elements",
                          "alloc_tensor at line", "hint:"],
    "DataCopyParamError": ["data_copy", "5000"],
    "CubeParamError": ["mmad", "MmadParams.m = 5000", "0..4095"],
    "DataRaceError": ["data race", "pipe S", "pipe V", "HardEvent.V_S", "hint:"],
    "BlockOverlapError": ["blocks 0 and 1", "'z'", "hint:"],
    "UninitializedReadError": ["adds", "nothing has written", "hint:"],
    "GMOutOfBoundsWarning": ["get_value", "'x'", "lenient", "hint:"],
    "TruncatedCopyWarning": ["28 bytes", "multiple of 32", "hint:"],
    "FlagLeftSetWarning": ["V_MTE3 id 0", "still set", "hint:"],
    "LateSetWarning": ["MTE2_V id 0", "later in program order", "hint:"],
    "TensorExtentWarning": ["duplicate dst 'c' uses elements [0, 128)", "64 elements in UB",
                            "lenient", "hint:"],
}

# Classes whose kernel cannot trigger them yet (features being integrated): strict xfail, so the
# mark must go once they are raised.
PENDING: dict = {}


def marked_line(kernel, marker: str = ck.MARK) -> int | None:
    """The line number in catalogue_kernels.py of the kernel line ending with ``marker``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [first + i for i, text in enumerate(lines) if text.rstrip().endswith(marker)]
    assert len(hits) <= 1, (kernel, marker, hits)
    return hits[0] if hits else None


def check_location(text: str, line: int) -> None:
    """``text`` starts with FILE:line:col:, shows that source line and a caret line whose
    carets start at col."""
    m = re.match(rf"{re.escape(FILE)}:{line}:(\d+): ", text)
    assert m, f"message does not start with {FILE}:{line}:col:\n{text}"
    col = int(m.group(1))
    with open(FILE, encoding="utf-8") as f:
        source = f.read().splitlines()[line - 1].rstrip()
    shown = text.splitlines()
    assert "    " + source in shown, f"source line not shown:\n{text}"
    caret = shown[shown.index("    " + source) + 1]
    assert caret.startswith("    ") and set(caret.strip()) == {"^"}, f"no caret line:\n{text}"
    assert caret.index("^") - 4 == col - 1, f"caret not at column {col}:\n{text}"


def check_words(text: str, words) -> None:
    for w in words:
        assert w.lower() in text.lower(), f"{w!r} not in:\n{text}"
    if "hint:" in words:
        assert re.search(r"^  hint: \S", text, re.M), f"no hint line:\n{text}"
    for bad in FORBIDDEN:
        assert bad not in text, f"{bad!r} leaked into:\n{text}"


def entry_params():
    for e in ck.ENTRIES:
        marks = [pytest.mark.xfail(strict=True, reason=PENDING[e.cls])] if e.cls in PENDING \
            else []
        yield pytest.param(e, id=e.cls, marks=marks)


@pytest.mark.parametrize("entry", list(entry_params()))
def test_catalogue_entry(entry):
    cls = mc.error_class(entry.cls)
    kernel = mc.kernel_of(entry)
    if issubclass(cls, errors.KernelWarning):
        with pytest.warns(cls) as record:
            mc.launch(entry)
        found = [w.message for w in record if type(w.message) is cls]
        assert found, [type(w.message).__name__ for w in record]
        err = found[0]
    else:
        with pytest.raises(cls) as info:
            mc.launch(entry)
        err = info.value
    assert type(err) is cls, f"{type(err).__name__} is not {entry.cls}:\n{err}"
    text = str(err)
    if marked_line(kernel) is not None:  # launch errors are in the call: no kernel line,
        check_location(text, marked_line(kernel))  # unless the call conflicts with one
        assert err.loc.file == FILE and err.loc.line == marked_line(kernel)
    check_words(text, EXPECT[entry.cls])
    if entry.cls == "DataRaceError":      # also names the other access
        assert f"{FILE}:{marked_line(kernel, ck.OTHER)}:" in text, text
    if entry.cls == "BlockOverlapError":  # the other block's write is the same line
        assert f"block 0 at {FILE}:{marked_line(kernel)}:" in text, text


def test_catalogue_covers_every_class():
    """Every error/warning class in errors.py is catalogued, or is a family base (a class
    with subclasses) listed in make_catalogue.ABSTRACT; nothing is both or unknown."""
    classes = mc.all_classes()
    catalogued = [e.cls for e in ck.ENTRIES]
    assert len(catalogued) == len(set(catalogued)), "a class is catalogued twice"
    assert set(catalogued) <= set(classes), set(catalogued) - set(classes)
    assert set(mc.ABSTRACT) <= set(classes), set(mc.ABSTRACT) - set(classes)
    assert not set(catalogued) & set(mc.ABSTRACT)
    missing = set(classes) - set(catalogued) - set(mc.ABSTRACT)
    assert not missing, f"add a catalogue entry (catalogue_kernels.py) for: {sorted(missing)}"
    for name in mc.ABSTRACT:
        assert classes[name].__subclasses__(), f"{name} has no subclasses: catalogue it"
    assert len(catalogued) >= 40


def test_catalogue_kernels_are_well_formed():
    """k_<ClassName> with a docstring, one ``# <-`` line (launch errors, whose mistake is in
    the call, only when the kernel line the call conflicts with is named), an expectation, and
    only PENDING classes marked pending."""
    assert set(EXPECT) == {e.cls for e in ck.ENTRIES}
    assert set(PENDING) <= set(EXPECT)
    for e in ck.ENTRIES:
        kernel = mc.kernel_of(e)
        assert kernel.fn.__name__ == f"k_{e.cls}"
        assert (kernel.fn.__doc__ or "").strip(), f"k_{e.cls} needs a docstring"
        assert f"k_{e.cls}[" in e.launch, e.launch
        has_mark = marked_line(kernel) is not None
        assert has_mark or mc.stage_of(e) == "launch", e.cls
    kernels = {n for n in vars(ck) if n.startswith("k_")}
    assert kernels == {f"k_{e.cls}" for e in ck.ENTRIES}, "a kernel without an entry"


def test_docs_errors_md_is_up_to_date():
    with open(mc.DOC, encoding="utf-8") as f:
        current = f.read()
    assert current == mc.render(), \
        "docs/errors.md is out of date: run python tests/errors/make_catalogue.py"


def test_process_still_works_after_the_catalogue():
    for e in ck.ENTRIES[-6:]:
        try:
            mc.outcome(e)
        except Exception:  # noqa: BLE001 - only the survival matters here
            pass
    assert_still_works()
