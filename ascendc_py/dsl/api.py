"""The names a kernel uses: builtin functions and the kernel-language classes.

Inside an ``@asc.kernel`` function these objects are never executed: the compiler resolves them
by identity (each carries ``asc_name``) and lowers the call. Called from host Python they raise
a clear error, except where a host meaning exists (dtypes, enums, ``ceildiv``).
"""
from __future__ import annotations

from typing import Any

from ..compiler.ops import REGISTRY


class _Doc:
    """``__doc__`` of Builtin: the class's text on the class, the generated one (made when
    first read, so importing the package describes nothing) on a builtin."""

    def __init__(self, class_doc: str):
        self.class_doc = class_doc

    def __get__(self, obj, cls=None) -> str:
        return self.class_doc if obj is None else obj._described()[1]


class Builtin:
    __doc__ = _Doc("""A DSL function usable only inside kernels. Its signature and docstring
    (``help``, Shift-Tab) come from the op registry: the forms, the dtypes, the pipe and an
    example (``dsl/builtin_doc.py``).""")

    def __init__(self, asc_name: str, doc: str = ""):
        self.asc_name = asc_name
        self.__name__ = asc_name
        self.__qualname__ = asc_name
        self.__module__ = "ascendc_py"
        self._description = doc

    @property
    def __signature__(self):
        """The parameters (``inspect.signature``): the op's first form."""
        return self._described()[0]

    def _described(self):
        described = self.__dict__.get("_described_cache")
        if described is None:
            from .builtin_doc import describe
            described = self.__dict__["_described_cache"] = describe(self.asc_name,
                                                                     self._description)
        return described

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"asc.{self.asc_name}() can only be called inside an @asc.kernel "
                           f"function")

    def __repr__(self) -> str:
        return f"<asc builtin {self.asc_name}>"


class _KernelClass:
    """Base of kernel-language classes; instances only exist inside compiled kernels."""

    asc_name = ""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"asc.{type(self).__name__} can only be created inside an "
                           f"@asc.kernel function")


class GlobalAddress(_KernelClass):
    """Annotation for a kernel argument that is a global-memory buffer (numpy / torch)."""

    asc_name = "GlobalAddress"


class GlobalTensor(_KernelClass):
    """A view of global memory: ``set_global_buffer(addr[, size])``, ``t[off:]``,
    ``get_value(i)``, ``set_value(i, v)``."""

    asc_name = "GlobalTensor"


class LocalTensor(_KernelClass):
    """A tensor in a core-local memory; ``LocalTensor(dtype, pos, addr, tile_size)`` places one
    at a byte address; queues and buffers hand them out too."""

    asc_name = "LocalTensor"


class LocalTensorAuto(LocalTensor):
    """``LocalTensorAuto(dtype, shape)``: a UB tensor whose buffer and synchronisation the
    compiler manages (pyasc's): no queue, no set_flag/wait_flag; the kernel compiles with
    automatic synchronisation (README "Automatic synchronisation")."""

    asc_name = "LocalTensorAuto"


class TPipe(_KernelClass):
    """Owner of local-memory allocation: ``init_buffer(que, num, len)``, ``init_buffer(buf, len)``;
    ``destroy()`` / ``reset()`` release every buffer (init_buffer may then be called again),
    ``init()`` re-initialises after ``destroy()``; ``asc.get_tpipe_ptr()`` returns it."""

    asc_name = "TPipe"


class TQue(_KernelClass):
    """``TQue(position, depth)``: ``alloc_tensor``, ``enque``, ``deque``, ``free_tensor``,
    and the queries ``get_tensor_count_in_que``, ``has_tensor_in_que``, ``has_idle_buffer``,
    ``vacant_in_que``."""

    asc_name = "TQue"


class TBuf(_KernelClass):
    """``TBuf(position)``: scratch local memory, ``get(dtype[, len])``; ``alloc_tensor(dtype)``
    (the whole buffer, as ``get``) and ``free_tensor(t)`` (no effect), as pyasc's TBuf inherits
    them."""

    asc_name = "TBuf"


