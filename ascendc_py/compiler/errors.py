"""Source locations and the one error hierarchy every stage raises.

Every user-facing error names the kernel file, line and column, shows the source line with a
caret under the offending span, says what happened and what to do. Internal exceptions (lark,
llvmlite) are always wrapped, never shown raw.
"""
from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass

# ----------------------------------------------------------------------------- naming a place
#: ``linecache`` names ascendc_py registered for notebook cells (compiler/frontend/notebook.py),
#: with IPython's label of the cell ('In[3]')
_cell_names: dict[str, str] = {}


def register_cell_name(file: str, label: str) -> None:
    """Show the ``linecache`` entry ``file`` as ``Cell <label>`` (e.g. ``Cell In[3]``)."""
    _cell_names[file] = label


def cell_label(file: str) -> str | None:
    """``'Cell In[3]'`` when ``file`` names a cell of the running IPython session (IPython's
    own cell names, through its ``compile.format_code_name``, or a cell ascendc_py found for a
    cell magic), else None."""
    label = _cell_names.get(file)
    if label is not None:
        return f"Cell {label}"
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
        shell = get_ipython()
        fmt = getattr(getattr(shell, "compile", None), "format_code_name", None)
        data = fmt(file) if fmt is not None else None
    except Exception:  # noqa: BLE001 - naming a place must never fail
        return None
    if data:
        return f"{data[0]} {data[1]}"
    return None


def place(file: str, line: int, col: int = 0, short: bool = False) -> str:
    """How messages name a place: ``path/k.py:12:5`` (``k.py:12`` with ``short`` and no
    column), or for a notebook cell as IPython does, ``Cell In[3], line 12``."""
    label = cell_label(file)
    if label is not None:
        return f"{label}, line {line}" + (f", column {col}" if col else "")
    name = file.rsplit("/", 1)[-1] if short else file
    return f"{name}:{line}" + (f":{col}" if col else "")


@dataclass(frozen=True)
class SourceLoc:
    """A span in a kernel's source file (1-based lines, 1-based columns).

    ``inlined_from``: for code of an inlined kernel function, the chain of calls that brought
    it into the kernel, innermost first: ``(callee, caller, call site)`` triples."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    inlined_from: tuple = ()

    def __str__(self) -> str:
        """``file:line:col``, or ``Cell In[3], line 4, column 5`` in a notebook cell."""
        label = cell_label(self.file)
        if label is not None:
            return f"{label}, line {self.line}, column {self.col}"
        return f"{self.file}:{self.line}:{self.col}"

    def chain_text(self) -> str:
        """``in load_tile (kernels.py:30), inlined from k at user.py:11`` ('' if not inlined);
        cells are named as IPython does (``Cell In[3], line 4``)."""
        if not self.inlined_from:
            return ""
        text = f"in {self.inlined_from[0][0]} ({place(self.file, self.line, short=True)})"
        for _, caller, site in self.inlined_from:
            text += f", inlined from {caller} at {place(site.file, site.line, short=True)}"
        return text

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
class TensorInfo:
    """What an error message says about a LocalTensor operand: the name the user gave it at
    the instruction (the argument's source text), its dtype, and where it was created."""

    name: str
    dtype: str
    esize: int
    origin: SourceLoc | None = None
    made_by: str = ""          # 'alloc_tensor', 'deque', 'TBuf.get', 'LocalTensor(...)'

    def describe(self, at: "SourceLoc | None" = None) -> str:
        """'alloc_tensor at line 12' (with the file's name when it is not ``at``'s file)."""
        if not self.made_by:
            return ""
        if not (self.origin and self.origin.line):
            return self.made_by
        if at is not None and at.file != self.origin.file:
            return f"{self.made_by} at {place(self.origin.file, self.origin.line, short=True)}"
        return f"{self.made_by} at line {self.origin.line}"


@dataclass(frozen=True)
class Site:
    """A place where a compiled kernel can fail or report: its location, the op involved and
    details (operand names…). Compiled kernels keep a list of them; ctx stores an index.
    ``tensors``: per operand position of the instruction, a ``TensorInfo`` for LocalTensor
    operands (None elsewhere)."""

    loc: SourceLoc | None
    op: str
    detail: tuple = ()
    tensors: tuple = ()


class KernelError(Exception):
    """Base of every error ascendc_py reports about a user's kernel.

    ``message`` says what happened; ``hint`` says how to fix it; ``loc`` points at the kernel
    source. ``str(err)`` gives ``file:line:col: message``, the source excerpt and the hint.
    """

    kind = "error"
    user_facing = True   # shown without ascendc_py's frames (see user_boundary below)

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = ""):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._render())

    def relocated(self, loc: SourceLoc) -> "KernelError":
        """The error at ``loc`` instead (the same location with its inlining chain)."""
        self.loc = loc
        self.args = (self._render(),)
        return self

    def _render_traceback_(self) -> list[str]:
        """IPython's hook for showing an exception: the traceback without ascendc_py's frames
        (IPython never hides the frame that raised, even one marked ``__tracebackhide__``)."""
        tb = self.__traceback__
        if user_facing(self):
            tb = without_internal_frames(tb)
        try:
            from IPython import get_ipython
            shell = get_ipython()
            if shell is not None:
                return shell.InteractiveTB.structured_traceback(type(self), self, tb)
        except Exception:  # noqa: BLE001 - fall back to Python's formatting
            pass
        import traceback
        return traceback.format_exception(type(self), self, tb)

    def _render(self) -> str:
        head = f"{self.loc}: {self.message}" if self.loc and self.loc.line else self.message
        parts = [head]
        if self.loc and self.loc.line:
            ex = self.loc.excerpt()
            if ex:
                parts.append(ex)
            if self.loc.inlined_from:
                parts.append(f"  {self.loc.chain_text()}")
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


