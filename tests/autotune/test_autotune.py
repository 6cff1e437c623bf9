"""@asc.autotune: the chosen config, skipped configs, result checks, the disk cache, AUTO."""
import importlib
import sys
import textwrap

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator.config import using_platform

from .tune_kernels import make_args, scaled_add

SIZES = [asc.Config(TILE=t, BUFS=b) for t in (256, 1024, 4096) for b in (1, 2)]


def tuned(configs=SIZES, **kw):
    kw.setdefault("print_table", False)
    kw.setdefault("use_disk_cache", False)     # the disk tests use a directory of their own
    return asc.autotune(configs=configs, key=["n"], **kw)(scaled_add)


def test_chosen_config_has_the_fewest_cycles_and_is_the_one_the_model_prefers():
    k = tuned()
    x, y, z, n = make_args(8192)
    report = k[8](x, y, z, n)
    np.testing.assert_array_equal(z, x + y)
    (result,) = k.tables.values()
    # each config launched on its own gives the cycles in the table
    direct = {}
    for c in SIZES:
        zz = np.zeros_like(z)
        direct[c] = scaled_add[8](x, y, zz, n, **c.values).cycles
    assert {r.config: r.cycles for r in result.rows} == direct
    best = min(direct, key=direct.get)
    assert result.best == best and report.cycles == direct[best]
    # by hand from the model's costs: every DMA pays a fixed start-up (216 cycles GM->UB, 146
    # UB->GM), so the largest tile wins, and double buffering overlaps copy-in with the rest
    assert best == asc.Config(TILE=4096, BUFS=2)
    assert direct[asc.Config(TILE=4096, BUFS=2)] < direct[asc.Config(TILE=4096, BUFS=1)]


def test_later_launches_reuse_the_choice_without_running_the_configs(monkeypatch):
    k = tuned()
    x, y, z, n = make_args(8192)
    k[8](x, y, z, n)
    calls = []
    run = k._run_configs
    monkeypatch.setattr(k, "_run_configs", lambda *a: calls.append(a) or run(*a))
    z[:] = 0
    report = k[8](x, y, z, n)
    assert calls == [] and report.code_origin == "memory"
    np.testing.assert_array_equal(z, x + y)
    # a new key value tunes again
    x2, y2, z2, n2 = make_args(16384)
    k[8](x2, y2, z2, n2)
    assert len(calls) == 1 and len(k.tables) == 2


def test_inputs_are_restored_and_the_table_is_printed(capsys):
    k = tuned(print_table=True)
    x, y, z, n = make_args(4096)
    x0, y0 = x.copy(), y.copy()
    z[:] = 7.0
    k[8](x, y, z, n)
    out = capsys.readouterr().out
    assert "autotune scaled_add on Ascend910B2, n=4096" in out
    assert "chosen: TILE=" in out and "bottleneck" in out and "GM GB/s" in out
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(z, x + y)


def test_a_config_that_fails_is_reported_and_never_chosen():
    k = tuned(SIZES[:2] + [asc.Config(TILE=65536, BUFS=2)])
    x, y, z, n = make_args(65536)
    k[8](x, y, z, n)
    (result,) = k.tables.values()
    bad = [r for r in result.rows if r.config.values["TILE"] == 65536]
    assert bad[0].cycles is None and "BufferCapacityError" in bad[0].error
    assert result.best.values["TILE"] == 256
    assert "skipped" in str(result)


def test_a_config_that_does_not_compile_is_reported_and_never_chosen():
    k = tuned([asc.Config(TILE=100, BUFS=1), asc.Config(TILE=1024, BUFS=1)])
    x, y, z, n = make_args(4096)
    k[8](x, y, z, n)
    np.testing.assert_array_equal(z, x + y)
    (result,) = k.tables.values()
    bad, good = result.rows
    assert bad.cycles is None and "TILE must be a multiple of 64" in bad.error
    assert result.best == good.config


def test_every_config_failing_is_an_error_naming_them():
    k = tuned([asc.Config(TILE=65536, BUFS=2), asc.Config(TILE=131072, BUFS=1)])
    x, y, z, n = make_args(131072)
    with pytest.raises(asc.AutotuneError, match="every config failed") as err:
        k[8](x, y, z, n)
    assert "TILE=65536, BUFS=2" in str(err.value) and "TILE=131072, BUFS=1" in str(err.value)


def test_a_config_that_changes_the_result_is_an_error_naming_it():
    k = tuned([asc.Config(TILE=1024, BUFS=2), asc.Config(TILE=1024, BUFS=2, SCALE=2)])
    x, y, z, n = make_args(4096)
    with pytest.raises(asc.AutotuneError, match="TILE=1024, BUFS=2, SCALE=2 writes different "
                                                "values to 'z'"):
        k[8](x, y, z, n)


