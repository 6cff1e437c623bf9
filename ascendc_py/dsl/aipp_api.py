"""Kernel-language names of AIPP (``compiler/ops/aipp.py``): the two instructions, their
parameter records and ``asc.AippInputFormat``, merged into ``dsl.api.BUILTINS``."""
from __future__ import annotations


def builtins() -> dict:
    """``{name: Builtin or enum}`` of AIPP (called by ``dsl.api`` once it defines Builtin)."""
    from ..compiler.ops import REGISTRY
    from ..compiler.ops.aipp import LOAD_IMAGE_FIELDS, RECORDS, AippInputFormat
    from .api import Builtin
    names: dict = {"AippInputFormat": AippInputFormat}
    for name in ("set_aipp_functions", "load_image_to_local"):
        names[name] = Builtin(name, REGISTRY[name].doc)
    for kind, fields in RECORDS.items():
        names[kind] = Builtin(kind, f"{kind}({', '.join(f'{n}={d!r}' for n, d in fields)}): "
                                    f"AIPP register values (compile-time numbers)")
    names["AippParams"] = Builtin(
        "AippParams", "AippParams(dtype, padding_params=None, swap_params=None, "
        "single_line_params=None, dtc_params=None, c_padding_params=None, csc_params=None): "
        "the output dtype (int8 or float16) and the AIPP processing")
    names["LoadImageToLocalParams"] = Builtin(
        "LoadImageToLocalParams", "LoadImageToLocalParams("
        + ", ".join(f"{n}={d}" for n, d in LOAD_IMAGE_FIELDS) + "): the crop and padding of "
        "load_image_to_local")
    return names