class GlobalTensorUnsetError(KernelRuntimeError):
    """A GlobalTensor used before its set_global_buffer ran (it runs only on some paths)."""


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


# ----------------------------------------------------------------------------- compile-time errors
class UnsupportedConstructError(KernelSyntaxError):
    """A Python construct outside the kernel language (class, lambda, with, for-else…)."""


class AssignmentTargetError(KernelSyntaxError):
    """Assignment to something other than a plain name (or a tuple of names)."""


class UndefinedNameError(KernelNameError):
    """A name that is neither local, global, closure, nor a DSL builtin."""


class MaybeUndefinedError(KernelNameError):
    """A name assigned on only some paths (or changing kind) before it is used."""


class UnknownAttributeError(KernelNameError):
    """An attribute or method the object does not have in kernels."""


class ArgumentError(KernelTypeError):
    """Wrong number of arguments, an unknown or repeated keyword, a missing argument."""


class DtypeError(KernelTypeError):
    """A dtype the op does not support on A2/A3, or operands of different dtypes."""


class OperandKindError(KernelTypeError):
    """An operand of the wrong kind (a GlobalTensor where a LocalTensor is needed, a tensor
    where a number is needed…)."""


class ReassignmentError(KernelTypeError):
    """A variable reassigned with a value of another kind or type."""


class ReturnValueError(KernelTypeError):
    """A kernel returning a value, or a device function returning in an unsupported way."""


class NotConstantError(KernelValueError):
    """A value that must be known at compile time is a runtime value."""


class StaticAssertionError(KernelValueError):
    """static_assert (or an assert on compile-time values) failed."""


class ConstantRangeError(KernelValueError):
    """A compile-time value out of its legal range (depth, step, shift, division by zero…)."""


class SourceChangedError(KernelCompileError):
    """The source text the compiler would read for a kernel is not the code Python is running:
    the file changed since the module was imported (or the function was compiled from another
    text under that file name)."""


class RecursiveCallError(KernelCompileError):
    """A kernel function that calls itself (or nests too deeply) cannot be inlined."""


class BlockDimError(KernelLaunchError):
    """A bad launch configuration: block_dim not an int in 1..65535, or a direct call."""


