"""Kernel-language names of the system control, cache and profiling calls
(``compiler/ops/sysctl.py``), the records of ``compiler/ops/copy_records.py`` and their enums,
merged into ``dsl.api.BUILTINS``."""
from __future__ import annotations

_DOCS = {
    "data_cache_clean_and_invalid": "data_cache_clean_and_invalid(CacheLine, [DcciDst,] dst): "
                                    "write back / invalidate the scalar data cache (checked; no "
                                    "cache is simulated)",
    "data_cache_preload": "data_cache_preload(src, cache_offset): prefetch a GM line (checked; "
                          "no cache is simulated)",
    "icache_preload": "icache_preload(pre_fetch_len): prefetch instructions (no effect here)",
    "get_icache_preload_status": "get_icache_preload_status(): 0 (no preload pending)",
    "data_sync_barrier": "data_sync_barrier(MemDsbT): wait for earlier memory accesses (one "
                         "scalar issue here: they have completed)",
    "metrics_prof_start": "metrics_prof_start(): profiling marker (no effect here)",
    "metrics_prof_stop": "metrics_prof_stop(): profiling marker (no effect here)",
    "init_soc_state": "init_soc_state(): reset SoC state (no effect here)",
    "set_mm_layout_transform": "set_mm_layout_transform(bool): the cube's M/N traversal order "
                               "(no effect on results or simulated time)",
    "CheckLocalMemoryIAParam": "CheckLocalMemoryIAParam(enable_bit=0, start_addr=0, end_addr=0, "
                               "is_scalar_read=False, ..., is_enable=False)",
    "check_local_memory_ia": "check_local_memory_ia(CheckLocalMemoryIAParam(...)): arm the "
                             "NPU's local-memory watch (every access is checked here anyway)",
    "get_data_block_size_in_bytes": "get_data_block_size_in_bytes(): 32",
    "get_arch_version": "get_arch_version(core_version): 220 (Atlas A2's core version)",
    "get_program_counter": "get_program_counter(): the call's source line (no instruction "
                           "addresses are simulated)",
    "trap": "trap(): stop the kernel with an error naming the line",
    "print_time_stamp": "print_time_stamp(desc_id): print 'TimeStamp: desc_id=<id>, "
                        "cycle=<simulated cycle>' after the launch",
    "dump_acc_chk_point": "dump_acc_chk_point(tensor, index, count_off, dump_size): "
                          "dump_tensor(tensor[count_off:], index, dump_size)",
    "set_sys_workspace": "set_sys_workspace(GlobalAddress): the kernel's system workspace",
    "get_sys_workspace": "get_sys_workspace(): the address set_sys_workspace set (a GlobalTensor "
                         "bound to it faults if none was set)",
    "set_cmp_mask": "set_cmp_mask(src): 16 bytes of UB into the CMPMASK register "
                    "(compiler/ops/cmpmask.py)",
    "get_cmp_mask": "get_cmp_mask(dst): the CMPMASK register into 16 bytes of UB",
    "ListTensorDesc": "ListTensorDesc([data, length=0xffffffff, shape_size=0xffffffff]): a list "
                      "of tensors described in one GM buffer (compiler/sema/list_tensor.py)",
    "TensorDesc": "TensorDesc(dtype=float32): one tensor of a ListTensorDesc (get_desc fills it)",
    "set_pad_value": "set_pad_value(value[, pos=TPosition.MAX]): the padding value data_copy_pad "
                     "GM->UB uses while its is_pad is False (ops/sysctl.py)",
    "set_hf32_mode": "set_hf32_mode(bool): float32 mmad operands read rounded to HF32 (10 "
                     "mantissa bits)",
    "set_hf32_trans_mode": "set_hf32_trans_mode(bool): HF32 rounding ties away from zero (True) "
                           "or to even (False)",
    "add_deq_relu": "add_deq_relu(dst, src0, src1, count | mask, repeat_times, repeat_params): "
                    "half(max((src0 + src1) * DeqScale, 0)), int32 sources (ops/add_deq.py)",
    "set_hccl_context": "set_hccl_context(index, GlobalAddress): HCCL context 0 or 1",
    "get_hccl_context": "get_hccl_context(index): the address set_hccl_context set",
}


def builtins() -> dict:
    """``{name: Builtin}`` of these names and the enums (called by ``dsl.api``)."""
    from ..compiler.ops.sysctl import CacheLine, CacheMode, CacheRwMode, DcciDst, MemDsbT
    from ..compiler.ops.copy_records import RECORDS, BlockMode, DeqScale, pad_t
    from .api import Builtin
    names = {name: Builtin(name, doc) for name, doc in _DOCS.items()}
    for kind, spec in RECORDS.items():       # records no instruction consumes yet
        fields = ", ".join(n if d is None else f"{n}={d!r}" for n, d, _ in spec)
        names[kind] = Builtin(kind, f"{kind}({fields}): a parameter record "
                                    f"(compiler/ops/copy_records.py)")
    for enum_class in (CacheLine, DcciDst, MemDsbT, CacheMode, CacheRwMode, BlockMode, DeqScale,
                       pad_t):
        names[enum_class.__name__] = enum_class
    return names
