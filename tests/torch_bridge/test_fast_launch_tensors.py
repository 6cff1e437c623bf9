"""CPU torch tensors on the native binder's fast path (simulator/fast_launch.py, issue 14): a
launch with tensors binds their numpy views natively, gives the same bits and report as the
usual path and as the same launch with numpy arrays, bumps the autograd version of every
tensor the kernel may write (also when it faults) and of no other; every tensor the fast path
does not take (one that requires grad, a subclass, a strided or empty one, a negative or
conjugate view) goes the usual way with the usual result or error."""
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import ascendc_py as asc  # noqa: E402
from ascendc_py.simulator import block_runner, fast_launch  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "simulator"))
import test_fast_launch as FL  # noqa: E402
from test_fast_launch import TILE, _report_fields, scale_kernel  # noqa: E402

#: test_fast_launch's fixtures: one host thread unless a test asks for the pool (autouse);
#: the launches FastLaunch.run served (True) or refused (False)
_one_host_thread, taken = FL._one_host_thread, FL.taken

pytestmark = pytest.mark.filterwarnings("ignore::ascendc_py.TruncatedCopyWarning")


def _scale(blocks, x, z, n, alpha=2.0, negate=False):
    return scale_kernel[blocks](x, z, n, alpha, negate, TILE)


