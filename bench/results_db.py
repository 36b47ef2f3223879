"""Loads every raw results file and the shared baselines into one table of points: per material and series (nmc at
a device/preset, NTC 0.9.2 at a step count, each ASTC block size, the BCn recipes) the bits per texel and PSNR
figures, plus per-map rows and speed figures. Material recipes for the classic codecs are formed here from the
per-map rows, so every codec's material figure comes from the same pooling (metrics.pooled_psnr).
"""

import csv
import glob
import json
import os

import metrics

MIP_CHAIN = 4.0 / 3.0  # a full mip chain costs 1/3 more than mip 0 for a block format

# Per map kind, the codec each classic recipe uses. "bc7-bc7e" rows come from ../shared/baselines (bc7e, slowest
# level; this machine has no BC7 encoder), the rest from our own nvcompress runs.
RECIPES = [
    ("BCn high", "BC7 colour + BC5 normal + BC4 grey", {"colour": "bc7-bc7e", "normal": "bc5-nvtt", "grey": "bc4-nvtt"}),
    ("BCn low", "BC1 colour + BC5 normal + BC4 grey", {"colour": "bc1-nvtt", "normal": "bc5-nvtt", "grey": "bc4-nvtt"}),
] + [("ASTC %dx%d" % (b, b), "astcenc %dx%d for every map" % (b, b), {k: "astc-%dx%d" % (b, b) for k in
                                                                           ("colour", "normal", "grey")})
     for b in (4, 6, 8, 10, 12)]


class Point:
    """One material compressed by one codec setting."""

    def __init__(self, material, series, label, bits, psnr8, **kw):
        self.material, self.series, self.label, self.bits, self.psnr8 = material, series, label, bits, psnr8
        self.per_texture = kw.pop("per_texture", {})  # file stem -> PSNR8 dB
        self.extra = kw

    def get(self, key, default=None):
        return self.extra.get(key, default)