def test_choice_is_cached_on_disk_per_platform(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCENDC_PY_CACHE_DIR", str(tmp_path))
    x, y, z, n = make_args(8192)
    first = tuned(use_disk_cache=True)
    first[8](x, y, z, n)
    assert len(list((tmp_path / "autotune").glob("*.json"))) == 1
    second = tuned(use_disk_cache=True)    # a new process would build a new Autotuner like this
    runs = []
    orig = second._run_configs
    monkeypatch.setattr(second, "_run_configs", lambda *a: runs.append(1) or orig(*a))
    second[8](x, y, z, n)
    assert runs == []
    (result,) = second.tables.values()
    assert result.origin == "disk" and result.best == asc.Config(TILE=4096, BUFS=2)
    assert [r.cycles for r in result.rows] == [r.cycles for r in
                                                next(iter(first.tables.values())).rows]
    with using_platform("Ascend910B4"):
        second[8](x, y, z, n)
    assert runs == [1]             # another platform tunes again
    assert len(list((tmp_path / "autotune").glob("*.json"))) == 2


def _scale_by(factor):
    def hook(args):
        args["SCALE"] = factor
    return hook


def test_the_disk_cache_keeps_apart_tuners_that_differ_in_hooks_or_tolerance(tmp_path,
                                                                          monkeypatch):
    """Regression: the disk key held the kernel, configs, key and platform only, so a second
    autotuner of the same kernel whose pre_hook (here: one that makes the kernel compute
    something else), a Config's pre_hook, prune_configs_by or tolerance differed reused the
    first one's choice without running a config."""
    monkeypatch.setenv("ASCENDC_PY_CACHE_DIR", str(tmp_path))
    x, y, z, n = make_args(8192)

    def runs_of(tuner):
        runs = []
        orig = tuner._run_configs
        monkeypatch.setattr(tuner, "_run_configs", lambda *a: runs.append(1) or orig(*a))
        tuner[8](x, y, z, n)
        return runs

    assert runs_of(tuned(use_disk_cache=True, pre_hook=_scale_by(1))) == [1]
    # the same hook code with the same captured value, as in a new process: from disk
    assert runs_of(tuned(use_disk_cache=True, pre_hook=_scale_by(1))) == []
    doubled = tuned(use_disk_cache=True, pre_hook=_scale_by(2))
    assert runs_of(doubled) == [1]
    np.testing.assert_array_equal(z, 2 * (x + y))
    assert runs_of(tuned(use_disk_cache=True, pre_hook=_scale_by(1), rtol=0.5)) == [1]
    with_config_hooks = [asc.Config(pre_hook=_scale_by(2), **c.values) for c in SIZES]
    assert runs_of(tuned(with_config_hooks, use_disk_cache=True, pre_hook=_scale_by(1))) == [1]
    pruned = tuned(use_disk_cache=True, pre_hook=_scale_by(1),
                   prune_configs_by={"perf_model": lambda **kw: -kw["TILE"], "top_k": 2})
    assert runs_of(pruned) == [1]
    assert len(list((tmp_path / "autotune").glob("*.json"))) == 5


KERNEL_SRC = '''
import ascendc_py as asc

@asc.autotune(configs=[asc.Config(TILE=256), asc.Config(TILE=1024)], key=["n"],
              print_table=False)
@asc.kernel
def k(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, TILE * 4)
    t = buf.get(x.dtype)
    for i in range(n // TILE):
        asc.data_copy(t, xg[i * TILE:], TILE)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.{op}(t, t, 2.0, TILE)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(zg[i * TILE:], t, TILE)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
'''


def test_editing_the_kernel_tunes_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCENDC_PY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    src = tmp_path / "edited_kernel_mod.py"
    src.write_text(textwrap.dedent(KERNEL_SRC.replace("{op}", "muls")))
    mod = importlib.import_module("edited_kernel_mod")
    x = np.arange(4096, dtype=np.float32)
    z = np.zeros_like(x)
    mod.k[1](x, z, 4096)
    np.testing.assert_array_equal(z, 2 * x)
    again = importlib.reload(mod)          # the same source: found on disk
    again.k[1](x, z, 4096)
    assert next(iter(again.k.tables.values())).origin == "disk"
    src.write_text(textwrap.dedent(KERNEL_SRC.replace("{op}", "adds")))
    edited = importlib.reload(mod)
    edited.k[1](x, z, 4096)
    assert next(iter(edited.k.tables.values())).origin == "tuned"
    np.testing.assert_array_equal(z, x + 2)
    assert len(list((tmp_path / "cache" / "autotune").glob("*.json"))) == 2
    sys.modules.pop("edited_kernel_mod", None)


def test_auto_launch_takes_block_dim_from_the_config():
    configs = [asc.Config(TILE=1024, BUFS=2, block_dim=b) for b in (1, 2, 4, 8)]
    k = tuned(configs)
    x, y, z, n = make_args(1024)     # 8 blocks of 1024: block_dim 8 covers it all
    # the kernel reads n per block, so each config covers a different range: only block
    # counts that write the same thing are valid configs; here they are not
    with pytest.raises(asc.AutotuneError, match="writes different values"):
        k[asc.AUTO](x, y, z, n)


def test_auto_launch_chooses_block_dim():
    @asc.autotune(configs=[asc.Config(TILE=256, block_dim=b) for b in (1, 2, 4)], key=["n"],
                  print_table=False, use_disk_cache=False)
    @asc.kernel
    def split(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
        share = n // asc.get_block_num()
        start = asc.get_block_idx() * share
        xg = asc.GlobalTensor(); xg.set_global_buffer(x + start, share)
        zg = asc.GlobalTensor(); zg.set_global_buffer(z + start, share)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, TILE * 4)
        t = buf.get(x.dtype)
        for i in range(share // TILE):
            asc.data_copy(t, xg[i * TILE:], TILE)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.adds(t, t, 1.0, TILE)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(zg[i * TILE:], t, TILE)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)

    x = np.arange(4096, dtype=np.float32)
    z = np.zeros_like(x)
    report = split[asc.AUTO](x, z, 4096)
    np.testing.assert_array_equal(z, x + 1)
    (result,) = split.tables.values()
    assert result.best.block_dim == 4 and report.block_dim == 4
    assert [r.block_dim for r in result.rows] == [1, 2, 4]


def test_auto_without_block_dim_in_a_config_is_an_error():
    k = tuned()
    x, y, z, n = make_args(1024)
    with pytest.raises(asc.KernelLaunchError, match="carries no block_dim"):
        k[asc.AUTO](x, y, z, n)


def test_passing_a_tuned_parameter_is_an_error():
    k = tuned()
    x, y, z, n = make_args(1024)
    with pytest.raises(asc.KernelLaunchError, match="'TILE' is chosen by autotune"):
        k[8](x, y, z, n, TILE=256)


def test_prune_configs_by_perf_model_and_top_k():
    seen = []

    def model(x, y, z, n, TILE, BUFS, SCALE):
        seen.append((n, TILE, BUFS))
        return -TILE - BUFS        # prefers large tiles

    def early(configs, named_args):
        return [c for c in configs if c.values["BUFS"] == 2]

    k = tuned(prune_configs_by={"perf_model": model, "top_k": 2, "early_config_prune": early})
    x, y, z, n = make_args(4096)
    k[8](x, y, z, n)
    (result,) = k.tables.values()
    assert [r.config for r in result.rows] == [asc.Config(TILE=1024, BUFS=2),
                                               asc.Config(TILE=4096, BUFS=2)]
    assert len(seen) == 3
    with pytest.raises(ValueError, match="unknown entries"):
        tuned(prune_configs_by={"warmup": 1})


def test_config_errors_at_decoration():
    with pytest.raises(ValueError, match="not a parameter"):
        tuned([asc.Config(TILES=4)])
    with pytest.raises(ValueError, match="key 'm'"):
        asc.autotune(configs=SIZES, key=["m"])(scaled_add)
    with pytest.raises(ValueError, match="gives no value for 'BUFS'"):
        tuned([asc.Config(TILE=256, BUFS=1), asc.Config(TILE=512)])
    assert asc.Config(TILE=1, BUFS=2) == asc.Config({"BUFS": 2, "TILE": 1})
    assert repr(asc.Config(TILE=1, block_dim=4)) == "Config(TILE=1, block_dim=4)"


def test_a_repeated_launch_skips_binding_and_choosing(monkeypatch):
    k = tuned()
    x, y, z, n = make_args(8192)
    k[8](x, y, z, n)
    chosen = []
    monkeypatch.setattr(k, "choose", lambda *a: chosen.append(a) or (_ for _ in ()).throw(
        AssertionError("choose called")))
    z[:] = 0
    assert k[8](x, y, z, n).cycles == min(r.cycles for r in next(iter(k.tables.values())).rows)
    np.testing.assert_array_equal(z, x + y)
    with using_platform("Ascend910B4"), pytest.raises(AssertionError, match="choose called"):
        k[8](x, y, z, n)          # another platform: the choice is looked up again
    with pytest.raises(AssertionError, match="choose called"):
        k[8](x, y, z, 4096)       # another key value
