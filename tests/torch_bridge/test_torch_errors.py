"""Bad input: tensors on different devices (CPU and meta; all-meta calls infer shapes, see
test_torch_meta_grad.py), unsupported
dtypes, mismatched shapes and dtypes, wrong image layout for sepia. Each error names the op and
what it accepts; inputs are never modified."""
import pytest

torch = pytest.importorskip("torch")

import ascendc_py.torch_bridge as tb  # noqa: E402
import ascendc_py.torch_bridge.ops as ops  # noqa: E402

A = torch.ops.ascendc


def cases():
    f = torch.ones(4, 5)
    img = torch.rand(2, 3, 4, 4)
    meta = torch.ones(4, 5, device="meta")
    return [
        ("meta-x", lambda: A.add(meta, f), tb.OpDeviceError,
         r"ascendc::add: argument 'y' is on device 'cpu'; .*accepts CPU tensors only"),
        ("meta-b", lambda: A.swiglu(f, meta), tb.OpDeviceError,
         r"ascendc::swiglu: argument 'a' is on device 'cpu'"),
        ("meta-linear", lambda: A.linear(torch.ones(2, 16), torch.ones(8, 16, device="meta"),
                                         torch.ones(8, device="meta")), tb.OpDeviceError,
         r"ascendc::linear: argument 'x' is on device 'cpu'"),
        ("int64", lambda: A.swiglu(f.long(), f.long()), tb.OpDtypeError,
         r"ascendc::swiglu: argument 'a' has dtype int64; ascendc::swiglu accepts float32, "
         r"float16, bfloat16"),
        ("float64", lambda: A.leaky_relu(f.double(), 0.1), tb.OpDtypeError,
         r"ascendc::leaky_relu: argument 'x' has dtype float64; .*accepts float32, float16"),
        ("float64-sepia", lambda: A.sepia(img.double()), tb.OpDtypeError,
         r"ascendc::sepia: argument 'x' has dtype float64"),
        ("bool", lambda: A.add(f.bool(), f.bool()), tb.OpDtypeError, r"dtype bool"),
        ("mixed", lambda: A.add(f, f.half()), tb.OpDtypeError,
         r"ascendc::add: all tensor arguments must have one dtype: 'x' is float32 but 'y' is "
         r"float16"),
        ("shapes", lambda: A.add(f, torch.ones(5, 4)), tb.OpInputError,
         r"ascendc::add: shapes must be equal \(no broadcasting\): 'x' is \(4, 5\) but 'y' is "
         r"\(5, 4\)"),
        ("broadcast", lambda: A.swiglu(f, torch.ones(5)), tb.OpInputError,
         r"ascendc::swiglu: shapes must be equal"),
        ("bwd-shapes", lambda: A.swiglu_backward(f, f, torch.ones(4, 6)), tb.OpInputError,
         r"ascendc::swiglu_backward: shapes must be equal \(no broadcasting\): .*'b' is "
         r"\(4, 6\)"),
        ("channels", lambda: A.sepia(torch.rand(2, 4, 4, 4)), tb.OpInputError,
         r"ascendc::sepia: expects a batch of RGB images in NCHW layout, shape \(N, 3, H, W\); "
         r"got shape \(2, 4, 4, 4\)"),
        ("nhwc", lambda: A.sepia(torch.rand(2, 4, 4, 3)), tb.OpInputError, r"got shape"),
        ("3d", lambda: A.sepia(torch.rand(3, 4, 4)), tb.OpInputError,
         r"got shape \(3, 4, 4\)"),
        ("bwd-channels", lambda: A.sepia_backward(torch.rand(1, 1, 2, 2)), tb.OpInputError,
         r"ascendc::sepia_backward: expects"),
    ]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c[0])
def test_bad_input_errors(case):
    _, call, error, message = case
    with pytest.raises(error, match=message):
        call()


def test_errors_are_value_and_type_errors():
    assert issubclass(tb.OpInputError, ValueError)
    assert issubclass(tb.OpDtypeError, TypeError) and issubclass(tb.OpDtypeError, tb.OpInputError)
    with pytest.raises(TypeError):
        ops.add(torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.int32))


def test_wrong_arguments_name_the_schema():
    with pytest.raises(Exception, match=r"ascendc::swiglu"):
        A.swiglu(torch.ones(3))
    with pytest.raises(Exception, match=r"negative_slope"):
        A.leaky_relu(torch.ones(3), "steep")


def test_inputs_never_modified():
    """Forward, backward and failing calls leave every input bit-identical."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        a = torch.randn(6, 37, dtype=dtype).requires_grad_()
        b = torch.randn(6, 37, dtype=dtype).t().contiguous().t().requires_grad_()  # strided
        img = torch.rand(2, 3, 5, 5, dtype=dtype).requires_grad_()
        keep = [t.detach().clone() for t in (a, b, img)]
        out = (ops.swiglu(a, b) + ops.add(a, b) + ops.leaky_relu(a, 0.2)).sum()
        out = out + ops.sepia(img).sum()
        out.backward()
        g = torch.randn(6, 37, dtype=dtype)
        g_keep = g.clone()
        ops.swiglu_backward(g, a.detach(), b.detach())
        ops.leaky_relu_backward(g, a.detach(), 0.1)
        with pytest.raises(tb.OpInputError):
            ops.add(a, img)
        for t, k in zip((a, b, img, g), keep + [g_keep]):
            assert torch.equal(t.detach(), k)


def test_kernel_faults_surface_as_kernel_errors():
    """A launcher that launches wrongly gets the simulator's error, naming the kernel line."""
    import ascendc_py as asc
    from ascendc_py.torch_bridge import kernels

    x = torch.ones(64)
    with pytest.raises(asc.GMOutOfBoundsError):
        kernels.add_kernel[1](x, x, torch.empty(64), 128, 128, 256)