def read_superseded(folder):
    """superseded.txt in the results folder: `FILE  reason` lines (# comments) naming runs the report leaves out,
    e.g. ones made before a default changed, whose series name would mix them with current runs."""
    out = {}
    path = os.path.join(folder, "superseded.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, *reason = line.split(None, 1)
                    out[name] = reason[0].strip() if reason else ""
    return out


class Database:
    def __init__(self):
        self.runs = []          # (file name, results dict)
        self.materials = {}     # name -> summary (width, height, files)
        self.maps = {}          # (material, file, codec) -> row (+ run)
        self.nmc = {}           # (material, series, rate) -> row (+ run)
        self.ntc = []           # CSV rows
        self.shared_maps = []   # CSV rows
        self.shared_materials = []
        self.points = []        # Point
        self.superseded = {}    # results file -> why the report leaves it out (results/superseded.txt)

    # ---- loading ------------------------------------------------------------------------------------------------
    def load_results(self, folder, include_quick=False):
        files = sorted(f for f in glob.glob(os.path.join(folder, "*.json")) if ".tmp-" not in f)
        self.superseded = read_superseded(folder)
        for path in files:
            if os.path.basename(path) in self.superseded:
                continue
            with open(path) as f:
                data = json.load(f)
            if data.get("schema") != "nmc-bench/1":
                continue
            if data["settings"].get("quick") and not include_quick:
                continue
            name = os.path.basename(path)
            data["_file"] = name
            self.runs.append((name, data))
        self.runs.sort(key=lambda r: r[1]["date_start"])  # later runs replace earlier ones' figures
        for name, data in self.runs:
            for m in data["materials"]:
                known = self.materials.get(m["name"])
                if known is None or (known.get("files_from") and not m.get("files_from")):  # prefer pixel-read
                    self.materials[m["name"]] = dict(width=m["width"], height=m["height"], files=m["files"],
                                                     files_from=m.get("files_from"))
                for row in m.get("maps", []):
                    self.maps[(m["name"], row["file"], row["codec"])] = dict(row, run=name)
                for row in m.get("nmc", []):
                    key = (m["name"], nmc_series(row, data), row["rate"])
                    self.nmc[key] = dict(row, run=name, machine=data["machine"])

    def load_baselines(self, folder):
        def read(fn):
            p = os.path.join(folder, fn)
            if not os.path.exists(p):
                return []
            with open(p) as f:
                return list(csv.DictReader(f))
        self.ntc = read("ntc-0.9.2-h200.csv")
        self.shared_maps = read("classic-codecs-maps.csv")
        self.shared_materials = read("classic-codecs-materials.csv")
        for r in self.shared_maps:
            if r["codec"] != "bc7-bc7e" or r["material"] not in self.materials:
                continue
            info = next((f for f in self.materials[r["material"]]["files"] if f["file"] == r["file"]), None)
            if info is None:
                continue
            psnr = float(r["psnr8_stored_channels"])
            self.maps.setdefault((r["material"], r["file"], "bc7-bc7e"), dict(
                file=r["file"], kind=info["kind"], codec="bc7-bc7e", width=info["width"], height=info["height"],
                bits_per_texel=float(r["bits_per_texel"]), channel_mse=[metrics.mse_from_psnr(psnr)] * info["channels"],
                psnr8=min(psnr, metrics.PSNR_CAP_DB), encode_s=float(r["encode_s"]), encode_cpu_s=None,
                command="basisu BC7 (bc7e level 6), ../shared/baselines", run="../shared/baselines"))

    # ---- points ----------------------------------------------------------------------------------------------
    def build_points(self):
        for name, info in sorted(self.materials.items()):
            texels = info["width"] * info["height"]
            for label, description, pick in RECIPES:
                rows = [self.maps.get((name, f["file"], pick[f["kind"]])) for f in info["files"]]
                if not rows or any(r is None for r in rows):
                    continue
                bits = sum(r["bits_per_texel"] * r["width"] * r["height"] for r in rows) / texels * MIP_CHAIN
                mses = [x for r in rows for x in r["channel_mse"]]
                enc = sum(r["encode_s"] for r in rows)
                series = "ASTC" if label.startswith("ASTC") else label
                self.points.append(Point(
                    name, series, label, bits, metrics.pooled_psnr(mses),
                    per_texture={os.path.splitext(r["file"])[0]: r["psnr8"] for r in rows}, encode_s=enc,
                    description=description, codecs="+".join(sorted({r["codec"] for r in rows})),
                    runs=sorted({r["run"] for r in rows})))
        for (name, series, rate), row in sorted(self.nmc.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
            self.points.append(Point(
                name, series, "%s %g bpp" % (series, rate), row["bits_per_texel"], row["psnr8_mip0"],
                per_texture={os.path.splitext(f["file"])[0]: f["psnr8"] for f in row["files"]},
                psnr_float_all_mips=row["validate"].get("psnr_db"), validate_psnr8=row["validate"].get("psnr8_mip0_db"),
                encode_s=row["compress_s"], decode_s=row["decompress_s"], rate=rate, steps=row.get("steps"),
                training_s=(row.get("compress") or {}).get("training_seconds"), device=row.get("device"),
                runs=[row["run"]], machine=row["machine"]))
        for r in self.ntc:
            if r["material"] not in self.materials:
                self.materials[r["material"]] = dict(width=int(r["width"]), height=int(r["height"]), files=[])
            steps = int(r["steps"])
            series = "NTC 0.9.2 %dk steps" % (steps // 1000)
            per = {}
            for item in (r.get("per_texture_psnr8_mip0_fp8") or "").split(";"):
                if "=" in item:
                    k, v = item.split("=", 1)
                    per[k] = float(v)
            self.points.append(Point(
                r["material"], series, "%s %s bpp" % (series, r["preset_bpp"]), float(r["bits_per_texel_mip0"]),
                float(r["psnr8_mip0_fp8"]), per_texture=per, psnr8_int8=float(r["psnr8_mip0_int8"]),
                psnr_float_all_mips=float(r["psnr_all_mips_fp8"]), encode_s=float(r["train_wall_s"]),
                timing_alone=r["timing_alone_on_gpu"], rate=float(r["preset_bpp"]), steps=steps,
                runs=["../shared/baselines/ntc-0.9.2-h200.csv"]))

    # ---- queries ---------------------------------------------------------------------------------------------
    def series_points(self, material, series):
        return sorted((p for p in self.points if p.material == material and p.series == series),
                      key=lambda p: p.bits)

    def series_names(self):
        order = {"nmc": 0, "NTC": 1, "ASTC": 2, "BCn high": 3, "BCn low": 4}
        names = sorted({p.series for p in self.points},
                       key=lambda s: (order.get(s.split(" ")[0] if s.startswith(("nmc", "NTC")) else s, 9), s))
        return names

    def nmc_series(self):
        return [s for s in self.series_names() if s.startswith("nmc")]

    def nmc_materials(self):
        return sorted({p.material for p in self.points if p.series.startswith("nmc")})


def nmc_series(row, data):
    """Series name of an nmc row: device, preset and steps (a GPU run with another preset is another curve), and
    "full latent pyramid" for packs of more than two latent levels that rate control chose (its default until
    2026-12-01; since then it writes two, docs/compressor.md "Two latent levels"); the arithmetic where it is not
    float32; a --latent-shape run is named by its extra arguments already."""
    device = row.get("device") or data["settings"].get("device") or "cpu"
    quality = row.get("quality") or "default"
    steps = row.get("steps")
    tag = "%s %s" % (device.split(":")[0], quality)
    if steps:
        tag += " %s steps" % steps
    if row.get("decode_device", "cpu") != "cpu":
        tag += ", decoded on %s" % row["decode_device"]
    # The decoding arithmetic (spec 5.6), named the same whether it was the default (binary16 since 2026-12-01, float32
    # before) or asked for; results files from before then have it only in their extra arguments, if at all.
    extra, arithmetic, words = [], "float32", (row.get("extra_args") or "").split()
    for i, word in enumerate(words):
        if word.startswith("--arithmetic="):
            arithmetic = word.split("=", 1)[1]
        elif word == "--arithmetic" and i + 1 < len(words):
            arithmetic = words[i + 1]
        elif i == 0 or words[i - 1] != "--arithmetic":
            extra.append(word)
    arithmetic = (row.get("compress") or {}).get("arithmetic") or arithmetic
    if arithmetic != "float32":
        tag += ", %s arithmetic" % arithmetic
    if extra:
        tag += ", " + " ".join(extra)
    levels = ((row.get("compress") or {}).get("latents") or {}).get("levels")
    if levels is not None and levels > 2 and "--latent-shape" not in " ".join(extra):
        tag += ", full latent pyramid"
    return "nmc " + tag


def interpolate(points, x_of, y_of, x):
    """Piecewise-linear y at x over points sorted by x_of; None outside the measured range (no extrapolation)."""
    pts = sorted(((x_of(p), y_of(p)) for p in points), key=lambda t: t[0])
    if not pts or x < pts[0][0] - 1e-9 or x > pts[-1][0] + 1e-9:
        return None
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return pts[0][1]
