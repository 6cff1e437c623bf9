"""The error catalogue's minimal kernels: one per error or warning class, named k_<ClassName>.

Each kernel's docstring says what the mistake is, and the line the error points at ends with
``# <-``. ``ENTRIES`` says how each kernel is launched: the launch text is shown in
docs/errors.md and evaluated (in this module's namespace) by tests/errors/test_catalogue.py and
tests/errors/make_catalogue.py, so the catalogue shows exactly what the tests run.
"""
from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

import numpy as np

import ascendc_py as asc

try:  # only DeviceError's and RequiresGradArgumentError's launches need torch
    import torch
except ImportError:  # pragma: no cover
    torch = None

MARK = "# <-"                 # ends the line an error points at
OTHER = "# (the other access)"  # ends the earlier access a DataRaceError also names


@dataclass(frozen=True)
class Entry:
    cls: str                 # the error/warning class name in ascendc_py.compiler.errors
    launch: str              # a Python expression launching k_<cls> that raises/warns
    setup: str = ""          # the name of a context manager in this module to run it under
    note: str = ""           # an extra sentence for the catalogue


# ============================================================================ compile-time errors
@asc.kernel
def k_KernelSyntaxError(x: asc.GlobalAddress):
    """A tensor slice with an end: kernels slice tensors only as ``t[offset:]``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    head = xg[0:32]  # <-


@asc.kernel
def k_UnsupportedConstructError(x: asc.GlobalAddress):
    """A list comprehension: kernels have no lists; write a for loop."""
    squares = [i * i for i in range(8)]  # <-


@asc.kernel
def k_AssignmentTargetError(x: asc.GlobalAddress):
    """Item assignment on a tensor: assign names and struct fields; use ``t.set_value(i, v)``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    xg[0] = 1.0  # <-


@asc.kernel
def k_UndefinedNameError(x: asc.GlobalAddress, block_length: int):
    """A misspelled parameter name."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, block_lenght)  # <-


@asc.kernel
def k_MaybeUndefinedError(x: asc.GlobalAddress, n: int):
    """A variable assigned only inside an ``if`` and used after it."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    if n > 0:
        scale = 2.0
    xg.set_value(0, scale)  # <-


@asc.kernel
def k_UnknownAttributeError(x: asc.GlobalAddress):
    """A misspelled method name (``set_valu`` for ``set_value``)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    xg.set_valu(0, 1.0)  # <-


@asc.kernel
def k_ArgumentError(x: asc.GlobalAddress):
    """Passing the address to the GlobalTensor constructor instead of set_global_buffer."""
    xg = asc.GlobalTensor(x)  # <-


@asc.kernel
def k_DtypeError(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Re-pointing a float32 GlobalTensor at a float16 argument."""
    g = asc.GlobalTensor()
    g.set_global_buffer(x, 64)
    g.set_global_buffer(y, 64)  # <-


@asc.kernel
def k_OperandKindError(x: asc.GlobalAddress, n: int):
    """Passing an int where a GlobalAddress kernel argument is needed."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(n, 64)  # <-


@asc.kernel
def k_ReassignmentError(x: asc.GlobalAddress, n: int):
    """An int variable that a later assignment turns into a float."""
    total = 0
    for i in range(n):
        total = total + 0.5  # <-


@asc.kernel
def k_ReturnValueError(x: asc.GlobalAddress):
    """A kernel entry point returning a value (results go to GM arguments)."""
    return 1  # <-


@asc.kernel
def k_NotConstantError(x: asc.GlobalAddress, n: int):
    """static_range over a run-time bound: unrolling needs a compile-time count."""
    for i in asc.static_range(n):  # <-
        pass


@asc.kernel
def k_StaticAssertionError(x: asc.GlobalAddress, TILE: asc.ConstExpr[int]):
    """An ``assert`` on compile-time values that fails for this specialisation."""
    assert TILE % 32 == 0, "TILE must be a multiple of 32"  # <-


@asc.kernel
def k_ConstantRangeError(x: asc.GlobalAddress):
    """A TQue deeper than the hardware's 8 buffers."""
    q = asc.TQue(asc.TPosition.VECIN, 9)  # <-


