"""Exceptions for faults of launches on sub-cores (``subcores.py``): which sub-core failed, and
the cross-core and core-memory errors (the others come from ``faults.build_fault``)."""
from __future__ import annotations

from ..compiler import errors as err
from ..dsl.kernel_types import IB_SYNC_OPS, SubcoreLayout
from ..dsl.types import Memory
from . import abi
from . import xcore_layout as X
from .abi import ErrorCode as E
from .faults import build_fault

_CORE_NAMES = {0: "vector core (AIV)", 1: "cube core (AIC)"}
_CORE_MEMORIES = {0: "UB", 1: "L1, L0A, L0B, L0C, BT and FB"}
_ROLE_HINT = ("guard vector code with `if asc.ascend_is_aiv():` and cube code with "
              "`if asc.ascend_is_aic():`; each sub-core has only its own memories (the AIC: L1, "
              "L0A, L0B, L0C, BT, FB; an AIV: UB)")
_PRIORITY = {int(E.XCORE_DEADLOCK): 1, int(E.XCORE_ABORTED): 2}
_XC_DEADLOCK_HINT = (
    "every cross_core_wait_flag needs a cross_core_set_flag of the same flag id on the sub-cores "
    "its mode names: mode 2 on the AIC releases one wait on each AIV of its AI Core, mode 2 on "
    "both AIVs releases one on the AIC, modes 0 and 1 are barriers every participant must set; "
    "sync_all must be reached by every sub-core it synchronises")
_IB_DEADLOCK_HINT = (
    "every ib_wait needs an ib_set with the same block_idx and event_id on the same gm_workspace "
    "(initialised to 0), and every block must call notify_next_block as often as the next block "
    "calls wait_pre_block")


def first_fault(compiled, errors: dict, lay: SubcoreLayout, output: str
                ) -> err.KernelRuntimeError:
    """The exception for the root-cause fault of a launch: an ordinary fault before a deadlock
    it caused, before waits it stopped; then the lowest (block, sub-core)."""
    key = min(errors, key=lambda k: (_PRIORITY.get(errors[k][0], 0), k))
    code, site, a, b, c, ctx, group, label = errors[key]
    fault = build(compiled, code, site, a, b, c, ctx, key[0], label, group, lay)
    fault.output = output
    return fault


def _where(block: int, label: str, lay: SubcoreLayout) -> str:
    return f", {label}" if lay.per_block > 1 or lay.kind != "vector" else ""


def _unit_name(group, u: int, lay: SubcoreLayout) -> str:
    if group is None or not 0 <= u < len(group.units):
        return f"sub-core #{u}"
    block, _, core_type, sub = group.units[u]
    return f"{SubcoreLayout.label(core_type, sub, lay.n_aiv)} of block {block}"


def _what(site, a: int) -> str:
    op = site.op if site is not None else "cross_core_wait_flag"
    if op in IB_SYNC_OPS:
        return f"{op} (GM flag word {a})" if op == "ib_wait" else op
    if op == "sync_all" or a in (X.SYNC_AIV_FLAG, X.SYNC_ALL_FLAG):
        return "sync_all"
    return f"{op}(flag {a})"


def _others(group, lay: SubcoreLayout) -> str:
    """Who is waiting on which flag and who has finished, from the group's state."""
    if group is None:
        return ""
    waiting, finished = [], []
    for u in range(len(group.units)):
        base = X.unit_base(u)
        name = _unit_name(group, u, lay)
        if group.state[base + X.U_STATE] == 1:     # blocked (also when it gave up)
            f = int(group.state[base + X.U_WFLAG])
            waiting.append(f"{name} (flag {f})" if f < X.USER_FLAGS else f"{name} (sync_all)")
        elif group.state[base + X.U_STATE] == X.U_GM_WAIT:
            waiting.append(f"{name} (a GM flag)")
        elif group.state[base + X.U_DONE]:
            finished.append(name)
    parts = []
    if waiting:
        parts.append("waiting: " + ", ".join(waiting[:8]) + (" …" if len(waiting) > 8 else ""))
    if finished:
        parts.append("finished: " + ", ".join(finished[:8]) + (" …" if len(finished) > 8
                                                               else ""))
    return "; ".join(parts)


