#!/usr/bin/env python3
"""Table of a `scripts/gpu-check.sh sweep` run: one row per `nmc compress` of the sweep file, grouped by material
in the sweep file's order, with each run's difference to the material's first row. Where nmc reported its
quantisation trace, the last columns show it: the training model's PSNR with float latents and weights, then what
rounding the latents, the fine-tune after it, and rounding the weights changed (dB).

usage: bench/sweep_table.py SWEEP.jsonl [...]
"""
import json
import sys


def rows_of(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def trace_columns(trace):
    """float-model PSNR, then the change from rounding the latents, from the fine-tune, from rounding the weights."""
    keys = ("float_model_db", "rounded_latents_db", "before_weight_rounding_db", "rounded_weights_db")
    if not trace or any(trace.get(k) is None for k in keys):
        return ""
    values = [trace[k] for k in keys]
    return " %7.2f %+6.2f %+6.2f %+6.2f" % (values[0], values[1] - values[0], values[2] - values[1],
                                            values[3] - values[2])


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__.strip())
    by_material = {}
    rows = sorted(rows_of(argv[1:]), key=lambda r: r.get("index", 0))
    for row in rows:
        by_material.setdefault(row["material"], []).append(row)
    width = max([len("flags")] + [len(r["flags"]) for r in rows])
    print("%-38s %-*s %6s %7s %7s %7s %-10s %7s %7s %6s %6s %6s" % (
        "material", width, "flags", "bpt", "psnr", "psnr8", "d psnr8", "S,F,b", "train s", "float", "latq", "tune",
        "wq"))
    for material, runs in by_material.items():
        reference = None
        for row in runs:
            r = row["result"]
            if row["rc"] != 0 or "psnr8_mip0_db" not in r:
                last_line = (r.get("error", "").strip().splitlines() or [""])[-1]
                print("%-38s %-*s FAILED (rc %d): %s" % (material, width, row["flags"], row["rc"], last_line))
                continue
            if reference is None:
                reference = r["psnr8_mip0_db"]
            shape = r.get("latents", {})
            print("%-38s %-*s %6.3f %7.2f %7.2f %+7.2f %-10s %7.1f%s" % (
                material[:38], width, row["flags"], r["bits_per_texel"], r["psnr_db"], r["psnr8_mip0_db"],
                r["psnr8_mip0_db"] - reference,
                "%s,%s,%s" % (shape.get("grid_scale"), shape.get("features"), shape.get("bits")),
                r.get("training_seconds", 0), trace_columns(r.get("quantisation_trace"))))


if __name__ == "__main__":
    main(sys.argv)