@asc.kernel
def k_RecursiveCallError(x: asc.GlobalAddress, n: int):
    """A kernel function calling itself: calls are inlined, so recursion cannot compile."""
    if n > 0:
        k_RecursiveCallError(x, n - 1)  # <-


@asc.kernel  # <-
def k_SourceChangedError(x: asc.GlobalAddress):
    """This file was edited after the module was imported (the catalogue gives the kernel the
    code of an earlier version of its text, see ``edited_after_import``): ascendc_py would
    compile the new text while Python runs the old code, so it refuses."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    xg.set_value(0, 2.0)


@contextlib.contextmanager
def edited_after_import():
    """Run the kernel with the code of its text as it was before an edit (3.0 for 2.0)."""
    fn = k_SourceChangedError.fn
    lines, first = inspect.getsourcelines(fn)
    earlier = "\n" * (first - 1) + "".join(lines).replace("2.0)", "3.0)")
    namespace = dict(globals())
    exec(compile(earlier, fn.__code__.co_filename, "exec"), namespace)  # noqa: S102
    saved = fn.__code__
    fn.__code__ = namespace["k_SourceChangedError"].fn.__code__
    try:
        yield
    finally:
        fn.__code__ = saved


@asc.kernel
def k_InternalCompilerError(x: asc.GlobalAddress):
    """A correct kernel; the catalogue simulates a bug in the compiler's handler of
    get_block_num (see ``simulated_compiler_bug``)."""
    n = asc.get_block_num()  # <-


@contextlib.contextmanager
def simulated_compiler_bug():
    """The compiler's handler of asc.get_block_num raises KeyError inside this context, as a
    compiler bug would (no correct use of the DSL can trigger an InternalCompilerError)."""
    from ascendc_py.compiler.sema import builtins

    def broken(an, args, kwargs, loc):
        raise KeyError("simulated bug")

    saved = builtins.FUNCTIONS["get_block_num"]
    builtins.FUNCTIONS["get_block_num"] = broken
    try:
        yield
    finally:
        builtins.FUNCTIONS["get_block_num"] = saved


# ============================================================================ launch errors
@asc.kernel
def k_BlockDimError(x: asc.GlobalAddress):
    """A correct kernel launched on 0 blocks."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)


@asc.kernel
def k_LaunchArgumentError(x: asc.GlobalAddress, n: int):
    """A correct kernel launched with a float for its int parameter."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)


@asc.kernel
def k_UnsupportedArrayError(x: asc.GlobalAddress):
    """A correct kernel launched with a Python list instead of an array."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)


@asc.kernel
def k_NonContiguousArrayError(x: asc.GlobalAddress):
    """A correct kernel launched with a strided numpy view."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)


@asc.kernel
def k_DeviceError(x: asc.GlobalAddress):
    """A correct kernel launched with a torch tensor that is not on the CPU."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)


@asc.kernel
def k_GMAlignmentError(x: asc.GlobalAddress):
    """A correct kernel launched with a float32 view that starts 2 bytes into a buffer."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)


# ============================================================================ run-time faults
@asc.kernel
def k_GMOutOfBoundsError(x: asc.GlobalAddress):
    """Reading element 64 of a 64-element argument (one past the end)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    v = xg.get_value(64)  # <-


@asc.kernel
def k_LocalOutOfRangeError(x: asc.GlobalAddress):
    """A LocalTensor placed so that it runs past the end of the 192 KB Unified Buffer."""
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 192 * 1024 - 128, 64)  # <-


@asc.kernel
def k_GlobalTensorUnsetError(x: asc.GlobalAddress, n: int):
    """set_global_buffer only on a branch this launch does not take."""
    xg = asc.GlobalTensor()
    if n > 0:
        xg.set_global_buffer(x, 64)
    xg.set_value(0, 1.0)  # <-


