"""The user surface of the kernel language: types, enums, builtins and the @kernel decorator."""
from . import types  # noqa: F401