class LaunchArgumentError(KernelLaunchError):
    """Wrong, missing or mistyped launch arguments."""


class UnsupportedArrayError(KernelLaunchError):
    """An argument that is not a numpy array or torch tensor of a supported dtype."""


class NonContiguousArrayError(KernelLaunchError):
    """A GM argument that is not contiguous."""


class DeviceError(KernelLaunchError):
    """A torch tensor that is not on the CPU."""


class ReadOnlyArgumentError(KernelLaunchError):
    """The kernel writes a GM argument (an instruction names it at compile time) that was passed
    read-only: a numpy array with writeable=False, over a bytes object or a read-only memmap.
    Nothing runs."""


class RequiresGradArgumentError(KernelLaunchError):
    """The kernel writes a torch tensor that requires grad while grad mode is on: autograd
    would not see the write, and gradients through it would be silently wrong. Nothing runs."""


# ----------------------------------------------------------------------------- run-time faults
# One class per fault; each derives from the family above it so `except QueueError` still works.
class LocalOutOfRangeError(LocalMemoryError):
    """A local tensor access runs past the end of its memory (UB/L1/L0…) or starts below 0."""


class TensorExtentError(LocalOutOfRangeError):
    """An instruction's operand runs past the LocalTensor it was given (its length from
    alloc_tensor, TBuf.get, a slice or LocalTensor(..., tile_size)), even if the bytes are
    inside local memory: they belong to another buffer."""


class MisalignedAddressError(LocalMemoryError):
    """A local address used by a vector op or a copy is not 32-byte aligned."""


class GMAlignmentError(KernelLaunchError):
    """A GM argument's address is not a multiple of its element size."""


class QueueEmptyError(QueueError):
    """deque on a queue with nothing enqueued: a hang on hardware."""


class NoFreeBufferError(QueueError):
    """alloc_tensor with every buffer of the queue in use: a hang on hardware."""


class QueueFullError(QueueError):
    """enque beyond the queue's depth."""


class ForeignTensorError(QueueError):
    """enque/free_tensor of a tensor that another queue (or no queue) allocated."""


class UseAfterFreeError(QueueError):
    """A tensor is used (enqueued, computed on) after its buffer was freed."""




class DoubleFreeError(QueueError):
    """free_tensor of a buffer that is already free."""


class DoubleEnqueError(QueueError):
    """enque of a tensor that is already in the queue."""


class QueueNotInitializedError(QueueError):
    """A queue or buffer used before pipe.init_buffer."""


class QueueReinitError(QueueError):
    """pipe.init_buffer twice for one queue."""


class BufferCountError(QueueError):
    """init_buffer with a buffer count outside 1..8."""


class TooManyLiveTensorsError(QueueError):
    """More than 8 tensors allocated at once in one TPosition (hardware limit on A2/A3)."""


class EventIdError(SyncError):
    """A set_flag/wait_flag event id outside 0..7."""


class DoubleSetFlagError(SyncError):
    """set_flag on a flag that is already set: the first set is lost on hardware."""


class UnsatisfiedWaitError(SyncError):
    """A wait_flag that no set_flag satisfies: the hang it would be on hardware."""


class CrossCoreDeadlockError(SyncError):
    """A cross-core wait (cross_core_wait_flag, sync_all) that no sub-core of the launch can
    satisfy any more: the hang it would be on hardware."""


class CrossCoreFlagIdError(SyncError):
    """A cross-core flag id outside 0..10."""


class CrossCoreCounterError(SyncError):
    """A cross-core flag counter would hold more than 16 pending sets."""


class CrossCoreModeError(SyncError):
    """A cross-core mode whose partner sub-cores the launch does not have (mode 1 outside a
    mix kernel or on the AIC, mode 2 without both an AIC and AIVs)."""


class CoreMemoryError(LocalMemoryError):
    """An instruction touched a local memory its sub-core does not have (UB on the cube core,
    L1/L0 on a vector core)."""


class KernelAssertionError(KernelRuntimeError):
    """A runtime ``assert`` in a kernel failed."""