@asc.kernel
def k_TensorExtentError(x: asc.GlobalAddress):
    """The classic count-in-bytes mistake: ``TILE * 4`` elements into a TILE-element tensor
    (the bytes after it are the next buffer's)."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(q, 2, 256 * 4)
    c = q.alloc_tensor(asc.float32)
    asc.duplicate(c, 1.0, 256 * 4)  # <-
    q.free_tensor(c)


@asc.kernel
def k_MisalignedAddressError(x: asc.GlobalAddress):
    """A LocalTensor at a UB byte address that is not a multiple of 32."""
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 4100, 8)  # <-


@asc.kernel
def k_BufferCapacityError(x: asc.GlobalAddress, nbytes: int):
    """Reserving more Unified Buffer than there is (256 KB of 192 KB)."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, nbytes)  # <-


@asc.kernel
def k_QueueEmptyError(x: asc.GlobalAddress):
    """deque on a queue nothing was enqueued on (a hang on hardware)."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.deque(asc.float32)  # <-


@asc.kernel
def k_NoFreeBufferError(x: asc.GlobalAddress):
    """A second alloc_tensor on a one-buffer queue without free_tensor (a hang on hardware)."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.alloc_tensor(asc.float32)
    b = q.alloc_tensor(asc.float32)  # <-


@asc.kernel
def k_QueueFullError(x: asc.GlobalAddress):
    """Two enques on a TQue of depth 1 with no deque between them."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 2, 256)
    a = q.alloc_tensor(asc.float32)
    b = q.alloc_tensor(asc.float32)
    q.enque(a)
    q.enque(b)  # <-


@asc.kernel
def k_ForeignTensorError(x: asc.GlobalAddress):
    """free_tensor on a queue other than the one that allocated the tensor."""
    pipe = asc.TPipe()
    qa = asc.TQue(asc.TPosition.VECIN, 1)
    qb = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qa, 1, 256)
    pipe.init_buffer(qb, 1, 256)
    a = qa.alloc_tensor(asc.float32)
    qb.free_tensor(a)  # <-


@asc.kernel
def k_UseAfterFreeError(x: asc.GlobalAddress):
    """Computing on a tensor after free_tensor returned its buffer (any later alloc_tensor may
    hand the buffer out again)."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECCALC, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.alloc_tensor(asc.float32)
    asc.duplicate(a, 1.0, 64)
    q.free_tensor(a)
    asc.adds(a, a, 1.0, 64)  # <-


@asc.kernel
def k_HandoverError(x: asc.GlobalAddress):
    """A forgotten enque/deque: the vector unit reads a tile the copy engine (MTE2) may still
    be writing."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, 64)
    asc.adds(a, a, 1.0, 64)  # <-
    q.free_tensor(a)


@asc.kernel
def k_DoubleFreeError(x: asc.GlobalAddress):
    """free_tensor twice on the same tensor."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.alloc_tensor(asc.float32)
    q.free_tensor(a)
    q.free_tensor(a)  # <-


@asc.kernel
def k_DoubleEnqueError(x: asc.GlobalAddress):
    """enque twice of the same tensor."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(q, 2, 256)
    a = q.alloc_tensor(asc.float32)
    q.enque(a)
    q.enque(a)  # <-


@asc.kernel
def k_QueueNotInitializedError(x: asc.GlobalAddress):
    """alloc_tensor on a queue that pipe.init_buffer never gave memory."""
    q = asc.TQue(asc.TPosition.VECIN, 1)
    a = q.alloc_tensor(asc.float32)  # <-


@asc.kernel
def k_QueueReinitError(x: asc.GlobalAddress):
    """pipe.init_buffer twice for one queue."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    pipe.init_buffer(q, 1, 256)  # <-


@asc.kernel
def k_BufferCountError(x: asc.GlobalAddress, num: int):
    """A run-time buffer count above 8 for init_buffer."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, num, 256)  # <-


@asc.kernel
def k_TooManyLiveTensorsError(x: asc.GlobalAddress):
    """A ninth tensor allocated at once in one TPosition (VECIN)."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    q2 = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 8, 32)
    pipe.init_buffer(q2, 1, 32)
    for i in range(8):
        t = q.alloc_tensor(asc.float32)
    u = q2.alloc_tensor(asc.float32)  # <-


