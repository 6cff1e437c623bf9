"""A small PyTorch model trained with ascendc_py ops in its forward and backward passes.

Sepia preprocessing (``SepiaFilter``), a conv stem from torch followed by
``torch.ops.ascendc.leaky_relu``, and a residual MLP block whose gate is ``SwiGLU`` (matmuls in
torch, silu(gate) * up in our kernel) joined by ``torch.ops.ascendc.add``. Every forward and
backward of those ops is a kernel on the simulated Ascend AI Core; ``asc.profile()`` reports
their simulated NPU time per training step.

Run: python samples/torch_model.py
"""
import torch
from torch import nn

import ascendc_py as asc
from ascendc_py.torch_bridge import SepiaFilter, SwiGLU, ops

CLASSES = 4


class TinyNet(nn.Module):
    def __init__(self, width: int = 16, hidden: int = 32, classes: int = CLASSES):
        super().__init__()
        self.sepia = SepiaFilter()
        self.stem = nn.Conv2d(3, width, 3, stride=2, padding=1)
        self.proj = nn.Linear(width, hidden)
        self.gate = SwiGLU(hidden, 2 * hidden)
        self.down = nn.Linear(2 * hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.sepia(x)                                        # preprocessing, on the NPU
        x = torch.ops.ascendc.leaky_relu(self.stem(x), 0.1)
        h = self.proj(x.mean((2, 3)))
        h = torch.ops.ascendc.add(h, self.down(self.gate(h)))   # residual SwiGLU MLP block
        return self.head(h)


def make_batch(generator: torch.Generator, n: int = 32, size: int = 32):
    """Images whose class is the colour that was brightened (red, green, blue) or none."""
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    images = torch.rand(n, 3, size, size, generator=generator) * 0.6
    for c in range(3):
        images[labels == c, c] += 0.4
    return images, labels


def train(steps: int = 8) -> list:
    """Train TinyNet for ``steps`` steps; prints and returns the losses."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = TinyNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        images, labels = make_batch(gen)
        with asc.profile() as prof:
            loss = nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
        opt.step()
        losses.append(loss.item())
        print(f"step {step}: loss {loss.item():.4f}   custom ops: {len(prof)} kernel launches, "
              f"simulated NPU time {prof.device_time_us:8.2f} us")
    print("\nkernel launches of the last step:")
    print(prof)
    assert losses[-1] < losses[0], "the loss should go down"
    return losses


def main(steps: int = 8):
    """Train, then return the Report of the last step's sepia launch (``make demo`` saves its
    trace and timeline)."""
    train(steps)
    return ops.sepia.last_reports[0]


if __name__ == "__main__":
    main()