class _ConstExprAnnotation:
    def __init__(self, inner: Any):
        self.inner = inner

    def __repr__(self) -> str:
        return f"ConstExpr[{getattr(self.inner, '__name__', self.inner)}]"


class ConstExpr:
    """``ConstExpr[int]`` marks a compile-time kernel parameter (part of the specialisation)."""

    def __class_getitem__(cls, inner):
        return _ConstExprAnnotation(inner)


def is_constexpr_annotation(annotation: Any) -> bool:
    if isinstance(annotation, _ConstExprAnnotation) or annotation is ConstExpr:
        return True
    return isinstance(annotation, str) and "ConstExpr" in annotation


def is_global_address_annotation(annotation: Any) -> bool:
    if annotation is GlobalAddress:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "GlobalAddress"


def ceildiv(a: int, b: int) -> int:
    """Ceiling division (also usable inside kernels)."""
    return -(-a // b)


ceildiv.asc_name = "ceildiv"  # type: ignore[attr-defined]

_SYSTEM_BUILTINS = {
    "get_block_idx": "Index of this block, 0 <= idx < get_block_num(); on an AIV of a mix "
                     "kernel: block * get_sub_block_num() + get_sub_block_idx().",
    "get_block_num": "Number of blocks of the launch (block_dim; AI Cores in mix kernels).",
    "get_sub_block_idx": "Index of this vector core within its AI Core (0 for vector kernels).",
    "get_sub_block_num": "Vector cores per AI Core in this launch (2 in mix kernels, else 1).",
    "get_task_ratio": "Sub-cores of this one's type per AI Core (2 on an AIV of a 1:2 mix "
                      "kernel, else 1).",
    "ascend_is_aic": "True when this code runs on the cube core (AIC) of its AI Core.",
    "ascend_is_aiv": "True when this code runs on a vector core (AIV).",
    "get_system_cycle": "The simulated cycle counter of this core.",
    "get_tpipe_ptr": "get_tpipe_ptr(): the kernel's TPipe (Ascend C's GetTPipePtr); an error "
                     "before asc.TPipe() is made",
    "set_flag": "set_flag(HardEvent, event_id)",
    "wait_flag": "wait_flag(HardEvent, event_id)",
    "pipe_barrier": "pipe_barrier(PipeID)",
    "cross_core_set_flag": "cross_core_set_flag(flag_id, mode_id, pipe): signal another sub-core "
                           "(flag 0..10; mode 0 all cores of this type, 1 the AIV pair, 2 AIC "
                           "<-> AIVs of one AI Core)",
    "cross_core_wait_flag": "cross_core_wait_flag(flag_id[, mode_id, pipe]): wait until this "
                            "sub-core's counter of the flag is non-zero, then take one",
    "sync_all": "sync_all(is_aiv_only=True): barrier of every vector core of the launch (False: "
                "of every sub-core)",
    "static_range": "range unrolled at compile time (bounds must be compile-time values)",
    "static_assert": "static_assert(cond[, msg]): checked at compile time",
    "number": "number(value, dtype): the scalar value as dtype (pyasc's typed constant: a "
              "constant is converted at compile time as a store would, a run-time value cast)",
    "inline": "inline(code, args=None, before_function=False): pyasc's verbatim C++ insertion; "
              "the simulator cannot run C++ text, so a kernel that uses it is refused at the "
              "call (write the code with asc builtins, or load a C++ kernel with asc.cpp)",
    "printf": "printf(fmt, *args): C-style formatted output, printed after the launch in "
              "block order (and on report.output)",
    "dump_tensor": "dump_tensor(tensor, desc, dump_size): print a tensor's first dump_size "
                   "elements after the launch, like Ascend C's DumpTensor",
    "data_copy_pad": "data_copy_pad(dst, src, DataCopyExtParams(...)[, DataCopyPadExtParams("
                     "...)]): unaligned GM<->UB copy (block_len in bytes)",
    "DataCopyParams": "DataCopyParams(block_count=1, block_len=0, src_stride=0, dst_stride=0): "
                      "bursts for data_copy; lengths and gaps in 32-byte blocks",
    "DataCopyExtParams": "DataCopyExtParams(block_count=1, block_len=0, src_stride=0, "
                         "dst_stride=0, rsv=0): bursts for data_copy_pad; block_len in bytes, "
                         "GM-side gap in bytes, UB-side gap in 32-byte blocks",
    "DataCopyPadExtParams": "DataCopyPadExtParams([dtype,] is_pad=False, left_padding=0, "
                            "right_padding=0, padding_value=0): GM->UB padding of each burst",
    "DataCopyPadParams": "DataCopyPadParams(is_pad=False, left_padding=0, right_padding=0, "
                         "padding_value=0): padding for the DataCopyParams overload of "
                         "data_copy_pad",
    "set_vector_mask": "set_vector_mask(length | mask_high, mask_low, dtype=, mode=)",
    "reset_mask": "reset_mask(): every lane enabled",
    "set_mask_count": "set_mask_count(): counter mode (the mask is an element count)",
    "set_mask_norm": "set_mask_norm(): normal mode (the mask selects lanes per repeat)",
    "BinaryRepeatParams": "BinaryRepeatParams(dst_blk_stride=1, src0_blk_stride=1, "
                          "src1_blk_stride=1, dst_rep_stride=8, src0_rep_stride=8, "
                          "src1_rep_stride=8), strides in 32-byte blocks",
    "UnaryRepeatParams": "UnaryRepeatParams(dst_blk_stride=1, src_blk_stride=1, "
                         "dst_rep_stride=8, src_rep_stride=8), strides in 32-byte blocks",
}

BUILTINS: dict[str, Builtin] = {}
for _name, _doc in _SYSTEM_BUILTINS.items():
    BUILTINS[_name] = Builtin(_name, _doc)
for _spec in REGISTRY.values():
    if _spec.elem is not None or _spec.name == "data_copy":
        BUILTINS[_spec.name] = Builtin(_spec.name, _spec.doc)
for _name in ("cast", "compare", "compare_scalar", "select"):  # compiler/ops/convert.py
    BUILTINS[_name] = Builtin(_name, REGISTRY[_name].doc)

# reductions (compiler/ops/reduce.py) and pyasc's asc.ReduceOrder
from ..compiler.ops.reduce import REDUCE_OPS, ReduceOrder  # noqa: E402

for _name in REDUCE_OPS:
    BUILTINS[_name] = Builtin(_name, REGISTRY[_name].doc)
BUILTINS["ReduceOrder"] = ReduceOrder  # type: ignore[assignment]  (an enum, exported as asc.ReduceOrder)

# brcb, gatherb, gather, scatter (compiler/ops/gather.py) and their parameter records
from ..compiler.ops.gather import GATHER_OPS  # noqa: E402

for _name in GATHER_OPS + ("repeat_reduce_sum",):
    BUILTINS[_name] = Builtin(_name, REGISTRY[_name].doc)
BUILTINS["BrcbRepeatParams"] = Builtin(
    "BrcbRepeatParams", "BrcbRepeatParams(dst_blk_stride=1, dst_rep_stride=8): brcb's "
    "destination strides in 32-byte blocks")
BUILTINS["TQueBind"] = Builtin(
    "TQueBind", "TQueBind(src=VECIN, dst=VECIN, depth=0, mask=0): a queue bound to a data path "
    "(GM->X, X->GM, VECIN->VECOUT, A1->A2, B1->B2, C1->C2, CO1->CO2); TQue's methods")
BUILTINS["LocalMemAllocator"] = Builtin(
    "LocalMemAllocator", "LocalMemAllocator(hard=Hardware.UB): static tensors from address 0 "
    "up: alloc(pos, data_type, tile_size), get_cur_addr()")
from .hardware import Hardware  # noqa: E402

BUILTINS["Hardware"] = Hardware  # type: ignore[assignment]  (an enum, exported as asc.Hardware)
BUILTINS["TBufPool"] = Builtin(
    "TBufPool", "TBufPool(pos, buf_id_size=4): a region of pos's memory for queues and TBufs "
    "(TPipe/TBufPool.init_buf_pool, init_buffer, reset)")
BUILTINS["ShapeInfo"] = Builtin(
    "ShapeInfo", "ShapeInfo([shape, original_shape, data_format]): a tensor's shape record "
    "(shape(dim), original_shape(dim)); t.set_shape_info / t.get_shape_info")
BUILTINS["get_shape_size"] = Builtin("get_shape_size", "get_shape_size(shape_info): the "
                                     "product of the dimensions")
BUILTINS["array"] = Builtin("array", "array(dtype, values) / array(dtype, length, fill_value): "
                            "a fixed list of values (ShapeInfo's shape)")
from .data_format import DataFormat  # noqa: E402

BUILTINS["DataFormat"] = DataFormat  # type: ignore[assignment]  (an enum, exported as asc.DataFormat)
from ..compiler.ops.scalar_bits import KINDS as _SCALAR_BITS  # noqa: E402

from ..compiler.ops.gather_mask import GatherMaskMode  # noqa: E402

BUILTINS["gather_mask"] = Builtin("gather_mask", REGISTRY["gather_mask"].doc)
BUILTINS["get_gather_mask_remain_count"] = Builtin(
    "get_gather_mask_remain_count", REGISTRY["gather_mask_count"].doc)
BUILTINS["GatherMaskParams"] = Builtin(
    "GatherMaskParams", "GatherMaskParams(src0_block_stride=1, repeat_times=1, "
    "src0_repeat_stride=0, src1_repeat_stride=0): gather_mask's repeats and strides")
BUILTINS["GatherMaskMode"] = GatherMaskMode  # type: ignore[assignment]
for _name in ("cast_deq", "set_deq_scale"):
    BUILTINS[_name] = Builtin(_name, REGISTRY[_name].doc)
BUILTINS["VdeqInfo"] = Builtin("VdeqInfo", "VdeqInfo(scale[16], offset[16], sign_mode[16]): "
                               "cast_deq's 16 parameter groups for set_deq_scale(vdeq, info)")
for _name in tuple(_SCALAR_BITS) + ("scalar_cast",):
    BUILTINS[_name] = Builtin(_name, "a scalar-unit function (compiler/ops/scalar_bits.py)")
BUILTINS["GatherRepeatParams"] = Builtin(
    "GatherRepeatParams", "GatherRepeatParams(dst_blk_stride=1, dst_rep_stride=8): gatherb's "
    "destination strides in 32-byte blocks")

KERNEL_CLASSES = {c.asc_name: c for c in (GlobalAddress, GlobalTensor, LocalTensor, TPipe, TQue,
                                          TBuf, LocalTensorAuto)}

# the cube unit (compiler/ops/cube.py): load_data, mmad, fixpipe, their parameter records
from .cube_api import CUBE_BUILTINS  # noqa: E402

BUILTINS.update(CUBE_BUILTINS)

from . import opfamily_api  # noqa: E402  (copy/atomic/fused families' records and switches)

BUILTINS.update(opfamily_api.builtins())
from . import sort_api  # noqa: E402  (the sort family: ops/sort.py)
BUILTINS.update(sort_api.builtins())
from . import aipp_api  # noqa: E402  (AIPP: ops/aipp.py)
BUILTINS.update(aipp_api.builtins())
from . import sysctl_api  # noqa: E402  (pyasc-lang: cache/profiling/system calls)
BUILTINS.update(sysctl_api.builtins())
# inter-block synchronisation through GM flags (compiler/ops/ib_sync.py)
for _ib in ("ib_set", "ib_wait", "notify_next_block", "wait_pre_block"):
    from ..compiler.ops import REGISTRY as _REG  # noqa: E402
    BUILTINS[_ib] = Builtin(_ib, _REG[_ib].doc)