@asc.kernel
def k_EventIdError(x: asc.GlobalAddress, event_id: int):
    """A run-time event id outside 0..7."""
    asc.set_flag(asc.HardEvent.MTE2_V, event_id)  # <-


@asc.kernel
def k_DoubleSetFlagError(x: asc.GlobalAddress):
    """set_flag twice on one flag with no wait_flag between (the first set is lost)."""
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)  # <-


@asc.kernel
def k_UnsatisfiedWaitError(x: asc.GlobalAddress):
    """wait_flag on a flag no set_flag ever sets (a hang on hardware)."""
    asc.wait_flag(asc.HardEvent.MTE2_V, 1)  # <-


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_CrossCoreDeadlockError(x: asc.GlobalAddress):
    """The AIVs of a mix kernel wait for a cross-core flag the AIC never sets (a hang on
    hardware)."""
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(3)  # <-


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_CrossCoreFlagIdError(x: asc.GlobalAddress, flag: int):
    """A cross-core flag id computed at run time is outside 0..10."""
    if asc.ascend_is_aic():
        asc.cross_core_set_flag(flag, 2, asc.PipeID.PIPE_S)  # <-


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_CrossCoreCounterError(x: asc.GlobalAddress):
    """The AIC sets a cross-core flag 17 times while the AIVs take none of them."""
    if asc.ascend_is_aic():
        for i in range(17):
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_S)  # <-


@asc.kernel
def k_CrossCoreModeError(x: asc.GlobalAddress):
    """Mode 2 (AIC <-> AIVs of one AI Core) in a vector kernel, which has no AIC."""
    asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)  # <-


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_CoreMemoryError(x: asc.GlobalAddress):
    """Vector code in a mix kernel not guarded by ``asc.ascend_is_aiv()``: the AIC has no UB."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = buf.get(asc.float32)
    asc.duplicate(t, 1.0, 64)  # <-


@asc.kernel
def k_LoopLimitError(x: asc.GlobalAddress, n: int):
    """A while loop whose condition never changes (a hang on hardware)."""
    k = 0
    while n > 0:  # <-
        k += 1


@asc.kernel
def k_KernelAssertionError(x: asc.GlobalAddress, n: int):
    """A run-time ``assert`` that fails for the value passed."""
    assert n <= 64, "n must be at most 64"  # <-


@asc.kernel
def k_ZeroStepError(x: asc.GlobalAddress, step: int):
    """range() with a run-time step of zero."""
    for i in range(0, 64, step):  # <-
        pass


@asc.kernel
def k_DivisionByZeroError(x: asc.GlobalAddress, tile: int):
    """Integer division by a run-time zero."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    xg.set_value(0, 64 // tile)  # <-


@asc.kernel
def k_NegativeCountError(x: asc.GlobalAddress, count: int):
    """A negative run-time element count for a vector op."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.duplicate(a, 0.0, count)  # <-


@asc.kernel
def k_MaskRangeError(x: asc.GlobalAddress, mask: int):
    """A normal-mode mask of 100 lanes for float32, whose repeats have 64 lanes."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.duplicate(a, 0.0, mask, 1, 1, 8)  # <-


@asc.kernel
def k_StrideRangeError(x: asc.GlobalAddress, stride: int):
    """A negative repeat stride (the hardware field is an unsigned byte)."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 1024)
    asc.adds(a, a, 1.0, 64, 2, asc.UnaryRepeatParams(1, 1, stride, 8))  # <-


@asc.kernel
def k_ValueRangeError(x: asc.GlobalAddress, offset: int):
    """A run-time LocalTensor offset that does not fit in 32 bits (never wrapped)."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 1024)
    b = a[offset:]  # <-
    asc.adds(b, b, 1.0, 64)


