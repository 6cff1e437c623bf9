"""The ops inside torch.compile(fullgraph=True): inductor (the default backend) and aot_eager,
no graph breaks, the same results and gradients as eager, dynamic shapes."""
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import ascendc_py.torch_bridge as tb  # noqa: E402
import ascendc_py.torch_bridge.ops  # noqa: E402,F401


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sepia = tb.SepiaFilter()
        self.proj = nn.Linear(3, 8)
        self.gate = tb.SwiGLU(8, 16)

    def forward(self, img):
        x = self.sepia(img).mean((2, 3))
        h = torch.ops.ascendc.leaky_relu(self.proj(x), 0.1)
        return torch.ops.ascendc.add(self.gate(h), torch.ops.ascendc.swiglu(h, h).repeat(1, 2))


class SmallNet(nn.Module):
    """Our ops plus views and matmuls only, so that inductor has little C++ to compile."""

    def __init__(self):
        super().__init__()
        self.sepia = tb.SepiaFilter()
        self.gate = tb.SwiGLU(3, 8)

    def forward(self, img):
        x = self.sepia(img).permute(0, 2, 3, 1)          # (N, H, W, 3), not contiguous
        h = torch.ops.ascendc.leaky_relu(self.gate(x), 0.1)
        return torch.ops.ascendc.add(h, torch.ops.ascendc.swiglu(h, h))


def run(model, img):
    model.zero_grad()
    img = img.detach().clone().requires_grad_()
    out = model(img)
    out.square().sum().backward()
    return [out.detach(), img.grad] + [p.grad.clone() for p in model.parameters()]


def assert_same(a, b):
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)


def test_inductor_fullgraph_matches_eager():
    """The default backend (inductor; it compiles C++ with the host's gcc)."""
    torch.manual_seed(0)
    model = SmallNet()
    img = torch.rand(4, 3, 6, 5)
    eager = run(model, img)
    compiled = torch.compile(model, fullgraph=True, dynamic=False)
    assert_same(run(compiled, img), eager)


def test_one_graph_no_breaks_dynamic_shapes():
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    torch.manual_seed(1)
    model = Net()
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=counting_backend)
    for batch, h, w in ((2, 5, 7), (4, 6, 9), (5, 8, 2)):   # distinct sizes: no duck sizing
        img = torch.rand(batch, 3, h, w)
        assert_same(run(compiled, img), run(model, img))
    assert len(graphs) == 1          # one graph, reused for every shape
    targets = {str(n.target).replace(".default", "") for n in graphs[0].graph.nodes
               if n.op == "call_function"}
    assert {"ascendc.sepia", "ascendc.swiglu", "ascendc.add", "ascendc.leaky_relu"} <= targets
    explanation = torch._dynamo.explain(model)(torch.rand(2, 3, 4, 4))
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_bad_input_is_reported_while_tracing():
    fn = torch.compile(lambda x: torch.ops.ascendc.sepia(x), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"ascendc::sepia: expects a batch of RGB images"):
        fn(torch.rand(2, 4, 3, 3))