@pytest.mark.parametrize("pool", [False, True], ids=["alone", "pool"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("blocks,n", [(1, 1000), (2, 4096), (8, 3001), (3, 17)])
def test_tensor_launches_take_the_fast_path_with_the_usual_bits_report_and_versions(
        dtype, blocks, n, pool, taken, monkeypatch):
    if pool:
        monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 0.0)
    x = torch.from_numpy(np.random.default_rng(n).standard_normal(n + 5).astype(
        np.float32)).to(dtype)
    got = {}
    for path, enabled, as_numpy in (("usual", False, False), ("fast", True, False),
                                    ("numpy", True, True)):
        monkeypatch.setattr(fast_launch, "ENABLED", enabled)
        z = torch.full_like(x, 7)
        for alpha, negate in ((1.5, False), (-0.25, True), (3.0, True)):
            versions = (x._version, z._version)
            args = (x.numpy(), z.numpy()) if as_numpy else (x, z)
            report = _scale(blocks, *args, n, alpha, negate)
            if not as_numpy:
                assert (x._version, z._version) == (versions[0], versions[1] + 1), path
        got[path] = (z.numpy().tobytes(), _report_fields(report))
        if path != "usual":
            assert taken and all(taken[-2:]), (path, taken)
    assert got["fast"] == got["usual"] == got["numpy"]


def test_a_fault_on_the_fast_path_still_bumps_what_the_kernel_may_have_written(taken):
    x, z = torch.arange(1024, dtype=torch.float32), torch.zeros(1024)
    for _ in range(3):
        _scale(4, x, z, 1024)
    assert taken[-1] is True
    z.zero_()
    before = (x._version, z._version)
    with pytest.raises(asc.KernelError) as fast:
        _scale(4, x, z, 4096)                       # n past the tensors: block 1 faults
    assert taken[-1] is True
    assert (x._version, z._version) == (before[0], before[1] + 1)
    assert torch.equal(z[:256], x[:256] * 2)        # (block 0 wrote its share first)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_launch, "ENABLED", False)
        with pytest.raises(asc.KernelError) as usual:
            _scale(4, x, torch.zeros(1024), 4096)
    assert str(fast.value) == str(usual.value)


def test_tensors_the_fast_path_does_not_take_go_the_usual_way(taken):
    x, z = torch.arange(1024, dtype=torch.float32), torch.zeros(1024)
    for _ in range(3):
        _scale(2, x, z, 1024)
    assert taken[-1] is True

    def usual(*args, n=1024):
        taken.clear()
        report = _scale(2, *args, n)
        assert taken == [False], taken
        return report

    w = torch.zeros(1024, requires_grad=True)         # requires grad: numpy() refuses it
    _scale(2, x, w.detach(), 1024)                    # (its plain view: served)
    assert taken[-1] is True
    with pytest.raises(asc.KernelError, match="requires grad"):
        usual(x, w)
    with torch.no_grad():                             # an optimizer-style in-place update
        v = w._version
        usual(x, w)
    assert torch.equal(w.detach(), x * 2) and w._version > v
    p = torch.nn.Parameter(torch.arange(1024, dtype=torch.float32), requires_grad=False)
    z.zero_()
    usual(p, z)                                       # a subclass of Tensor
    assert torch.equal(z, x * 2)
    strided = torch.zeros(2048)[::2]
    with pytest.raises(asc.KernelError, match="not contiguous"):
        usual(x, strided)
    neg = torch._neg_view(x)      # the negative bit set (as on a conjugate's imaginary part)
    assert neg.is_neg() and neg.is_contiguous()
    z.zero_()
    with pytest.raises(asc.UnsupportedArrayError, match=r"'x' is a lazily negated view"):
        usual(neg, z)                                 # (computed from x's memory before)
    assert not z.any()
    _scale(2, neg.resolve_neg(), z, 1024)
    assert torch.equal(z, -x * 2)
    z.zero_()
    report = _scale(2, x.numpy(), z, 1024)            # an array where a tensor was
    assert torch.equal(z, x * 2) and report.cycles > 0


def test_an_array_launch_and_a_tensor_launch_in_turn_each_stay_correct(taken):
    x = torch.arange(512, dtype=torch.float32)
    for i in range(6):
        z = torch.zeros(512)
        args = (x, z) if i % 2 else (x.numpy(), z.numpy())
        _scale(2, *args, 512, float(i))
        assert torch.equal(z, x * float(i))


@st.composite
def _tensor_pairs(draw):
    """(x, z) for scale_kernel: mostly plain float32 CPU tensors the fast path takes, and each
    way a tensor can differ from that (another dtype, strided, empty, requiring grad, a
    negative view, a subclass, a numpy array)."""
    n = 512

    def one(role):
        kind = draw(st.sampled_from(["plain"] * 6 + ["float16", "bfloat16", "strided", "empty",
                                                     "grad", "neg", "parameter", "array"]))
        base = torch.arange(n, dtype=torch.float32) if role == "x" else torch.zeros(n)
        if kind == "float16":
            return base.half(), kind
        if kind == "bfloat16":
            return base.bfloat16(), kind
        if kind == "strided":
            return torch.zeros(2 * n)[::2].copy_(base), kind
        if kind == "empty":
            return torch.zeros(0), kind
        if kind == "grad":
            return base.clone().requires_grad_(), kind
        if kind == "neg":
            return torch._neg_view(-base), kind
        if kind == "parameter":
            return torch.nn.Parameter(base, requires_grad=False), kind
        if kind == "array":
            return base.numpy(), kind
        return base, kind
    return one("x"), one("z")


def test_tensor_arguments_take_the_fast_path_exactly_when_plan_key_binds_them_alike(taken):
    """Over generated pairs of tensor (or array) arguments: the fast path (whose spec a
    plain float32 tensor launch made) serves a launch iff plan_key binds the arguments' numpy
    views (of their detach()) to that key and the written one does not require grad; every
    launch, served or not, gives the same result or the same error as the usual path."""
    from ascendc_py.dsl.launcher import launch_names, plan_key
    names = launch_names()
    reference = torch.arange(512, dtype=torch.float32)
    outcomes = []

    def run(x, z, enabled):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fast_launch, "ENABLED", enabled)
            try:
                _scale(2, x, z, 512)
                return "ok", z.tobytes() if isinstance(z, np.ndarray) else \
                    z.detach().float().numpy().tobytes()
            except asc.KernelError as e:
                return type(e).__name__, str(e)

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(pair=_tensor_pairs())
    def agree(pair):
        (x, xk), (z, zk) = pair
        for _ in range(2):       # (the spec of a plain float32 tensor launch, as the fast one)
            _scale(2, reference, torch.zeros(512), 512)
        taken.clear()
        fast = run(x, z, True)
        served = bool(taken) and taken[-1]
        # a tensor the kernel only reads (x) binds as its detached view; one it writes (z)
        # that requires grad leaves the launch to the usual path, which decides
        views = tuple(v.detach().numpy() if type(v) is torch.Tensor and not v.is_neg() and
                      v.dtype != torch.bfloat16 else v for v in (x, z))
        key = plan_key(scale_kernel, (*views, 512, 2.0, False, TILE), names)
        expected = key is not None and [str(k) for k in key[0][:2]] == ["float32"] * 2 and \
            not getattr(z, "requires_grad", False)
        assert served == expected, (xk, zk, fast)
        outcomes.append(served)
        z2 = z.copy() if isinstance(z, np.ndarray) else z.detach().clone()
        if isinstance(z, torch.Tensor) and z.requires_grad:
            z2.requires_grad_()
        if isinstance(z, torch.Tensor) and z.is_neg():
            z2 = torch._neg_view(z.resolve_neg().neg())
        if isinstance(z, torch.nn.Parameter):
            z2 = torch.nn.Parameter(z.detach().clone(), requires_grad=False)
        usual = run(x, z2 if not zk == "strided" else torch.zeros(1024)[::2], False)
        assert fast == usual, (xk, zk)

    agree()
    assert 0.1 < sum(outcomes) / len(outcomes) < 0.9, (sum(outcomes), len(outcomes))