def build(compiled, code: int, site_id: int, a: int, b: int, c: int, ctx, block: int,
          label: str, group, lay: SubcoreLayout) -> err.KernelRuntimeError:
    """The exception for one sub-core's error record."""
    site = compiled.sites[site_id] if 0 <= site_id < len(compiled.sites) else None
    loc = site.loc if site is not None else None
    op = site.op if site is not None else "?"
    core = _where(block, label, lay)
    where = f" (block {block}{core})"
    code = E(code)
    if code == E.MEMORY_NOT_ON_CORE:
        mem = Memory(a).name if a in Memory._value2member_map_ else "this memory"
        which_raw = int(ctx[abi.ERR_D]) if ctx is not None else 0
        names = [d for d in (site.detail if site else ()) if isinstance(d, str)]
        which = which_raw % 256
        what = f" {names[which]}" if which < len(names) else ""
        kind = _CORE_NAMES.get(b, "this sub-core")
        if op.startswith("matmul_") and lay.kind == "vector":
            return err.CoreMemoryError(
                f"{op}: the Matmul API needs the cube unit, but {lay.kernel_type} is a vector "
                f"kernel: its {label} (block {block}) has no {mem} and no AIC to serve its "
                f"requests (they would never be served on hardware)", loc,
                hint="a kernel using the Matmul API is MIX_AIC_1_2 by default (drop "
                     "kernel_type=) or cube-only (kernel_type=asc.KernelType.AIC_ONLY or "
                     "matmul_cube_only=True)")
        return err.CoreMemoryError(
            f"{op}{what}: {mem} is not on the {kind}: this instruction ran on the {label} of "
            f"block {block}, which has only {_CORE_MEMORIES.get(b, '?')}", loc, hint=_ROLE_HINT)
    if code == E.XCORE_FLAG_RANGE:
        return err.CrossCoreFlagIdError(
            f"{op}: cross-core flag id {a} is out of range 0..{X.USER_FLAGS - 1}{where}", loc,
            hint="Ascend 910B (A2/A3) has cross-core flags 0..10")
    if code == E.XCORE_OVERFLOW:
        return err.CrossCoreCounterError(
            f"{op}: the counter of cross-core flag {a} on the {_unit_name(group, b, lay)} "
            f"would hold more than {c} pending sets{where}: its waits do not keep up (undefined "
            f"on hardware)", loc,
            hint="let the receiver take each set (cross_core_wait_flag) before more follow, "
                 "e.g. with a flag back from the consumer that the producer waits for")
    if code == E.XCORE_MODE:
        return _mode_error(op, a, b, lay, loc, where)
    if code == E.XCORE_DEADLOCK:
        ib = op in IB_SYNC_OPS       # blocks polling a GM word, or sub-cores waiting for flags
        others = _others(group, lay)
        return err.CrossCoreDeadlockError(
            f"{_what(site, a)} on the {label} of block {block} can never be satisfied: every "
            f"{'block' if ib else 'sub-core'} of the launch has finished or is waiting"
            f"{' (' + others + ')' if others else ''}; this would hang on hardware", loc,
            hint=_IB_DEADLOCK_HINT if ib else _XC_DEADLOCK_HINT)
    if code == E.LOOP_LIMIT and op in ("cross_core_wait_flag", "sync_all") + IB_SYNC_OPS \
            and ctx is not None \
            and ctx[abi.LOOP_BUDGET] < abi.WATCHDOG_BUDGET // 2:
        return err.LoopLimitError(
            f"{op}: the launch ran longer than {abi.launch_timeout():g} s while the {label} of "
            f"block {block} waited here; the kernel looks hung", loc,
            hint=f"check that a matching cross_core_set_flag is reached; a launch that really "
                 f"needs longer can raise the limit with {abi.LAUNCH_TIMEOUT_ENV}=SECONDS "
                 f"(0: no limit)")
    if code == E.XCORE_ABORTED:
        return err.SyncError(f"{op} stopped because another sub-core faulted{where}", loc)
    return build_fault(int(code), site, a, b, c, compiled, block, ctx, core=core)


def _mode_error(op: str, mode: int, core_type: int, lay: SubcoreLayout, loc, where: str):
    mix_hint = ("launch it as a mix kernel: @asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)"
                " (one AIC and two AIVs per block)")
    if mode == -1:
        return err.CrossCoreModeError(f"{op}: this launch has no cross-core state{where}", loc)
    if mode == 1 and core_type == 1:
        msg = (f"{op}: mode 1 synchronises the two AIVs of an AI Core; the AIC cannot take "
               f"part{where}")
        hint = "use mode 2 between the AIC and its AIVs, or guard the call with " \
               "`if asc.ascend_is_aiv():`"
    elif mode == 1:
        msg = (f"{op}: mode 1 synchronises the AIVs of one AI Core, which run together only in "
               f"a mix kernel; this is a {lay.kernel_type} launch{where}")
        hint = mix_hint
    else:
        lacks = "AIC" if not lay.has_aic else "AIV"
        msg = (f"{op}: mode 2 signals between the AIC and the AIVs of one AI Core, but this "
               f"{lay.kernel_type} launch has no {lacks}{where}")
        hint = mix_hint
    return err.CrossCoreModeError(msg, loc, hint=hint)


def too_many_blocks(compiled, plan, lay: SubcoreLayout, block_dim: int, cores: int, platform
                    ) -> err.CrossCoreDeadlockError:
    """sync_all or a mode-0 flag needs every block resident at once."""
    site = compiled.sites[plan.first_global_site] if plan.first_global_site >= 0 else None
    op = site.op if site is not None else "sync_all"
    kind = "AI Cores" if lay.kind != "vector" else "vector cores"
    return err.CrossCoreDeadlockError(
        f"{op} synchronises every block of the launch, but block_dim {block_dim} exceeds the "
        f"{cores} {kind} of {platform.name}: the blocks beyond them would wait for a core that "
        f"the waiting blocks never free; this would hang on hardware",
        site.loc if site is not None else None,
        hint=f"launch at most {cores} blocks and loop over the work inside each block")


__all__ = ["first_fault", "build", "too_many_blocks"]
