"""Ascend C's C++ names and the Python DSL's: one rule, no second op list.

A C++ API name maps to the DSL name by the rule ``dsl/suggest.camel_match`` states for the
did-you-mean hints: the CamelCase name, lower-cased, is a known DSL name with its underscores
removed (``DataCopy`` -> ``data_copy``, ``EnQue`` -> ``enque``, ``GetBlockIdx`` ->
``get_block_idx``, ``SetTensorA`` -> ``set_tensor_a``). The known names are the op registry's
ops and the kernel builtins (free functions) and the type checker's method table (methods);
a name with no match falls back to CamelCase -> snake_case (the type checker then names it in
its error). C scalar types map to DSL dtypes by :data:`C_DTYPES`.
"""
from __future__ import annotations

import functools
import re

#: C++ enumeration names spelled differently in the DSL
ENUM_ALIASES = {"QuantMode_t": "QuantModes", "pipe_t": "PipeID"}
#: template value arguments the DSL takes last, not first (``Fixpipe<T, U, CFG_NZ>(...)``)
TRAILING_TEMPLATE_ARGS = {"fixpipe"}
#: Ascend C constants the DSL spells as a call
CONSTANT_CALLS = {"CFG_NZ": "FixpipeConfig.cfg_nz", "CFG_ROW_MAJOR": "FixpipeConfig.cfg_row_major"}

#: C scalar type -> DSL dtype name
C_DTYPES = {
    "half": "float16", "float16_t": "float16", "__fp16": "float16", "float": "float32",
    "float32_t": "float32", "double": "float64", "bfloat16_t": "bfloat16", "bool": "bool_",
    "int8_t": "int8", "int16_t": "int16", "int32_t": "int32", "int64_t": "int64",
    "uint8_t": "uint8", "uint16_t": "uint16", "uint32_t": "uint32", "uint64_t": "uint64",
    "char": "int8", "short": "int16", "int": "int32", "long": "int64", "size_t": "uint64",
    "unsigned": "uint32", "unsigned int": "uint32", "unsigned char": "uint8",
    "unsigned short": "uint16", "unsigned long": "uint64", "long long": "int64",
    "unsigned long long": "uint64", "signed char": "int8", "signed": "int32",
    "signed int": "int32", "int8": "int8", "uint8": "uint8", "event_t": "int32",
    "TEventID": "int32",
}

#: Ascend C classes (a declaration default-constructs them as the DSL class of the same name)
ASC_CLASSES = {"TPipe", "TQue", "TQueBind", "TBuf", "GlobalTensor", "LocalTensor", "TBufPool",
               "DataCopyParams", "DataCopyExtParams", "DataCopyPadExtParams",
               "DataCopyPadParams", "LoadData2DParams", "MmadParams", "FixpipeParamsV220",
               "Nd2NzParams", "BinaryRepeatParams", "UnaryRepeatParams", "CopyRepeatParams",
               "GatherMaskParams", "ShapeInfo"}
#: classes of asc.adv
ADV_CLASSES = {"Matmul", "MatmulType", "TCubeTiling"}

BUILTIN_TYPES = frozenset(C_DTYPES) | {"GM_ADDR", "void"} | ASC_CLASSES | ADV_CLASSES
#: names that always take a template argument list
TEMPLATE_NAMES = frozenset(ASC_CLASSES | ADV_CLASSES | {
    "AllocTensor", "DeQue", "Get", "SetFlag", "WaitFlag", "PipeBarrier", "ReinterpretCast",
    "GetWithOffset", "Cast", "DataCopy", "DataCopyPad"})

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@functools.lru_cache(maxsize=None)
def _known_functions() -> frozenset:
    import ascendc_py as asc
    from ..compiler.ops import REGISTRY
    from ..dsl.api import BUILTINS
    return frozenset(REGISTRY) | frozenset(BUILTINS) | frozenset(
        k for k, v in vars(asc).items() if callable(v) and k.islower() and
        not k.startswith("_"))


@functools.lru_cache(maxsize=None)
def _known_methods() -> frozenset:
    from ..dsl.suggest import kernel_methods
    return frozenset(kernel_methods())


def snake(name: str, known=None) -> str:
    """The DSL spelling of an Ascend C method name (``EnQue`` -> ``enque``,
    ``SetGlobalBuffer`` -> ``set_global_buffer``)."""
    from ..dsl.suggest import camel_match
    known = _known_methods() if known is None else known
    if name in known:
        return name
    return camel_match(name, known) or _SNAKE.sub("_", name).lower()


def builtin_function(name: str):
    """The DSL name of the C++ free function ``name`` if ``ascendc_py`` has it as a kernel
    builtin (the op registry's ops, the system functions), else None."""
    py = snake(name, _known_functions())
    return py if py in _known_functions() else None


def c_dtype(type_name: str):
    """The DSL dtype of a C scalar type name, or None."""
    import ascendc_py as asc
    name = C_DTYPES.get(type_name)
    return getattr(asc, name) if name else None
