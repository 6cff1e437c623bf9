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
temporary-buffer queries and tiling functions; ``quant`` holds ``quant``, ``sortreg``
``concat``/``extract``; ``matmul_config`` the Matmul config records and helpers.
"""

#: ``matmul_config`` (the Matmul config records, plain Python) is imported by ``ascendc_py.adv``
#: at import time, so this package loads no kernel module itself: the math functions are
#: reached lazily (``ascendc_py.advlib.tanh`` loads ``math`` on first use).


def __getattr__(name: str):
    if name.startswith("__") and name != "__all__":
        raise AttributeError(name)
    import importlib
    _math = importlib.import_module(".math", __name__)
    if name == "__all__" or name in _math.__all__:
        return getattr(_math, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
