"""The shipped ops' tilings come from the shipped table of autotuned choices
(``torch_bridge/tiling_table.py``): complete for its platforms, used by default without a
tuning run, and what ``asc.autotune`` picks now for the classes re-tuned here (so the table
cannot go stale silently: ``python -m ascendc_py.torch_bridge.tune_tilings`` regenerates it)."""
import pytest

torch = pytest.importorskip("torch")

from ascendc_py import autotuner  # noqa: E402
from ascendc_py.simulator import config  # noqa: E402
from ascendc_py.torch_bridge import autotiling as AT  # noqa: E402
from ascendc_py.torch_bridge import cube_kernels as CK  # noqa: E402
from ascendc_py.torch_bridge import kernels as K  # noqa: E402
from ascendc_py.torch_bridge import ops, tune_tilings  # noqa: E402
from ascendc_py.torch_bridge.tiling_table import TABLE  # noqa: E402

PLATFORM = "Ascend910B2"
#: (m, n, k) of a cheap float32 FFN class whose shipped base is a fixed one, not (0, 0)
FFN_SHAPE = (3, 3000, 100)


@pytest.fixture()
def no_disk_choices(monkeypatch):
    """Autotune without the disk cache of choices: every tuning run runs its configs."""
    monkeypatch.setattr(autotuner.Autotuner, "_disk_path", lambda self, key, chip: None)
    monkeypatch.setattr(AT, "_tuners", {})


def test_the_table_covers_every_class_of_the_default_platform():
    entry = TABLE[PLATFORM]
    want = {f"{k}/{AT.dtype_name(dt)}/{c}" for k in tune_tilings.elementwise_calls()
            for dt in tune_tilings.ELEMENTWISE_DTYPES for c in tune_tilings.ELEMENTWISE_CLASSES}
    assert set(entry["elementwise"]) == want
    cube = {f"{dt.itemsize}/{a}/{b}/{c}" for dt in tune_tilings.CUBE_DTYPES
            for a, b, c in tune_tilings.cube_classes()}
    assert set(entry["linear"]) == cube
    ffn = {f"{dt.itemsize}/{a}/{b}/{c}" for dt in tune_tilings.CUBE_DTYPES
           for a, b, c in tune_tilings.ffn_classes()}
    assert set(entry["ffn"]) == ffn
    for key, tile in entry["elementwise"].items():
        assert tile % 256 == 0 and tile >= 256, key
    assert all(tuple(v) in AT.LINEAR_CANDIDATES for v in entry["linear"].values())
    assert all(tuple(v) in AT.FFN_CANDIDATES for v in entry["ffn"].values())


@pytest.mark.parametrize("kernel,dtype,cls", [("add_kernel", torch.float32, 21),
                                              ("color_matrix_kernel", torch.float16, 17),
                                              ("swiglu_backward_kernel", torch.float32, 12)])
def test_shipped_elementwise_tile_is_what_autotune_picks_now(kernel, dtype, cls,
                                                             no_disk_choices):
    shipped = TABLE[PLATFORM]["elementwise"][f"{kernel}/{AT.dtype_name(dtype)}/{cls}"]
    assert tune_tilings.tune_elementwise(kernel, dtype, cls) == shipped


@pytest.mark.parametrize("dtype,cls", [(torch.float16, (1, 2, 1)), (torch.float32, (3, 1, 0))])
def test_shipped_linear_tiles_are_what_autotune_picks_now(dtype, cls, no_disk_choices):
    key = f"{dtype.itemsize}/{cls[0]}/{cls[1]}/{cls[2]}"
    assert tune_tilings.tune_linear(dtype, cls) == tuple(TABLE[PLATFORM]["linear"][key])


def test_shipped_ffn_base_is_what_autotune_picks_now(no_disk_choices):
    cls = AT.ffn_class(*FFN_SHAPE)
    assert tune_tilings.tune_ffn(torch.float32, tuple(map(int, cls.split("/")))) == \
        tuple(TABLE[PLATFORM]["ffn"][f"4/{cls}"])