@asc.kernel
def k_RepeatRangeError(x: asc.GlobalAddress, repeat: int):
    """repeat_times above the hardware's 255."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.duplicate(a, 0.0, 64, repeat, 1, 8)  # <-


@asc.kernel
def k_DataCopyParamError(x: asc.GlobalAddress, blocks: int):
    """A DataCopyParams block_count above its 12-bit field (4095)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, asc.DataCopyParams(blocks, 1, 0, 0))  # <-


@asc.kernel
def k_CubeParamError(x: asc.GlobalAddress, m: int):
    """An mmad whose m comes from a runtime value above the cube's 4095."""
    a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.mmad(c, a, b, asc.MmadParams(m, 16, 16))  # <-


@asc.kernel
def k_MatmulStateError(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                       tiling: asc.adv.TCubeTiling, use_a: int):
    """A Matmul whose set_tensor_a runs only on one path: iterate_all without the A matrix."""
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(b)
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    if use_a:
        mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.iterate_all(cg)  # <-


def matmul_tiling_16():
    """A one-core tiling of a 16 x 16 x 16 matmul (for k_MatmulStateError)."""
    from ascendc_py import host
    t = host.MultiCoreMatmulTiling()
    t.set_dim(1)
    t.set_shape(16, 16, 16)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


# ============================================================================ sanitize mode
@asc.kernel
def k_DataRaceError(x: asc.GlobalAddress):
    """The scalar unit reads a result the vector unit may still be writing: no
    set_flag/wait_flag (HardEvent.V_S) between the duplicate and the get_value."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.duplicate(a, 1.0, 64)  # (the other access)
    v = a.get_value(0)  # <-


@asc.kernel
def k_BlockOverlapError(z: asc.GlobalAddress):
    """Every block writes element 0: the blocks' output slices are not offset by the block
    index."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    zg.set_value(0, 1.0)  # <-


@asc.kernel
def k_UninitializedReadError(x: asc.GlobalAddress):
    """A vector op reading a LocalTensor nothing has written."""
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 64)
    asc.adds(b, a, 1.0, 64)  # <-


# ============================================================================ warnings
@asc.kernel
def k_GMOutOfBoundsWarning(x: asc.GlobalAddress):
    """Reading one element past the end of an argument in lenient mode."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    v = xg.get_value(64)  # <-


@asc.kernel
def k_TruncatedCopyWarning(x: asc.GlobalAddress):
    """data_copy of 7 float32 (28 bytes): the hardware copies whole 32-byte blocks only."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, 7)  # <-


@asc.kernel
def k_FlagLeftSetWarning(x: asc.GlobalAddress):
    """A set_flag with no matching wait_flag before the kernel ends."""
    asc.set_flag(asc.HardEvent.V_MTE3, 0)  # <-


@asc.kernel
def k_LateSetWarning(x: asc.GlobalAddress):
    """A wait_flag whose set_flag comes later in program order."""
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)  # <-
    asc.set_flag(asc.HardEvent.MTE2_V, 0)


