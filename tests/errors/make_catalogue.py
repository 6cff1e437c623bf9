"""Write docs/errors.md, the error catalogue, from tests/errors/catalogue_kernels.py.

    python tests/errors/make_catalogue.py          # rewrite docs/errors.md
    python tests/errors/make_catalogue.py --check  # exit 1 if docs/errors.md is out of date

Every entry launches its minimal kernel and records what it gives now, so the catalogue always
shows the real messages; tests/errors/test_catalogue.py checks that docs/errors.md is identical
to what this script would write.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DOC = os.path.join(REPO, "docs", "errors.md")
for _p in (HERE, REPO):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import catalogue_kernels as ck  # noqa: E402
from ascendc_py.compiler import errors  # noqa: E402

# Family bases left out of the catalogue: each has subclasses that say more, and user code
# catches the family. (KernelSyntaxError is a family base too, but it is catalogued: it is raised
# directly for source that is not kernel syntax.)
ABSTRACT = {
    "KernelError": "the root of every error; never raised itself",
    "KernelCompileError": "the family of compile-time errors; never raised itself",
    "KernelNameError": "the family of name errors; today it is still raised directly for an "
                       "unknown attribute (see `UnknownAttributeError`)",
    "KernelTypeError": "the family of type errors; a few op-level checks (DSL builtin argument "
                       "binding, operand dtypes, printf) still raise it directly",
    "KernelValueError": "the family of value errors; a few op-level checks (a constant event "
                        "id or mask, static_assert) still raise it directly",
    "KernelLaunchError": "the family of launch errors; never raised itself",
    "KernelRuntimeError": "the family of run-time faults; raised itself only as the fallback for "
                          "an error code without a class (a bug in ascendc_py)",
    "LocalMemoryError": "the family of local-memory faults; every fault raises a subclass",
    "QueueError": "the family of TQue faults; every fault raises a subclass",
    "SyncError": "the family of flag faults; every fault raises a subclass",
    "KernelWarning": "the base of every warning; never issued itself",
}

STAGES = [
    ("compile", "Compile-time errors",
     "Raised by the first launch, before anything runs (a failed compilation is not cached)."),
    ("launch", "Launch errors",
     "Raised by `kernel[block_dim](...)` before compiling or running: the mistake is in the "
     "call, not in the kernel, so these messages name the kernel and the argument instead of a "
     "source line (and also the instruction's line when the argument conflicts with what an "
     "instruction does to it)."),
    ("run", "Run-time faults",
     "Raised by the simulator when a block reaches the faulting instruction (what would crash, "
     "hang or corrupt memory on a real NPU); the message names the block."),
    ("sanitize", "Sanitize-mode faults",
     "Found only with sanitize mode on: `kernel[n](..., sanitize=True)`, "
     "`asc.set_sanitizer(True)` or `ASCENDC_PY_SANITIZE=1`."),
    ("warning", "Warnings",
     "Issued with `warnings.warn` where hardware would still run; the launch completes."),
]


def all_classes() -> dict[str, type]:
    """Every error and warning class defined in ascendc_py/compiler/errors.py."""
    return {name: obj for name, obj in vars(errors).items()
            if inspect.isclass(obj) and obj.__module__ == errors.__name__
            and issubclass(obj, (errors.KernelError, errors.KernelWarning))}


def error_class(name: str) -> type:
    return all_classes()[name]


def kernel_of(entry):
    return getattr(ck, f"k_{entry.cls}")


def stage_of(entry) -> str:
    cls = error_class(entry.cls)
    if issubclass(cls, errors.KernelWarning):
        return "warning"
    if issubclass(cls, errors.KernelCompileError):
        return "compile"
    if issubclass(cls, errors.KernelLaunchError):
        return "launch"
    return "sanitize" if "sanitize=True" in entry.launch else "run"


def launch(entry) -> None:
    """Run the entry's launch expression (under its setup context, if any)."""
    setup = getattr(ck, entry.setup)() if entry.setup else contextlib.nullcontext()
    with setup:
        eval(entry.launch, vars(ck))  # noqa: S307 - our own catalogue's launch text