def test_the_ffn_with_the_table_writes_the_bits_of_the_helpers_fit(monkeypatch):
    """The table's base shape changes the cycles, never the result: the same bits as the
    tiling helper's own fit (the untuned default, here on a platform the table does not
    name) on a shape of the class that was not tuned."""
    m, n, k = 2, 2497, 130
    assert AT.ffn_class(m, n, k) == AT.ffn_class(*FFN_SHAPE)
    assert AT.ffn_base(m, n, k, CK.host_type(torch.float32), 4) != (0, 0)
    x, wg, wu = tune_tilings._ffn_inputs(m, n, k, torch.float32)
    y = ops.swiglu_ffn(x, wg, wu)
    tuned = ops.swiglu_ffn.last_reports[-1].cycles
    monkeypatch.setitem(TABLE, PLATFORM, {**TABLE[PLATFORM], "ffn": {}})
    monkeypatch.setattr(AT, "_shipped", [None, None, {}])
    assert AT.ffn_base(m, n, k, CK.host_type(torch.float32), 4) == (0, 0)
    y0 = ops.swiglu_ffn(x, wg, wu)
    assert torch.equal(y.view(torch.uint8), y0.view(torch.uint8))
    assert tuned < ops.swiglu_ffn.last_reports[-1].cycles       # (8,780 vs 8,863)


def test_an_ffn_base_the_helper_gives_other_k_steps_falls_back_to_its_fit(monkeypatch):
    real = CK.swiglu_ffn_tiling

    def other_k_steps(m, n, k, in_type, base=None):
        t = real(m, n, k, in_type, base)
        if base is not None:
            t.base_k *= 2
        return t
    monkeypatch.setattr(CK, "swiglu_ffn_tiling", other_k_steps)
    monkeypatch.setattr(AT, "_shipped", [None, None, {}])
    assert AT.ffn_base(*FFN_SHAPE, CK.host_type(torch.float32), 4) == (0, 0)
    with pytest.raises(ValueError, match="changes the K steps"):
        CK.ffn_tiling(*FFN_SHAPE, CK.host_type(torch.float32), (16, 32))
    own = real(*FFN_SHAPE, CK.host_type(torch.float32))
    kept = CK.ffn_tiling(*FFN_SHAPE, CK.host_type(torch.float32), (16, 32), keep_split=True)
    assert (kept.base_m, kept.base_n, kept.base_k) == (own.base_m, own.base_n, own.base_k)


