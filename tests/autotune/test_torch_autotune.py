"""The torch bridge and autotune: a user's custom_op launching an autotuned kernel, and the
shipped element-wise ops with tiles autotuned at run time (ASCENDC_PY_TORCH_AUTOTUNE=1)
giving the same bits (the shipped table: test_tiling_table.py)."""
import pytest

torch = pytest.importorskip("torch")
from torch import Tensor  # noqa: E402

import ascendc_py as asc  # noqa: E402
from ascendc_py import torch_bridge as tb  # noqa: E402
from ascendc_py.torch_bridge import autotiling, ops  # noqa: E402
from ascendc_py.torch_bridge import kernels as K  # noqa: E402

tuned_add = asc.autotune(configs=[asc.Config(TILE=t) for t in (1024, 4096, 8192)],
                         key=["total"], print_table=False, use_disk_cache=False)(K.add_kernel)


def _launch(x: Tensor, y: Tensor, *, out: Tensor):
    t = tb.elementwise_tiling(x.numel(), x.dtype, K.ADD_UB_TILES)
    return tuned_add[t.block_dim](x, y, out, x.numel(), t.share)


my_add = tb.custom_op("autotune_tests::add", _launch, shape_rule=tb.same_shape(),
                      kernel=tuned_add)


def test_custom_op_takes_an_autotuned_kernel():
    x = torch.rand(300_000)
    y = torch.rand(300_000)
    assert torch.equal(my_add(x, y), x + y)
    assert my_add.kernels == (tuned_add,)
    (result,) = tuned_add.tables.values()
    assert [r.config.values["TILE"] for r in result.rows] == [1024, 4096, 8192]
    assert result.best.values["TILE"] == min(result.rows, key=lambda r: r.cycles).config \
        .values["TILE"]
    assert torch.equal(torch.ops.autotune_tests.add(x, y), x + y)
    assert len(tuned_add.tables) == 1          # the same key: no second tuning


def test_shipped_ops_use_the_plain_tiling_by_default(monkeypatch):
    monkeypatch.delenv(autotiling.ENV_VAR, raising=False)
    autotiling.set_enabled(None)
    assert ops._on(K.add_kernel, 4) is K.add_kernel[4]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_shipped_ops_with_autotuned_tiles_give_the_same_bits(dtype, monkeypatch):
    x = torch.randn(2, 3, 96, 96).to(dtype)
    y = torch.randn(2, 3, 96, 96).to(dtype)
    plain = (ops.add(x, y), ops.leaky_relu(x, 0.1), ops.sepia(x), ops.swiglu(x, y))
    monkeypatch.setattr(autotiling, "_tuners", {})
    monkeypatch.setenv(autotiling.ENV_VAR, "1")
    tuned = (ops.add(x, y), ops.leaky_relu(x, 0.1), ops.sepia(x), ops.swiglu(x, y))
    for a, b in zip(plain, tuned):
        assert torch.equal(a.view(torch.int16 if dtype == torch.float16 else torch.int32),
                           b.view(torch.int16 if dtype == torch.float16 else torch.int32))
    (tuner,) = [t for (k, _), t in autotiling._tuners.items() if k is K.add_kernel]
    result = next(iter(tuner.tables.values()))
    assert len(result.rows) == 3
    assert result.rows and all(r.cycles for r in result.rows)
    assert min(r.cycles for r in result.rows) == next(
        r.cycles for r in result.rows if r.config == result.best)
    n_tables = len(tuner.tables)
    ops.add(x[:1], y[:1])         # half the elements: another size class, tuned once more
    ops.add(x, y)                 # the first class again: no tuning
    assert len(tuner.tables) == n_tables + 1


def test_candidates():
    assert autotiling.candidates(8192) == [8192, 4096, 2048]
    assert autotiling.candidates(512) == [512, 256]
