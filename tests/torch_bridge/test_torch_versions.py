"""Kernel writes and autograd (issue 12 item 9): a launch bumps the version counter of every
torch tensor it writes, so autograd reports a tensor it saved for backward that a kernel
overwrote instead of computing a silently wrong gradient; the raw launcher refuses to write a
tensor that requires grad while grad mode is on; tensors a kernel only reads keep their
version; the shipped ops (torch.library custom ops) work as before."""
import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")

import ascendc_py as asc  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "simulator"))
import kernels_access as K  # noqa: E402

N = K.N


def test_a_kernel_write_bumps_the_version_and_autograd_sees_it():
    w = torch.randn(N, requires_grad=True)
    s = torch.randn(N)
    loss = (w * s).sum()                 # saves s for backward (d loss / d w = s)
    before = s._version
    K.copy_out[1](torch.ones(N), s)      # the kernel overwrites s
    assert s._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()                  # before: silently gave w.grad = ones


def test_only_written_tensors_are_bumped():
    x, y = torch.arange(2 * N, dtype=torch.float32), torch.zeros(2 * N)
    vx, vy = x._version, y._version
    K.copy_out[2](x, y)
    assert x._version == vx and y._version > vy
    torch.testing.assert_close(y, x)


def test_a_write_chosen_at_run_time_bumps_what_was_written():
    x, y, z = torch.ones(N), torch.zeros(N), torch.zeros(N)
    vy, vz = y._version, z._version
    K.pick_out[1](x, y, z, 1)
    assert y._version == vy and z._version > vz
    K.pick_out[1](x, y, z, 0)
    assert y._version > vy


def test_a_launch_that_faults_still_bumps_what_it_may_have_written():
    x, y = torch.ones(N), torch.zeros(N)
    v = y._version
    with pytest.raises(asc.GMOutOfBoundsError):
        K.write_then_fault[1](x, y)
    assert y[0] == 1 and y._version > v


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_writing_a_tensor_that_requires_grad_is_refused(leaf):
    p = torch.zeros(N, requires_grad=True)
    target = p if leaf else p * 2
    before = target.detach().clone()
    with pytest.raises(asc.RequiresGradArgumentError) as info:
        K.copy_out[1](torch.ones(N), target)
    e = info.value
    assert f"argument 'y' is a torch tensor that requires grad{' (a leaf)' if leaf else ''}" \
        in e.message and "nothing was run" in e.message
    assert "torch.no_grad()" in e.hint and "custom_op" in e.hint
    assert e.loc is not None and e.loc.line > 0
    assert torch.equal(target.detach(), before)


def test_under_no_grad_a_parameter_may_be_updated_in_place():
    p = torch.zeros(N, requires_grad=True)
    v = p._version
    with torch.no_grad():
        K.copy_out[1](torch.full((N,), 3.0), p)      # an optimizer-style update
    assert p._version > v and (p.detach() == 3).all()
    (p * p).sum().backward()
    assert (p.grad == 6).all()


def test_tensors_that_require_grad_may_be_read():
    x = torch.arange(N, dtype=torch.float32, requires_grad=True)
    y = torch.zeros(N)
    K.copy_out[1](x, y)
    torch.testing.assert_close(y, x.detach())


def test_a_run_time_choice_of_a_tensor_that_requires_grad_faults_before_writing():
    x, y = torch.ones(N), torch.zeros(N)
    z = torch.zeros(N, requires_grad=True)
    K.pick_out[1](x, y, z, 0)                       # y chosen: fine
    with pytest.raises(asc.ReadOnlyWriteError, match="'z', a torch tensor that requires grad"):
        K.pick_out[1](x, y, z, 1)
    assert (z.detach() == 0).all()


def test_shipped_ops_leave_their_inputs_alone():
    import ascendc_py.torch_bridge.ops as ops
    a = torch.randn(1000, requires_grad=True)
    b = torch.randn(1000, requires_grad=True)
    va, vb = a._version, b._version
    out = ops.add(a, b)
    assert a._version == va and b._version == vb
    out.sum().backward()
    assert (a.grad == 1).all() and (b.grad == 1).all()
