"""Rate-distortion plots (PNG, matplotlib's Agg backend): PSNR8 at mip 0 against bits per mip-0 texel, one plot per
material and an overview grid of every material, each with nmc, NTC 0.9.2, ASTC and the BCn recipes. Every series
has its own colour (tab10, a qualitative map) and marker, the same in every plot, and the legend sits outside the
axes so it never covers a point.
"""

import math
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TAB10 = plt.get_cmap("tab10").colors
STYLE = {  # series prefix -> (colour, marker, line); nmc series take NMC_COLOURS/NMC_MARKERS in turn
    "nmc": (None, "o", "-"),
    "NTC 0.9.2 20k": (TAB10[0], "s", "--"),
    "NTC 0.9.2 100k": (TAB10[9], "D", "-"),
    "ASTC": (TAB10[2], "^", "-"),
    "BCn high": (TAB10[4], "*", ""),
    "BCn low": (TAB10[5], "P", ""),
}

# One per nmc series, same in every plot; none of them is a colour STYLE gives another series.
NMC_COLOURS = [TAB10[3], TAB10[1], TAB10[6], TAB10[8], TAB10[7]]
NMC_MARKERS = ["o", "v", "h", "X", "p"]


def style_of(series, series_names):
    """A series' colour, marker and line: fixed per prefix, and for the k-th nmc series of the whole report
    (not of one plot) the k-th nmc colour and marker, so a series looks the same in every panel and in the legend."""
    for prefix, s in STYLE.items():
        if series.startswith(prefix):
            if prefix == "nmc":
                index = [n for n in series_names if n.startswith("nmc")].index(series)
                return (NMC_COLOURS[index % len(NMC_COLOURS)], NMC_MARKERS[index % len(NMC_MARKERS)], s[2])
            return s
    return ("#000000", "x", "-")


def _draw(ax, db, material, series_names, small=False):
    for series in series_names:
        pts = db.series_points(material, series)
        if not pts:
            continue
        colour, marker, line = style_of(series, series_names)
        ax.plot([p.bits for p in pts], [p.psnr8 for p in pts], linestyle=line or "none", marker=marker,
                color=colour, label=series, markersize=(5 if small else 7) * (1.4 if marker == "*" else 1),
                linewidth=1.2 if small else 1.8)
        if series == "ASTC" and not small:
            for p in pts:
                ax.annotate(p.label.split()[-1], (p.bits, p.psnr8), fontsize=7, color=colour,
                            xytext=(3, -10), textcoords="offset points")
    ax.set_xscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ticks = [1, 2, 4, 8, 16, 32, 64]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlim(0.8, 64)


def material_plot(db, material, path):
    fig, ax = plt.subplots(figsize=(9.5, 5))
    _draw(ax, db, material, db.series_names())
    info = db.materials.get(material, {})
    ax.set_title("%s (%dx%d)" % (material, info.get("width", 0), info.get("height", 0)))
    ax.set_xlabel("bits per mip-0 texel, whole material, mips included (log scale)")
    ax.set_ylabel("PSNR8, mip 0, all stored channels (dB)")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [textwrap.fill(lab, 32) for lab in labels], fontsize=8, loc="upper left",
              bbox_to_anchor=(1.02, 1.0), borderaxespad=0, frameon=False, labelspacing=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def overview_plot(db, materials, path):
    n = len(materials)
    cols = 4 if n > 6 else max(1, min(n, 3))
    rows = int(math.ceil(n / float(cols)))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows + 0.9), squeeze=False)
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
    legend_rows = int(math.ceil(len(labels) / 4.0))
    bottom = (0.25 + 0.22 * legend_rows) / (3.3 * rows + 0.9)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=9, frameon=False)
    fig.text(0.5, 0.995, "PSNR8 mip 0 (dB) vs bits per mip-0 texel (log)", ha="center", va="top", fontsize=10)
    fig.tight_layout(rect=(0, bottom, 1, 0.98))
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