@asc.kernel
def k_TensorExtentWarning(x: asc.GlobalAddress):
    """Lenient mode: a full 128-lane float16 mask on a 64-element tile (pyasc's generalization
    tests do this); the device writes the next 64 elements of UB, whoever owns them."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, 64 * 2)
    c = q.alloc_tensor(asc.float16)
    asc.duplicate(c, 1.0, mask=128, repeat_times=1, dst_block_stride=1,  # <-
                  dst_repeat_stride=8)
    q.free_tensor(c)


# ============================================================================ arguments a kernel writes
@asc.kernel
def k_ReadOnlyArgumentError(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Copying into an argument passed read-only (a numpy array over a bytes object)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, a, 64)  # <-


@asc.kernel
def k_RequiresGradArgumentError(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Writing a torch parameter (a leaf that requires grad) outside torch.no_grad()."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 64)
    yg.set_value(0, xg.get_value(0))  # <-


@asc.kernel
def k_ReadOnlyWriteError(x: asc.GlobalAddress, y: asc.GlobalAddress, which: int):
    """A GlobalTensor pointed at a run-time choice of argument, which is the read-only one."""
    dst = asc.GlobalTensor()
    if which == 0:
        dst.set_global_buffer(x, 64)
    else:
        dst.set_global_buffer(y, 64)
    dst.set_value(0, 1.0)  # <-


X = "np.zeros(64, np.float32)"
ENTRIES = [
    Entry("KernelSyntaxError", f"k_KernelSyntaxError[1]({X})"),
    Entry("UnsupportedConstructError", f"k_UnsupportedConstructError[1]({X})"),
    Entry("AssignmentTargetError", f"k_AssignmentTargetError[1]({X})"),
    Entry("UndefinedNameError", f"k_UndefinedNameError[1]({X}, 64)"),
    Entry("MaybeUndefinedError", f"k_MaybeUndefinedError[1]({X}, 1)"),
    Entry("UnknownAttributeError", f"k_UnknownAttributeError[1]({X})"),
    Entry("ArgumentError", f"k_ArgumentError[1]({X})"),
    Entry("DtypeError", f"k_DtypeError[1]({X}, np.zeros(64, np.float16))"),
    Entry("OperandKindError", f"k_OperandKindError[1]({X}, 64)"),
    Entry("ReassignmentError", f"k_ReassignmentError[1]({X}, 4)"),
    Entry("ReturnValueError", f"k_ReturnValueError[1]({X})"),
    Entry("NotConstantError", f"k_NotConstantError[1]({X}, 4)"),
    Entry("StaticAssertionError", f"k_StaticAssertionError[1]({X}, TILE=100)"),
    Entry("ConstantRangeError", f"k_ConstantRangeError[1]({X})"),
    Entry("RecursiveCallError", f"k_RecursiveCallError[1]({X}, 3)"),
    Entry("SourceChangedError", f"k_SourceChangedError[1]({X})", setup="edited_after_import"),
    Entry("InternalCompilerError", f"k_InternalCompilerError[1]({X})",
          setup="simulated_compiler_bug"),
    Entry("BlockDimError", f"k_BlockDimError[0]({X})"),
    Entry("LaunchArgumentError", f"k_LaunchArgumentError[1]({X}, 1.5)"),
    Entry("UnsupportedArrayError", "k_UnsupportedArrayError[1]([0.0] * 64)"),
    Entry("NonContiguousArrayError",
          "k_NonContiguousArrayError[1](np.zeros(128, np.float32)[::2])"),
    Entry("DeviceError", 'k_DeviceError[1](torch.zeros(64, device="meta"))'),
    Entry("GMAlignmentError",
          "k_GMAlignmentError[1](np.zeros(65, np.float32).view(np.uint8)[2:258]"
          ".view(np.float32))",
          note="The address in the message varies from run to run; it is shown as `0x…`."),
    Entry("ReadOnlyArgumentError",
          f"k_ReadOnlyArgumentError[1]({X}, np.frombuffer(bytes(256), np.float32))"),
    Entry("RequiresGradArgumentError",
          f"k_RequiresGradArgumentError[1]({X}, torch.zeros(64, requires_grad=True))"),
    Entry("GMOutOfBoundsError", f"k_GMOutOfBoundsError[1]({X})"),
    Entry("LocalOutOfRangeError", f"k_LocalOutOfRangeError[1]({X})"),
    Entry("TensorExtentError", f"k_TensorExtentError[1]({X})"),
    Entry("GlobalTensorUnsetError", f"k_GlobalTensorUnsetError[1]({X}, 0)"),
    Entry("MisalignedAddressError", f"k_MisalignedAddressError[1]({X})"),
    Entry("BufferCapacityError", f"k_BufferCapacityError[1]({X}, 256 * 1024)"),
    Entry("QueueEmptyError", f"k_QueueEmptyError[1]({X})"),
    Entry("NoFreeBufferError", f"k_NoFreeBufferError[1]({X})"),
    Entry("QueueFullError", f"k_QueueFullError[1]({X})"),
    Entry("ForeignTensorError", f"k_ForeignTensorError[1]({X})"),
    Entry("UseAfterFreeError", f"k_UseAfterFreeError[1]({X})"),
    Entry("DoubleFreeError", f"k_DoubleFreeError[1]({X})"),
    Entry("HandoverError", f"k_HandoverError[1]({X})"),
    Entry("DoubleEnqueError", f"k_DoubleEnqueError[1]({X})"),
    Entry("QueueNotInitializedError", f"k_QueueNotInitializedError[1]({X})"),
    Entry("QueueReinitError", f"k_QueueReinitError[1]({X})"),
    Entry("BufferCountError", f"k_BufferCountError[1]({X}, 9)"),
    Entry("TooManyLiveTensorsError", f"k_TooManyLiveTensorsError[1]({X})"),
    Entry("EventIdError", f"k_EventIdError[1]({X}, 8)"),
    Entry("DoubleSetFlagError", f"k_DoubleSetFlagError[1]({X})"),
    Entry("UnsatisfiedWaitError", f"k_UnsatisfiedWaitError[1]({X})"),
    Entry("CrossCoreDeadlockError", f"k_CrossCoreDeadlockError[1]({X})"),
    Entry("CrossCoreFlagIdError", f"k_CrossCoreFlagIdError[1]({X}, 11)"),
    Entry("CrossCoreCounterError", f"k_CrossCoreCounterError[1]({X})"),
    Entry("CrossCoreModeError", f"k_CrossCoreModeError[1]({X})"),
    Entry("CoreMemoryError", f"k_CoreMemoryError[1]({X})"),
    Entry("LoopLimitError", f"k_LoopLimitError[1]({X}, 1)",
          note="A block's loops may run 2**25 iterations in all (ASCENDC_PY_LOOP_BUDGET "
               "raises it); then the simulator stops the kernel as hung, within seconds."),
    Entry("KernelAssertionError", f"k_KernelAssertionError[1]({X}, 100)"),
    Entry("ZeroStepError", f"k_ZeroStepError[1]({X}, 0)"),
    Entry("DivisionByZeroError", f"k_DivisionByZeroError[1]({X}, 0)"),
    Entry("NegativeCountError", f"k_NegativeCountError[1]({X}, -8)"),
    Entry("MaskRangeError", f"k_MaskRangeError[1]({X}, 100)"),
    Entry("RepeatRangeError", f"k_RepeatRangeError[1]({X}, 300)"),
    Entry("StrideRangeError", f"k_StrideRangeError[1]({X}, -8)"),
    Entry("ReadOnlyWriteError",
          f"k_ReadOnlyWriteError[1]({X}, np.frombuffer(bytes(256), np.float32), 1)"),
    Entry("ValueRangeError", f"k_ValueRangeError[1]({X}, 2 ** 40)"),
    Entry("DataCopyParamError", f"k_DataCopyParamError[1]({X}, 5000)"),
    Entry("CubeParamError", f"k_CubeParamError[1]({X}, 5000)"),
    Entry("MatmulStateError", "k_MatmulStateError[1](np.zeros((16, 16), np.float16), "
          "np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32), matmul_tiling_16(), "
          "0)"),
    Entry("DataRaceError", f"k_DataRaceError[1]({X}, sanitize=True)"),
    Entry("BlockOverlapError", f"k_BlockOverlapError[2]({X}, sanitize=True)"),
    Entry("UninitializedReadError", f"k_UninitializedReadError[1]({X}, sanitize=True)"),
    Entry("GMOutOfBoundsWarning", f"k_GMOutOfBoundsWarning[1]({X}, lenient=True)"),
    Entry("TruncatedCopyWarning", f"k_TruncatedCopyWarning[1]({X})"),
    Entry("FlagLeftSetWarning", f"k_FlagLeftSetWarning[1]({X})"),
    Entry("LateSetWarning", f"k_LateSetWarning[1]({X}, sanitize=True)"),
    Entry("TensorExtentWarning", f"k_TensorExtentWarning[1]({X}, lenient=True)"),
]
