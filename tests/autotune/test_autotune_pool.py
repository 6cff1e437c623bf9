"""@asc.autotune's tuning run in the local process pool: the same table and choice as the
in-process run, the same checks (a config that changes the result is an error naming it, a
failing one is skipped), and the in-process fallback when the run cannot be sent."""
import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import sweeper

from .tune_kernels import make_args, scaled_add

SIZES = [asc.Config(TILE=t, BUFS=b) for t in (256, 1024, 4096) for b in (1, 2)]


def tuned(backend, configs=SIZES, **kw):
    return asc.autotune(configs=configs, key=["n"], print_table=False, use_disk_cache=False,
                        backend=backend, workers=2, **kw)(scaled_add)


def _table(result):
    return [(r.config, r.block_dim, r.cycles, r.bottleneck, r.gm_bandwidth_gbps, r.error)
            for r in result.rows], result.best


def test_pool_and_in_process_give_the_same_table_and_choice(monkeypatch):
    used = []
    real = sweeper._run_pool
    monkeypatch.setattr(sweeper, "_run_pool", lambda *a: used.append(1) or real(*a))
    configs = SIZES + [asc.Config(TILE=100, BUFS=1)]     # fails its static_assert: skipped
    x, y, z, n = make_args(4096)
    k_pool, k_here = tuned("process", configs), tuned("inprocess", configs)
    k_pool[8](x, y, z, n)
    np.testing.assert_array_equal(z, x + y)
    assert used == [1]
    z[:] = 0
    k_here[8](x, y, z, n)
    assert used == [1]
    (pool,), (here,) = k_pool.tables.values(), k_here.tables.values()
    assert _table(pool) == _table(here)
    assert pool.rows[-1].cycles is None and "TILE must be a multiple of 64" in pool.rows[-1].error
    assert pool.best == min((r for r in here.rows if r.cycles), key=lambda r: r.cycles).config


def test_a_config_that_changes_the_result_is_an_error_in_the_pool_too():
    k = tuned("process", [asc.Config(TILE=1024, BUFS=2), asc.Config(TILE=1024, BUFS=2, SCALE=2)])
    x, y, z, n = make_args(2048)
    with pytest.raises(asc.AutotuneError, match="SCALE=2"):
        k[8](x, y, z, n)


def test_auto_uses_the_pool_from_the_threshold(monkeypatch):
    used = []
    monkeypatch.setattr(sweeper, "run_configs_in_pool",
                        lambda *a: used.append(len(a[4])) or None)   # None: run in-process
    monkeypatch.setattr(sweeper, "POOL_THRESHOLD", 6)
    x, y, z, n = make_args(4096)
    tuned("auto")[8](x, y, z, n)
    tuned("auto", SIZES[:5])[8](x, y, z, n)
    assert used == [6]
    np.testing.assert_array_equal(z, x + y)


def test_a_kernel_workers_cannot_import_runs_in_process():
    @asc.kernel
    def local_add(x: asc.GlobalAddress, z: asc.GlobalAddress, T: asc.ConstExpr[int]):
        xg = asc.GlobalTensor(); xg.set_global_buffer(x)
        zg = asc.GlobalTensor(); zg.set_global_buffer(z)
        asc.data_copy(zg, xg, T)
    k = asc.autotune(configs=[asc.Config(T=64), asc.Config(T=128)], print_table=False,
                     use_disk_cache=False, backend="process", workers=2)(local_add)
    x = np.arange(128, dtype=np.float32)
    z = np.zeros_like(x)
    with pytest.raises(asc.AutotuneError, match="T=128"):   # the check runs in-process too
        k[1](x, z)


def test_backend_is_checked():
    with pytest.raises(ValueError, match="backend"):
        asc.autotune(configs=SIZES, backend="threads")(scaled_add)