def outcome(entry):
    """What the entry's launch gives now: the exception raised, else the warning of the
    entry's class (or the first warning), else None."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            launch(entry)
        except Exception as exc:  # noqa: BLE001 - recorded in the catalogue
            return exc
    found = [w.message for w in caught if isinstance(w.message, Warning)]
    wanted = [w for w in found if type(w).__name__ == entry.cls]
    return (wanted or found or [None])[0]


def normalise(text: str) -> str:
    """Paths relative to the repository, run-dependent addresses replaced by 0x…."""
    text = text.replace(REPO + os.sep, "")
    return re.sub(r"0x[0-9a-f]{6,}", "0x…", text)


def one_line(doc: str | None) -> str:
    return " ".join((doc or "").split())


def chain(cls: type) -> str:
    names = [c.__name__ for c in cls.__mro__
             if issubclass(c, (errors.KernelError, errors.KernelWarning))]
    return " → ".join(f"`{n}`" for n in names)


def render() -> str:
    classes = all_classes()
    by_stage = {key: [e for e in ck.ENTRIES if stage_of(e) == key] for key, _, _ in STAGES}
    out = [
        "# Error catalogue",
        "",
        "<!-- Generated by tests/errors/make_catalogue.py from tests/errors/catalogue_kernels.py;"
        " do not edit by hand. -->",
        "",
        "Every error and warning class ascendc_py reports about a kernel, with a minimal kernel "
        "that triggers it, the launch, and the exact message it gives (paths relative to the "
        "repository). Each entry is a test in `tests/errors/test_catalogue.py`; the line an "
        "error points at is marked `# <-` in the kernel.",
        "",
        "Errors derive from `asc.KernelError`: `except asc.KernelCompileError`, "
        "`asc.KernelLaunchError` or `asc.KernelRuntimeError` catches a whole stage, "
        "`except asc.QueueError` (or `LocalMemoryError`, `SyncError`) a whole family. A message "
        "is `file:line:col: what happened`, the source line with a caret under the construct, "
        "and `hint: how to fix it`. Warnings derive from `asc.KernelWarning` (a `UserWarning`).",
        "",
        f"{len(ck.ENTRIES)} classes are catalogued:",
        "",
        "| Class | Base | Meaning |",
        "|---|---|---|",
    ]
    for key, title, _ in STAGES:
        for e in by_stage[key]:
            cls = classes[e.cls]
            out.append(f"| [`{e.cls}`](#{e.cls.lower()}) | `{cls.__bases__[0].__name__}` | "
                       f"{one_line(cls.__doc__)} |")
    out += ["", "Family bases not catalogued (each has subclasses that say more):", ""]
    for name, why in ABSTRACT.items():
        out.append(f"- `{name}`: {why}.")
    for key, title, intro in STAGES:
        out += ["", f"## {title}", "", intro]
        for e in by_stage[key]:
            out += [""] + render_entry(e, classes[e.cls])
    return "\n".join(out) + "\n"


def render_entry(entry, cls: type) -> list[str]:
    kernel = kernel_of(entry)
    source = inspect.getsource(kernel.fn).rstrip("\n")
    got = outcome(entry)
    lines = [f"### `{entry.cls}`", "",
             f"{chain(cls)}: {one_line(cls.__doc__)}", "",
             "```python", source, "", entry.launch, "```"]
    if entry.setup:
        why = one_line(getattr(ck, entry.setup).__doc__)
        lines += ["", f"Launched inside `{entry.setup}()`: {why[:1].lower()}{why[1:]}"]
    if entry.note:
        lines += ["", entry.note]
    if got is not None and type(got) is cls:
        lines += ["", "Message:"]
    elif got is None:
        lines += ["", "**Not raised yet:** this launch currently completes without it."]
        return lines
    else:
        lines += ["", f"**Not raised yet:** this launch currently gives "
                      f"`{type(got).__name__}` instead:"]
    lines += ["", "```", normalise(str(got)), "```"]
    return lines


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        with open(DOC, encoding="utf-8") as f:
            if f.read() != text:
                print("docs/errors.md is out of date: run python tests/errors/make_catalogue.py")
                return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(DOC)} ({len(ck.ENTRIES)} classes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
