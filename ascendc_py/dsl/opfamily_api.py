"""Kernel-language names of the op families of ``compiler/ops/vcopy.py``, ``atomic.py`` and
``fused.py`` that are not element-wise registry entries (those get their ``asc.<name>`` from
the registry): parameter records and mode switches, merged into ``dsl.api.BUILTINS``."""
from __future__ import annotations

_DOCS = {
    "CopyRepeatParams": "CopyRepeatParams(dst_stride=1, src_stride=1, dst_repeat_size=8, "
                        "src_repeat_size=8): strides of asc.copy in 32-byte blocks (block "
                        "strides 0..65535, repeat sizes 0..4095)",
    "set_atomic_add": "set_atomic_add(dtype): UB->GM copies add to GM in dtype until "
                      "set_atomic_none()",
    "set_atomic_max": "set_atomic_max(dtype): UB->GM copies keep max(GM, data) in dtype",
    "set_atomic_min": "set_atomic_min(dtype): UB->GM copies keep min(GM, data) in dtype",
    "set_atomic_type": "set_atomic_type(dtype): the dtype of the atomic mode, which is kept",
    "set_atomic_none": "set_atomic_none(): UB->GM copies store again",
    "set_store_atomic_config": "set_store_atomic_config(AtomicDtype.X, AtomicOp.ATOMIC_SUM): "
                               "atomic add in that dtype (ATOMIC_NONE: off)",
    "get_store_atomic_config": "get_store_atomic_config() -> (atomic_type, atomic_op)",
    "add_relu_cast": "add_relu_cast(dst, src0, src1, count | mask, repeat_times, "
                     "BinaryRepeatParams): max(src0 + src1, 0) converted to dst's dtype "
                     "(float->half, half->int8, int16->int8)",
    "sub_relu_cast": "sub_relu_cast(dst, src0, src1, ...): max(src0 - src1, 0) converted",
    "mul_cast": "mul_cast(dst, src0, src1, ...): src0 * src1 (half) converted to int8/uint8",
    "transpose": "transpose(dst, src): 16 x 16 transpose of 2-byte elements; transpose(dst, "
                 "src, shared_tmp_buffer, TransposeParamsExt(...)): also [N,C,H,W] <-> "
                 "[N,H,W,C]",
    "TransposeParamsExt": "TransposeParamsExt(n_size=0, c_size=0, h_size=0, w_size=0, "
                          "transpose_type=TransposeType.TRANSPOSE_ND2ND_B16)",
    "trans_data_to_5hd": "trans_data_to_5hd(dst_list, src_list, TransDataTo5HDParams(...)): "
                         "16 source blocks to 16 destination blocks (NCHW -> NC1HWC0); lists "
                         "of 16 LocalTensors, of 16 UB addresses, or uint64 address tensors",
    "TransDataTo5HDParams": "TransDataTo5HDParams(dst_high_half=False, src_high_half=False, "
                            "repeat_times=1, dst_rep_stride=0, src_rep_stride=0)",
}


def builtins() -> dict:
    """``{name: Builtin}`` of these names (called by ``dsl.api`` once it defines Builtin)."""
    from ..compiler.ops.atomic import AtomicDtype, AtomicOp
    from ..compiler.ops.transpose import TransposeType
    from .api import Builtin
    names = {name: Builtin(name, doc) for name, doc in _DOCS.items()}
    for enum_class in (TransposeType, AtomicDtype, AtomicOp):     # asc.TransposeType, …
        names[enum_class.__name__] = enum_class
    return names
