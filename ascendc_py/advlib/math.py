"""pyasc's 27 ``asc.adv`` math functions (Ascend C's high-level math APIs) and their
temporary-buffer rule, gathered from the modules that define them."""
from . import elementary, hyperbolic, special, trig
from ._core import FRAMEWORK_CHUNK, REPEAT
from .elementary import (axpy, ceil, exp, floor, frac, log, power, round, sign,  # noqa: A004
                         trunc, xor)
from .hyperbolic import acosh, asinh, atanh, cosh, sinh, tanh
from .special import digamma, erf, erfc, lgamma
from .trig import acos, asin, atan, cos, sin, tan

#: float32 scratch regions of each API's body (the input and result regions come on top),
#: for float16 and float32 alike; ``log`` and ``exp`` with taylor_expand_level 0 need none
BODY_REGIONS: dict = {**elementary.REGIONS, **trig.REGIONS, **hyperbolic.REGIONS,
                      **special.REGIONS}

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma",
           "erf", "erfc", "exp", "floor", "frac", "lgamma", "log", "round", "sign", "sin",
           "sinh", "tan", "tanh", "trunc", "power", "xor", "axpy"]
MATH_APIS = tuple(__all__)
__all__ = __all__ + ["BODY_REGIONS", "MATH_APIS", "FRAMEWORK_CHUNK", "REPEAT"]
