"""ascendc_py's high-level library: Ascend C's high-level APIs written in the kernel language.

Every API here is an ``@asc.kernel`` device function that a kernel inlines: it issues ordinary
vector instructions of the op registry (``asc.exp``, ``asc.mul``, ``asc.compare``,
``asc.select``, ``asc.cast`` ...), so the timing model prices it as that instruction sequence,
the sanitizer checks each instruction, and an error names the user's line with the chain of
inlined helpers. The modules set ``__asc_library__ = True``: an assertion of the library (a
too-small temporary buffer, a count beyond a tensor) is reported at the user's call.

``math`` holds pyasc's 27 ``asc.adv`` math functions (re-exported by :mod:`ascendc_py.adv`);
``softmax``, ``normalization``, ``layernorm`` and ``activation`` hold ``softmax``,
``rmsnorm``, ``layernorm`` and ``gelu``/``faster_gelu``/``silu``/``swiglu``/``geglu``
(loaded on first use of ``asc.adv.<name>``); ``ascendc_py.host_adv`` has the host-side
temporary-buffer queries and tiling functions.
"""
from .math import *  # noqa: F401,F403
from .math import __all__  # noqa: F401