def test_an_ffn_base_that_changes_the_helpers_split_runs_its_fit_instead():
    m, n, k = 3, 2000, 200                   # class 0/3/1, whose base 16 x 32 splits it anew
    ft = CK.host_type(torch.float32)
    base = tuple(TABLE[PLATFORM]["ffn"][f"4/{AT.ffn_class(m, n, k)}"])
    assert base != (0, 0) and not CK.ffn_keeps_split(m, n, k, ft, base)
    assert AT.ffn_base(m, n, k, ft, 4) == (0, 0)
    own, kept = CK.swiglu_ffn_tiling(m, n, k, ft), CK.ffn_tiling(m, n, k, ft, base, True)
    assert (kept.base_m, kept.base_n, kept.used_core_num) == \
        (own.base_m, own.base_n, own.used_core_num)
    assert AT.ffn_blocks(m, n, k, ft, True)({"BASE_M": base[0], "BASE_N": base[1]}) == \
        -(-own.used_core_num // 2)


def test_ops_use_the_table_without_a_tuning_run(monkeypatch):
    monkeypatch.delenv(AT.ENV_VAR, raising=False)
    AT.set_enabled(None)
    monkeypatch.setattr(autotuner.Autotuner, "_run_configs",
                        lambda *a: pytest.fail("a shipped op ran a tuning run"))
    entry = TABLE[PLATFORM]
    n = 3 << 18                                                # size class 20
    t = AT.elementwise(K.add_kernel, n, torch.float32, K.ADD_UB_TILES)
    assert t.tile == entry["elementwise"]["add_kernel/float32/20"]
    x, y = torch.rand(n), torch.rand(n)
    assert torch.equal(ops.add(x, y), x + y)
    m, nn, k = 64, 1024, 512                                  # class 1/2/1
    assert AT.linear_tiles(m, nn, k, 2)[:2] == tuple(entry["linear"]["2/1/2/1"])
    xs = torch.rand(m, k).half()
    w = torch.rand(nn, k).half()
    ops.linear(xs, w, torch.zeros(nn).half())
    (report,) = ops.linear.last_reports
    tm, tn = entry["linear"]["2/1/2/1"]
    assert report.block_dim == -(-m // tm) * -(-nn // tn)
    m, nn, k = FFN_SHAPE                                      # an FFN class with a fixed base
    base = tuple(entry["ffn"][f"4/{AT.ffn_class(m, nn, k)}"])
    assert base != (0, 0) and AT.ffn_base(m, nn, k, CK.host_type(torch.float32), 4) == base
    x, wg, wu = tune_tilings._ffn_inputs(m, nn, k, torch.float32)
    ops.swiglu_ffn(x, wg, wu)
    (report,) = ops.swiglu_ffn.last_reports
    tiling = CK.swiglu_ffn_tiling(m, nn, k, CK.host_type(torch.float32), base)
    assert (tiling.base_m, tiling.base_n) == base
    assert report.block_dim == -(-tiling.used_core_num // 2)


def test_another_platform_or_a_modified_one_keeps_the_defaults():
    from ascendc_py.torch_bridge.cube_kernels import LINEAR_TILES
    from ascendc_py.torch_bridge.custom_op import elementwise_tiling
    chip = config.get_platform(PLATFORM).replace(clock_mhz=1000)
    with config.using_platform(chip):
        assert AT.shipped() is None
        assert AT.linear_tiles(64, 1024, 512, 2) == LINEAR_TILES[2]
        n = 3 << 18
        assert AT.elementwise(K.add_kernel, n, torch.float32, K.ADD_UB_TILES) == \
            elementwise_tiling(n, torch.float32, K.ADD_UB_TILES)
    assert AT.shipped() is TABLE[PLATFORM]


def test_run_time_tuning_of_linear_and_the_ffn_gives_the_default_results(monkeypatch,
                                                                         no_disk_choices):
    x = torch.rand(40, 72)
    w = torch.rand(90, 72)
    b = torch.rand(90)
    wg, wu = torch.rand(72, 50), torch.rand(72, 50)
    plain = ops.linear(x, w, b), ops.swiglu_ffn(x, wg, wu)
    monkeypatch.setenv(AT.ENV_VAR, "1")
    tuned = ops.linear(x, w, b), ops.swiglu_ffn(x, wg, wu)
    assert torch.equal(plain[0], tuned[0])
    torch.testing.assert_close(plain[1], tuned[1], rtol=1e-5, atol=1e-6)
    (lin,) = AT._tuners[("linear", 4)].tables.values()
    assert len(lin.rows) == len(AT.linear_configs(4)) and lin.best is not None
    (ffn,) = AT._tuners["swiglu_ffn"].tables.values()
    assert ffn.best is not None and ffn.rows[0].config.values == {"BASE_M": 0, "BASE_N": 0}


def test_pick_minimises_the_worst_ratio_and_ties_keep_the_default():
    from ascendc_py.autotuner import Config, TuneResult, TuneRow
    a, b, c = Config(T=1), Config(T=2), Config(T=3)

    def table(*cycles):
        return TuneResult("k", PLATFORM, (), rows=[TuneRow(cfg, 1, cy)
                                                   for cfg, cy in zip((a, b, c), cycles)])
    # b is best on the first shape but 50 % worse on the second: a (at worst 25 % off) wins
    assert tune_tilings.pick([table(100, 80, 90), table(100, 150, 140)]) == a
    assert tune_tilings.pick([table(100, 80, 85), table(100, 150, 93)]) == c
    assert tune_tilings.pick([table(100, 100, 100)]) == a            # a tie: the default
    assert tune_tilings.pick([table(100, None, 90), table(100, 50, 95)]) == c   # b failed once


def test_a_size_that_is_not_an_int_is_looked_up_without_being_remembered():
    class Size(int):                 # like a symbolic size: an int that is not hashable
        __hash__ = None
    n = 3 << 18
    want = AT.elementwise(K.add_kernel, n, torch.float32, K.ADD_UB_TILES)
    assert AT.elementwise(K.add_kernel, Size(n), torch.float32, K.ADD_UB_TILES).tile == want.tile
