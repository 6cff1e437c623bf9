"""The picture of a sweep: cycles per config against the modeled roofline (matplotlib).

Left, one panel per shape: a bar per config and platform (simulated cycles, failed configs
left out) and, per platform, a dashed line at the roofline's lower bound for that shape: the
larger of (GM bytes moved / HBM bandwidth) and (FLOPs / peak vector + cube rate) on the whole
chip, taken from the config that moved the fewest bytes. Right: the classic roofline, attained
FLOP/s against FLOP per GM byte, the platform's bandwidth slope and compute ceiling, a point
per run.
"""
from __future__ import annotations

from pathlib import Path


def plot_sweep(result, path=None):
    import matplotlib
    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ok = [r for r in result.records if r["cycles"] is not None]
    shapes = list(dict.fromkeys(r["shape"] for r in result.records))
    platforms = [c.name for c in result.chips]
    labels = result.config_labels
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(len(shapes), 2, figsize=(min(24.0, max(10.0, 0.3 * len(labels) +
                                                                   6)), 5.5 * len(shapes)),
                             squeeze=False, gridspec_kw={"width_ratios": [2, 1]})
    width = 0.8 / max(1, len(platforms))
    for si, shape in enumerate(shapes):
        ax = axes[si][0]
        for pi, plat in enumerate(platforms):
            rows = {r["config"]: r for r in ok if r["shape"] == shape and r["platform"] == plat}
            xs = [i + pi * width for i, lab in enumerate(labels) if lab in rows]
            ys = [rows[lab]["cycles"] for lab in labels if lab in rows]
            color = colors[pi % len(colors)]
            ax.bar(xs, ys, width=width, color=color, label=plat)
            if rows:
                roof = min(r["roofline_cycles"] for r in rows.values())
                ax.axhline(roof, color=color, linestyle="--", linewidth=1,
                           label=f"{plat} roofline")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("simulated cycles")
        ax.set_title(f"{result.kernel}: {shape}", fontsize=9)
        ax.legend(fontsize=7)

        ax = axes[si][1]
        for pi, chip in enumerate(result.chips):
            color = colors[pi % len(colors)]
            rows = [r for r in ok if r["shape"] == shape and r["platform"] == chip.name]
            peak = (chip.peak_vector_tops_f16 + (chip.peak_cube_tflops_f16
                                                 if any(r["cube_flops"] for r in rows)
                                                 else 0.0)) * 1e12
            bw = chip.hbm_gbps * 1e9
            pts = [((r["flops"] + r["cube_flops"]) / max(1, r["gm_bytes"]),
                    (r["flops"] + r["cube_flops"]) / (r["time_us"] * 1e-6))
                   for r in rows if r["time_us"] and r["gm_bytes"]]
            lo = min([p[0] for p in pts] + [peak / bw / 100]) / 2
            hi = max([p[0] for p in pts] + [peak / bw * 10]) * 2
            xs = [lo, peak / bw, hi]
            ax.plot(xs, [min(peak, bw * x) for x in xs], color=color, linewidth=1,
                    label=f"{chip.name} roofline")
            if pts:
                ax.scatter([p[0] for p in pts], [max(p[1], 1.0) for p in pts], color=color,
                           s=14)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("FLOP per GM byte")
        ax.set_ylabel("attained FLOP/s")
        ax.legend(fontsize=7)
    fig.tight_layout()
    if path is None:
        return fig
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


__all__ = ["plot_sweep"]
