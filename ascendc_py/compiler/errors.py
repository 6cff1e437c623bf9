"""Source locations and the one error hierarchy every stage raises.

Every user-facing error names the kernel file, line and column, shows the source line with a
caret under the offending span, says what happened and what to do. Internal exceptions (lark,
llvmlite) are always wrapped, never shown raw.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A span in a kernel's source file (1-based lines, 1-based columns)."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def source_line(self) -> str:
        """The text of the first line of the span ('' if the file cannot be read)."""
        return linecache.getline(self.file, self.line).rstrip("\n")

    def excerpt(self) -> str:
        """The source line followed by a caret line under the span."""
        text = self.source_line()
        if not text:
            return ""
        start = max(self.col - 1, 0)
        if self.end_line == self.line and self.end_col > self.col:
            width = self.end_col - self.col
        else:
            width = max(len(text) - start, 1)
        width = max(1, min(width, max(len(text) - start, 1)))
        return f"    {text}\n    {' ' * start}{'^' * width}"


UNKNOWN_LOC = SourceLoc("<unknown>", 0, 0)


@dataclass(frozen=True)
class Site:
    """A place where a compiled kernel can fail or report: its location, the op involved and
    details (operand names…). Compiled kernels keep a list of them; ctx stores an index."""

    loc: SourceLoc | None
    op: str
    detail: tuple = ()


class KernelError(Exception):
    """Base of every error ascendc_py reports about a user's kernel.

    ``message`` says what happened; ``hint`` says how to fix it; ``loc`` points at the kernel
    source. ``str(err)`` gives ``file:line:col: message``, the source excerpt and the hint.
    """

    kind = "error"

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = ""):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"{self.loc}: {self.message}" if self.loc and self.loc.line else self.message
        parts = [head]
        if self.loc and self.loc.line:
            ex = self.loc.excerpt()
            if ex:
                parts.append(ex)
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)


class KernelCompileError(KernelError):
    """A kernel could not be compiled (reported before anything runs)."""


class KernelSyntaxError(KernelCompileError):
    """The source is not valid Python, or uses a construct outside the kernel language."""


class KernelNameError(KernelCompileError):
    """A name used in a kernel is not defined (neither local, global, nor a DSL builtin)."""


class KernelTypeError(KernelCompileError):
    """Wrong argument count, types or dtypes for an operation."""


class KernelValueError(KernelCompileError):
    """A value is out of range for an operation (e.g. a compile-time size)."""


class KernelLaunchError(KernelError):
    """A launch was rejected before running: wrong arguments, unsupported array, bad block_dim."""


class KernelRuntimeError(KernelError):
    """A simulated kernel faulted at run time (what would crash or hang a real NPU)."""


class GMOutOfBoundsError(KernelRuntimeError):
    """A global-memory access fell outside the buffer of the kernel argument it belongs to."""


class LocalMemoryError(KernelRuntimeError):
    """A local-memory (UB/L1/L0) access is out of range or misaligned."""


class BufferCapacityError(KernelRuntimeError):
    """TPipe.init_buffer asked for more local memory than the position's memory has left."""


class QueueError(KernelRuntimeError):
    """TQue misuse: deque on an empty queue, alloc beyond the buffers, free of a foreign tensor…"""


class SyncError(KernelRuntimeError):
    """Flag misuse: event id out of range, double set_flag, wait_flag that can never be satisfied."""


class LoopLimitError(KernelRuntimeError):
    """A loop ran far longer than any real kernel could (the hang it would be on hardware)."""


class InternalCompilerError(KernelCompileError):
    """A bug in ascendc_py itself; the message includes the kernel location being compiled."""


class KernelWarning(UserWarning):
    """Something hardware would run but that is probably a mistake (e.g. a lenient-mode GM
    overrun, or a data_copy length the hardware truncates). The message names the line."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = ""):
        self.loc = loc
        text = KernelError(message, loc, hint)._render()
        super().__init__(text)


class GMOutOfBoundsWarning(KernelWarning):
    """Lenient mode: a GM access ran past the end of its buffer into device-like slack."""
