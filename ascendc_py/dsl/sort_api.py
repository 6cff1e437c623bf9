"""Kernel-language names of the sort family (``compiler/ops/sort.py``) and of
``bilinear_interpolation`` (``compiler/ops/bilinear.py``), merged into
``dsl.api.BUILTINS``."""
from __future__ import annotations

_DOCS = {
    "MrgSortSrcList": "MrgSortSrcList(dtype, src1, src2, src3=None, src4=None): the sorted "
                      "queues of asc.mrg_sort",
    "MrgSort4Info": "MrgSort4Info(element_lengths, if_exhausted_suspension=False, valid_bit=15, "
                    "repeat_times=1): the parameters of asc.mrg_sort",
    "get_sort_len": "get_sort_len(n): float elements n (score, index) structures take (2n)",
    "get_sort_offset": "get_sort_offset(n): float offset of structure n (2n)",
    "proposal_concat": "proposal_concat(...): Atlas 910 / inference AI Core only (an error on "
                       "A2)",
    "proposal_extract": "proposal_extract(...): Atlas 910 / inference AI Core only (an error "
                        "on A2)",
    "rp_sort16": "rp_sort16(...): Atlas 910 / inference AI Core only (an error on A2)",
    "mrg_sort4": "mrg_sort4(...): Atlas 910 / inference AI Core only (an error on A2; use "
                 "mrg_sort)",
}


def builtins() -> dict:
    """``{name: Builtin}`` of the sort family (called by ``dsl.api`` once it defines
    Builtin)."""
    from ..compiler.ops import REGISTRY
    from .api import Builtin
    names = {name: Builtin(name, doc) for name, doc in _DOCS.items()}
    for name in ("sort32", "sort", "mrg_sort", "get_mrg_sort_result", "bilinear_interpolation"):
        names[name] = Builtin(name, REGISTRY[name].doc)
    return names
