"""Rate-distortion plots (PNG, matplotlib's Agg backend): PSNR8 at mip 0 against bits per mip-0 texel, one plot per
material and an overview grid of every material, each with nmc, NTC 0.9.2, ASTC and the BCn recipes.
"""

import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {  # series prefix -> (colour, marker, line); nmc series take NMC_COLOURS in turn
    "nmc": (None, "o", "-"),
    "NTC 0.9.2 20k": ("#1f77b4", "s", "--"),
    "NTC 0.9.2 100k": ("#1f77b4", "D", "-"),
    "ASTC": ("#2ca02c", "^", "-"),
    "BCn high": ("#9467bd", "*", ""),
    "BCn low": ("#8c564b", "P", ""),
}


NMC_COLOURS = ["#d62728", "#ff7f0e", "#e377c2", "#17becf", "#bcbd22"]  # one per nmc series, same in every plot


def style_of(series, series_names):
    """A series' colour, marker and line: fixed per prefix, and for the k-th nmc series of the whole report
    (not of one plot) the k-th nmc colour, so a series looks the same in every panel and in the legend."""
    for prefix, s in STYLE.items():
        if series.startswith(prefix):
            if prefix == "nmc":
                index = [n for n in series_names if n.startswith("nmc")].index(series)
                return (NMC_COLOURS[index % len(NMC_COLOURS)],) + s[1:]
            return s
    return ("#7f7f7f", "x", "-")


def _draw(ax, db, material, series_names, small=False):
    for series in series_names:
        pts = db.series_points(material, series)
        if not pts:
            continue
        colour, marker, line = style_of(series, series_names)
        ax.plot([p.bits for p in pts], [p.psnr8 for p in pts], linestyle=line or "none", marker=marker,
                color=colour, label=series, markersize=4 if small else 6, linewidth=1.2 if small else 1.6)
        if series.startswith("BCn") and not small:
            for p in pts:
                ax.annotate(series, (p.bits, p.psnr8), fontsize=7, color=colour, xytext=(-12, 6),
                            textcoords="offset points")
        if series == "ASTC" and not small:
            for p in pts:
                ax.annotate(p.label.split()[-1], (p.bits, p.psnr8), fontsize=7, color=colour,
                            xytext=(3, -9), textcoords="offset points")
    ax.set_xscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ticks = [1, 2, 4, 8, 16, 32, 64]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlim(0.8, 64)


def material_plot(db, material, path):
    fig, ax = plt.subplots(figsize=(7.5, 5))
    _draw(ax, db, material, db.series_names())
    info = db.materials.get(material, {})
    ax.set_title("%s (%dx%d)" % (material, info.get("width", 0), info.get("height", 0)))
    ax.set_xlabel("bits per mip-0 texel, whole material, mips included (log scale)")
    ax.set_ylabel("PSNR, 8-bit, mip 0, all stored channels (dB)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def overview_plot(db, materials, path):
    n = len(materials)
    cols = 4 if n > 6 else max(1, min(n, 3))
    rows = int(math.ceil(n / float(cols)))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for i, material in enumerate(materials):
        ax = axes[i // cols][i % cols]
        _draw(ax, db, material, db.series_names(), small=True)
        ax.set_title(material, fontsize=9)
        ax.tick_params(labelsize=7)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8)
    fig.text(0.5, 0.995, "PSNR8 mip 0 (dB) vs bits per mip-0 texel (log)", ha="center", va="top", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.98))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_plots(db, folder):
    """Writes <material>.png for every material and overview.png; returns {material: file name}."""
    os.makedirs(folder, exist_ok=True)
    out = {}
    materials = sorted(db.materials)
    for m in materials:
        name = m + ".png"
        material_plot(db, m, os.path.join(folder, name))
        out[m] = name
    overview_plot(db, materials, os.path.join(folder, "overview.png"))
    return out