def test_a_tensor_that_requires_grad_is_read_on_the_fast_path_and_never_written(taken):
    """An activation autograd saved (requires grad) that the kernel only reads binds through
    its detach() on the planned and the fast path (before, every such launch took the full
    path: 47 against 17 us); one the kernel writes is refused while grad mode is on, by the
    planned path as by the full path, and written (its version bumped) under no_grad."""
    x = torch.arange(512, dtype=torch.float32).requires_grad_()
    z = torch.zeros(512)
    for _ in range(3):
        _scale(2, x, z, 512)
    assert taken[-2:] == [True, True]
    v = x._version
    _scale(2, x, z, 512, 3.0)
    assert taken[-1] is True and torch.equal(z, x.detach() * 3) and x._version == v
    w = torch.zeros(512, requires_grad=True)
    for first in (True, False):     # a fresh launcher (the full path) and a planned one
        kernel_launch = scale_kernel[3 if first else 2]
        with pytest.raises(asc.RequiresGradArgumentError, match="'z' is a torch tensor that "
                                                                "requires grad"):
            kernel_launch(x, w, 512, 2.0, False, TILE)
        assert not w.detach().any() and w._version == 0
    with torch.no_grad():
        _scale(2, x, w, 512)
    assert torch.equal(w.detach(), x.detach() * 2) and w._version == 1


def test_a_training_step_of_the_torch_model_sample_launches_on_the_fast_path(taken):
    """samples/torch_model.py's ops (sepia, leaky_relu and its backward, add, swiglu's
    backward) with autograd's saved activations, in turn: after a first step, every launch
    of a vector kernel is served by its FastLaunch, and the losses are the same with the
    fast path off."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "samples"))
    import torch_model as M

    def losses(enabled):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fast_launch, "ENABLED", enabled)
            torch.manual_seed(0)
            gen = torch.Generator().manual_seed(0)
            model = M.TinyNet()
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            out = []
            for step in range(3):
                images, labels = M.make_batch(gen, n=8, size=16)
                if step == 2:
                    taken.clear()
                loss = torch.nn.functional.cross_entropy(model(images), labels)
                opt.zero_grad()
                loss.backward()
                opt.step()
                out.append(loss.item())
            return out
    usual = losses(False)
    fast = losses(True)
    assert fast == usual
    assert len(taken) >= 5 and all(taken), taken