class ZeroStepError(KernelRuntimeError):
    """range() with a step of zero at run time."""


class DivisionByZeroError(KernelRuntimeError):
    """Integer division or modulo by zero in kernel scalar code."""


class NegativeCountError(KernelRuntimeError):
    """A count or length argument is negative at run time."""


class MaskRangeError(KernelRuntimeError):
    """A vector mask outside the lanes of one repeat (or an all-zero bit mask)."""


class RepeatRangeError(KernelRuntimeError):
    """repeat_times outside 0..255."""


class ReadOnlyWriteError(KernelRuntimeError):
    """An instruction whose destination GlobalTensor is chosen at run time was about to write
    an argument that may not be written (read-only, or a torch tensor that requires grad); it
    stopped before writing."""


class ValueRangeError(KernelRuntimeError):
    """A run-time value outside the range its use allows (a LocalTensor offset or address that
    does not fit in 32 bits, an index beyond 2**40): it is never wrapped or truncated."""


class StrideRangeError(KernelRuntimeError):
    """A block or repeat stride of a masked vector instruction or a reduction outside its
    hardware field (block strides 0..65535, repeat strides 0..255)."""


class DataCopyParamError(KernelRuntimeError):
    """A DataCopyParams/DataCopyExtParams field outside its hardware range."""


class CubeParamError(KernelRuntimeError):
    """A field of Nd2NzParams, LoadData2DParams, MmadParams or FixpipeParamsV220 outside its
    hardware range at run time (or an operand that overruns its L0/L1 buffer's layout)."""


class DataRaceError(KernelRuntimeError):
    """Sanitize mode: two pipes access the same 32-byte block without synchronisation."""


class HandoverError(DataRaceError):
    """Default mode: a TQue tensor one pipe wrote is read by another pipe with no hand-over
    between them (a forgotten enque/deque, a copy-in through a VECOUT queue): the race it is
    on hardware, found without sanitize mode at the granularity of queue buffers."""


class BlockOverlapError(KernelRuntimeError):
    """Sanitize mode: two blocks write the same GM bytes."""


class UninitializedReadError(KernelRuntimeError):
    """Sanitize mode: a read of local memory that nothing has written."""


class MatmulStateError(KernelRuntimeError):
    """A Matmul call ran without its A or B matrix set, or with a tiling whose base tile is
    empty (e.g. a TCubeTiling that get_tiling never filled)."""


class InternalCompilerError(KernelCompileError):
    """A bug in ascendc_py itself; the message includes the kernel location being compiled."""

    user_facing = False   # keeps every frame: it is ours to fix


