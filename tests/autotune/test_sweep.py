"""asc.sweep: rows over configs x shapes x platforms, the roofline figures, the plot, and the
process-pool and Ray backends giving the in-process table."""
import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import sweeper as sweep_mod

from .tune_kernels import make_args, scaled_add

CONFIGS = [asc.Config(TILE=t, BUFS=b) for t in (1024, 4096) for b in (1, 2)]


def run(backend, **kw):
    return asc.sweep(scaled_add, CONFIGS, args=make_args, shapes=[4096, 8192], block_dim=8,
                     platforms=["Ascend910B2", "Ascend910B4"], backend=backend,
                     progress=False, **kw)


def test_rows_cover_the_grid_and_match_direct_launches():
    res = run("inprocess")
    rows = res.records
    assert len(rows) == 2 * 2 * 4
    assert [(r["shape"], r["platform"], r["config"]) for r in rows[:5]] == [
        (4096, "Ascend910B2", "TILE=1024, BUFS=1"), (4096, "Ascend910B2", "TILE=1024, BUFS=2"),
        (4096, "Ascend910B2", "TILE=4096, BUFS=1"), (4096, "Ascend910B2", "TILE=4096, BUFS=2"),
        (4096, "Ascend910B4", "TILE=1024, BUFS=1")]
    x, y, z, n = make_args(8192)
    direct = scaled_add[8](x, y, z, n, TILE=4096, BUFS=2, platform="Ascend910B4")
    row = next(r for r in rows if r["shape"] == 8192 and r["platform"] == "Ascend910B4"
               and r["config"] == "TILE=4096, BUFS=2")
    assert row["cycles"] == direct.cycles and row["bottleneck"] == direct.bottleneck
    assert row["TILE"] == 4096 and row["BUFS"] == 2 and row["block_dim"] == 8
    assert row["gm_bytes"] == 3 * 8 * 8192 * 4
    # memory bound: the roofline is the GM bytes at the chip's HBM bandwidth
    chip = asc.get_platform("Ascend910B4")
    assert row["bound"] == "memory"
    assert row["roofline_cycles"] == pytest.approx(row["gm_bytes"] / (chip.hbm_gbps * 1e9) *
                                                   chip.clock_mhz * 1e6)
    assert 0 < row["roofline_fraction"] < 1
    best = {(r["shape"], r["platform"]): r["config"] for r in res.best()}
    assert best[(8192, "Ascend910B2")] == "TILE=4096, BUFS=2"
    assert "TILE=4096, BUFS=2" in res.table()


def test_failed_configs_are_rows_with_the_reason():
    res = asc.sweep(scaled_add, [asc.Config(TILE=1024, BUFS=2), asc.Config(TILE=65536, BUFS=2)],
                    args=make_args(65536), block_dim=8, backend="inprocess", progress=False)
    ok, bad = res.records
    assert ok["cycles"] > 0 and ok["error"] == ""
    assert bad["cycles"] is None and "BufferCapacityError" in bad["error"]
    assert "failed" in res.table()


def test_rows_are_records_without_pandas_and_a_frame_with_it():
    res = asc.sweep(scaled_add, CONFIGS[:1], args=make_args(1024), block_dim=8,
                    backend="inprocess", progress=False)
    try:
        import pandas
    except ImportError:
        assert res.rows == res.records
    else:
        assert isinstance(res.rows, pandas.DataFrame) and len(res.rows) == 1


def test_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    res = run("inprocess")
    path = res.plot(tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").stat().st_size > 10_000 and path.endswith("sweep.png")


def test_process_pool_gives_the_in_process_table():
    local = run("inprocess").records
    pooled = run("process", workers=2).records
    assert pooled == local
    again = run("process", workers=2).records      # the same pool, warm workers
    assert again == local


def test_ray_gives_the_in_process_table():
    ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install "
                                            "'ascendc_py[ray]')")
    local = run("inprocess").records
    try:
        remote = run("ray").records
    finally:
        ray.shutdown()
    assert remote == local


def test_a_kernel_defined_in_a_function_runs_in_process_with_a_warning():
    @asc.kernel
    def local_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
                   TILE: asc.ConstExpr[int]):
        xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
        zg = asc.GlobalTensor(); zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, TILE * 4)
        t = buf.get(x.dtype)
        for i in range(n // TILE):
            asc.data_copy(t, xg[i * TILE:], TILE)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(zg[i * TILE:], t, TILE)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)

    x = np.arange(2048, dtype=np.float32)
    with pytest.warns(UserWarning, match="running in-process"):
        res = asc.sweep(local_copy, [asc.Config(TILE=256), asc.Config(TILE=1024)],
                        args=(x, np.zeros_like(x), 2048), block_dim=1, backend="process",
                        progress=False)
    assert [r["cycles"] > 0 for r in res.records] == [True, True]


def test_auto_backend_uses_the_pool_for_large_sweeps(monkeypatch):
    used = []
    monkeypatch.setattr(sweep_mod, "_run_pool", lambda job, tasks, w, bar: used.append(
        len(tasks)) or [job.run(t) for t in tasks])
    monkeypatch.setattr(sweep_mod, "POOL_THRESHOLD", 4)
    asc.sweep(scaled_add, CONFIGS, args=make_args(4096), block_dim=8, progress=False,
              workers=2)
    asc.sweep(scaled_add, CONFIGS[:2], args=make_args(4096), block_dim=8, progress=False,
              workers=2)
    assert used == [4]


def test_progress_prints_plain_lines_when_not_a_terminal(capsys, monkeypatch):
    monkeypatch.setenv("ASCENDC_PY_PROGRESS", "1")
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)      # not installed
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)
    asc.sweep(scaled_add, CONFIGS, args=make_args(4096), block_dim=8, backend="inprocess")
    err = capsys.readouterr().err
    assert "sweep scaled_add: 4/4 configs, best" in err


def test_progress_uses_tqdm_when_installed(monkeypatch):
    import sys
    import types
    made = []

    class FakeBar:
        def __init__(self, total, desc, **kw):
            self.total, self.desc, self.n, self.postfix, self.closed = total, desc, 0, "", False
            made.append(self)

        def set_postfix_str(self, text, refresh=True):
            self.postfix = text

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    monkeypatch.setenv("ASCENDC_PY_PROGRESS", "1")
    res = asc.sweep(scaled_add, CONFIGS, args=make_args(4096), block_dim=8, backend="inprocess")
    (bar,) = made
    best = min(r["cycles"] for r in res.records)
    assert (bar.total, bar.n, bar.closed) == (4, 4, True)
    assert bar.desc == "sweep scaled_add" and bar.postfix == f"best {best:,} cycles"


def test_a_config_without_block_dim_and_no_block_dim_given_is_an_error():
    with pytest.raises(ValueError, match="carries no block_dim"):
        asc.sweep(scaled_add, CONFIGS, args=make_args(4096), backend="inprocess")
