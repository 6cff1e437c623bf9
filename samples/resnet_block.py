"""A ResNet basic block on the simulated NPU (the seed article's fused Conv+BN+ReLU and its
channels_last migration), checked against torch's own modules on the same weights.

    out = relu(bn1(conv1(x)))          -> torch.ops.ascendc.conv_bn_relu   (1 cube launch)
    out = bn2(conv2(out))              -> torch.ops.ascendc.conv2d with bn2 folded (1 launch)
    out = relu(out + x)                -> torch.ops.ascendc.add, leaky_relu(0) (2 vector launches)

Tensors stay channels_last (NHWC in memory) from end to end: the cube kernel reads the input
as NC1HWC0 (a host rearrangement, CANN's TransData) and writes NHWC rows, so no transpose is
needed between the ops. float16 on the cube with float32 accumulation.

Then the seed's comparison for the first stage: Conv → BN → ReLU as three launches
(conv2d, then batch norm and ReLU as vector kernels, each a round trip through GM) against the
fused launch (BN folded into the weights and bias, ReLU in the fixpipe), in simulated time and
GM bytes. Run: python samples/resnet_block.py (``--large``: a large convolution's share of the
modeled cube peak instead)
"""
import torch

import ascendc_py as asc
from ascendc_py.torch_bridge import FusedConvBNReLU
from ascendc_py.torch_bridge import ops  # noqa: F401  (registers torch.ops.ascendc.*)
from ascendc_py.torch_bridge.ops_conv import LAST_REPORTS, conv_bn_relu_unfused, fold_bn

#: batch, channels, height, width of the block's input (a ResNet-18 stage-2 block)
SHAPE = (2, 64, 28, 28)


def make_block(channels: int, seed: int = 0):
    """conv1, bn1, conv2, bn2 with trained-looking statistics, in eval mode (float32)."""
    torch.manual_seed(seed)
    mods = [torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            torch.nn.BatchNorm2d(channels),
            torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            torch.nn.BatchNorm2d(channels)]
    for bn in mods[1::2]:
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.5, 0.5)
    for m in mods:
        m.eval()
    return mods


def torch_block(x, conv1, bn1, conv2, bn2):
    """torchvision's BasicBlock forward (no downsample)."""
    out = torch.relu(bn1(conv1(x)))
    out = bn2(conv2(out))
    return torch.relu(out + x)


def ascend_block(x, stage1: FusedConvBNReLU, w2, b2):
    """The block from our ops; x channels_last float16."""
    out = stage1(x)                                                   # conv_bn_relu
    out = torch.ops.ascendc.conv2d(out, w2, b2, [1, 1], [1, 1], [1, 1], 1)   # conv2 + bn2
    nhwc = torch.ops.ascendc.add(out.permute(0, 2, 3, 1), x.permute(0, 2, 3, 1))
    return torch.ops.ascendc.leaky_relu(nhwc, 0.0).permute(0, 3, 1, 2)


def gm_bytes(report) -> int:
    """Bytes a launch moved to or from global memory."""
    return sum(v for k, v in report.bytes_moved.items() if "GM" in k)


def compare_stage1(x, conv1, bn1):
    """(fused report, [conv, bn, relu] reports, max difference of the results)."""
    w = conv1.weight.detach().half()
    args = (bn1.weight.detach(), bn1.bias.detach(), bn1.running_mean, bn1.running_var, bn1.eps)
    fused = torch.ops.ascendc.conv_bn_relu(x, w, None, *args, [1, 1], [1, 1], [1, 1])
    fused_report = LAST_REPORTS["ascendc::conv_bn_relu"][0]
    chain, reports = conv_bn_relu_unfused(x, w, None, *args, 1, 1, 1)
    return fused_report, reports, (fused.float() - chain.float()).abs().max().item()


def main():
    n, c, h, w = SHAPE
    conv1, bn1, conv2, bn2 = make_block(c)
    x32 = torch.randn(SHAPE).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        golden = torch_block(x32, conv1, bn1, conv2, bn2)
    stage1 = FusedConvBNReLU.from_modules(conv1, bn1)
    w2, b2 = fold_bn(conv2.weight.detach(), None, bn2.weight.detach(), bn2.bias.detach(),
                     bn2.running_mean, bn2.running_var, bn2.eps)
    x = x32.half()
    with asc.profile() as prof:
        out = ascend_block(x, stage1, w2.half(), b2)
    assert out.is_contiguous(memory_format=torch.channels_last)
    asc.testing.assert_close(out.float(), golden, rtol=2e-2, atol=2e-2)
    print(f"ResNet basic block {tuple(SHAPE)} float16 channels_last: matches torch's modules "
          f"(float32) within 2e-2; max abs diff {(out.float() - golden).abs().max():.2e}")
    print(prof.table())

    fused, chain, diff = compare_stage1(x, conv1, bn1)
    chain_cycles = sum(r.cycles for r in chain)
    chain_bytes = sum(gm_bytes(r) for r in chain)
    print("Conv+BN+ReLU, stage 1 of the block:")
    print(f"  {'':28s} {'launches':>8s} {'cycles':>10s} {'us':>8s} {'GM bytes':>12s}")
    print(f"  {'conv2d -> BN -> ReLU':28s} {3:8d} {chain_cycles:10,d} "
          f"{sum(r.time_us for r in chain):8.2f} {chain_bytes:12,d}")
    for name, r in zip(("conv2d", "batch norm (vector)", "relu (vector)"), chain):
        print(f"    {name:26s} {1:8d} {r.cycles:10,d} {r.time_us:8.2f} {gm_bytes(r):12,d}")
    print(f"  {'conv_bn_relu (fused)':28s} {1:8d} {fused.cycles:10,d} {fused.time_us:8.2f} "
          f"{gm_bytes(fused):12,d}")
    print(f"  fused / chain: {fused.cycles / chain_cycles:.2f} of the time "
          f"({chain_cycles / fused.cycles - 1:+.0%} speed), {gm_bytes(fused) / chain_bytes:.2f} "
          f"of the GM bytes; results differ by at most {diff:.2e} (BN rounding in float16)")
    assert fused.cycles < chain_cycles and gm_bytes(fused) < chain_bytes
    return fused


def large(shape=(8, 256, 28, 28), cout=256):
    """A large 3x3 convolution (stride 1, padding 1, float16) on every AI Core: its share of the
    modeled cube peak (``host.cube_efficiency``: M·N·K MACs over cycles × peak MACs/cycle)."""
    from ascendc_py import host
    from ascendc_py.torch_bridge.ops_conv import conv2d
    n, c, h, w = shape
    x = torch.randn(shape).half().contiguous(memory_format=torch.channels_last)
    wt = (torch.randn(cout, c, 3, 3) / (9 * c) ** 0.5).half()
    y = conv2d(x, wt, None, 1, 1, 1)
    report = LAST_REPORTS["ascendc::conv2d"][0]
    asc.testing.assert_close(y, torch.nn.functional.conv2d(x.double(), wt.double(), None, 1, 1),
                             dtype="float16")
    eff = host.cube_efficiency(report, n * h * w, cout, c * 9)
    print(f"conv2d {tuple(shape)} * ({cout}, {c}, 3, 3) float16: {report.cycles:,} cycles on "
          f"{report.block_dim} AI Cores, {eff:.1%} of the modeled cube peak; bottleneck "
          f"{report.bottleneck}")
    return report, eff


if __name__ == "__main__":
    import sys
    large() if "--large" in sys.argv else main()