class KernelWarning(UserWarning):
    """Something hardware would run but that is probably a mistake (e.g. a lenient-mode GM
    overrun, or a data_copy length the hardware truncates). The message names the line."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = ""):
        self.loc = loc
        text = KernelError(message, loc, hint)._render()
        super().__init__(text)


class CacheDirectoryWarning(UserWarning):
    """The compile cache directory cannot be used (not a directory, not writable, the disk is
    full): compiled kernels stay in memory for the process. (About the machine, not a
    kernel: no source line.)"""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(f"{message}\n  hint: {hint}" if hint else message)


class GMOutOfBoundsWarning(KernelWarning):
    """Lenient mode: a GM access ran past the end of its buffer into device-like slack."""


class TensorExtentWarning(KernelWarning):
    """Lenient mode: an instruction used bytes past its LocalTensor (inside the memory, in the
    buffers that follow it), or a LocalTensor was made longer than its buffer."""


class TruncatedCopyWarning(KernelWarning):
    """data_copy of a byte length that is not a multiple of 32: hardware copies less."""


class FlagLeftSetWarning(KernelWarning):
    """A flag still set when the kernel ends (a set_flag without its wait_flag)."""


class LateSetWarning(KernelWarning):
    """Sanitize mode: a wait_flag satisfied only by a set_flag later in program order."""


# ----------------------------------------------------------------------------- presentation
# A user's mistake is shown as its message plus the user's own frames: the compiler's and the
# simulator's frames say nothing to a kernel author (and under pytest a long traceback printed
# their source and locals). ``ASCENDC_PY_FULL_TRACEBACK=1`` keeps every frame; an
# InternalCompilerError (a bug of ours) always keeps them.
import functools as _functools  # noqa: E402
import os as _os  # noqa: E402
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

PACKAGE_DIR = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
FULL_TRACEBACK_ENV = "ASCENDC_PY_FULL_TRACEBACK"


def is_internal_file(filename: str) -> bool:
    """True for a source file inside the ascendc_py package."""
    try:
        return _os.path.abspath(filename).startswith(PACKAGE_DIR + _os.sep)
    except (TypeError, ValueError):
        return False


def user_facing(exc: BaseException) -> bool:
    """An error about the user's kernel or call (not a bug of ours: its class says so with
    ``user_facing = True``), shown without our frames."""
    return (getattr(type(exc), "user_facing", False)
            and _os.environ.get(FULL_TRACEBACK_ENV, "") in ("", "0"))


def user_boundary(fn):
    """Decorate an entry point users call (a launch, a torch op): a user-facing KernelError
    leaves it with the internal frames below it dropped and no chained internal exception;
    the entry point's own frame is marked ``__tracebackhide__`` (pytest, IPython) and the
    excepthook installed at import drops it in scripts."""
    @_functools.wraps(fn)
    def user_entry_point(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 - read by pytest and IPython
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - only user-facing errors are trimmed
            if not user_facing(exc):
                raise
            exc.__cause__ = None
            exc.__suppress_context__ = True
            raise exc.with_traceback(None) from None
    return user_entry_point


def without_internal_frames(tb):
    """The traceback ``tb`` without the frames of files inside the package, or inside torch
    (its dispatcher's plumbing between the user's call of a torch op and ours)."""
    torch = _sys.modules.get("torch")
    torch_dir = _os.path.dirname(_os.path.abspath(torch.__file__)) + _os.sep \
        if getattr(torch, "__file__", None) else None
    kept = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not is_internal_file(name) and not (torch_dir and _os.path.abspath(name).startswith(
                torch_dir)):
            kept.append(tb)
        tb = tb.tb_next
    new = None
    for entry in reversed(kept):
        new = _types.TracebackType(new, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return new


def _excepthook(etype, value, tb):
    if user_facing(value):
        tb = without_internal_frames(tb)
        value.__traceback__ = tb   # Python 3.11's hook prints the exception's own traceback
    _previous_excepthook(etype, value, tb)


_previous_excepthook = _sys.excepthook


def install_excepthook() -> None:
    """In a script, Python's default excepthook prints every frame: chain a hook in front of
    it that drops ours for user-facing errors (only if no one replaced the default hook;
    IPython and pytest have their own and honour ``__tracebackhide__``)."""
    global _previous_excepthook
    if _sys.excepthook is _sys.__excepthook__:
        _previous_excepthook = _sys.excepthook
        _sys.excepthook = _excepthook


def user_frame():
    """The innermost frame outside ascendc_py (and torch's dispatcher): the user's line that
    launched the kernel, or None."""
    torch = _sys.modules.get("torch")
    torch_dir = _os.path.dirname(_os.path.abspath(torch.__file__)) + _os.sep \
        if getattr(torch, "__file__", None) else None
    frame = _sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not is_internal_file(name) and not (torch_dir and _os.path.abspath(name).startswith(
                torch_dir)):
            return frame
        frame = frame.f_back
    return None


def warn_at_user(warning: Warning, registry: dict) -> None:
    """Issue ``warning`` at the user's launch line. ``registry`` (one per compiled kernel, or
    per kernel function) is where the warnings filter records what it has shown: a warning
    is shown once per (message, launch line) and kernel — again after a recompile, again from
    another line — under the default filter, and every time under "always"."""
    import warnings
    frame = user_frame()
    if frame is None:
        warnings.warn(warning, stacklevel=2)
        return
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__", "__main__"),
                           registry=registry)
