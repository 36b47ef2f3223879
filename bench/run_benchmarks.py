#!/usr/bin/python3
"""nmc's benchmark suite: `measure` runs nmc and the classic codecs on materials and writes a raw results file
under bench/results/; `report` regenerates docs/benchmarks.md and docs/bench-plots/*.png from every results file
plus ../shared/baselines (NTC 0.9.2 on an H200, BC7). Run with Debian's /usr/bin/python3 (python3-numpy,
python3-pil, python3-matplotlib). See bench/README.md.

  bench/run_benchmarks.py measure --quick               # smoke run: 2 small materials, 2 rates, few steps
  bench/run_benchmarks.py measure --codecs astc,nvtt    # classic codecs on every material
  bench/run_benchmarks.py measure --codecs nmc --smallest 2 --rates 1.5,2.5,5,10
  bench/run_benchmarks.py measure --codecs nmc --device cuda --quality best --speed   # on the GPU machine
  bench/run_benchmarks.py report                        # docs/benchmarks.md + docs/bench-plots/
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def default_shared():
    for p in (os.path.join(REPO, "..", "shared"), os.path.join(REPO, "shared")):
        if os.path.isdir(os.path.join(p, "materials")):
            return os.path.abspath(p)
    return os.path.abspath(os.path.join(REPO, "..", "shared"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    shared = default_shared()

    m = sub.add_parser("measure", help="measure codecs on materials and write bench/results/<date>-<host>.json")
    m.add_argument("--materials", default=os.path.join(shared, "materials"),
                   help="a folder of material folders, or one material folder (default: ../shared/materials)")
    m.add_argument("--only", help="comma list of material folder names")
    m.add_argument("--smallest", type=int, default=0, help="only the N smallest materials (by mip-0 texels)")
    m.add_argument("--codecs", default="nmc,astc,nvtt", help="comma list of nmc, astc, nvtt (default: all)")
    m.add_argument("--rates", help="nmc --bpp values (default 1.5,2.5,5,10; --quick 2.5,5)")
    m.add_argument("--ntc-sizes", action="store_true",
                   help="for each rate NTC measured on a material (2.5, 5, 10), give nmc NTC's file size as the budget "
                        "(its bits per mip-0 texel at 100k steps) instead of the nominal rate")
    m.add_argument("--deadline", type=float, help="Unix time after which no further material is started (for "
                                                  "runs inside a time-limited call; the results file says so)")
    m.add_argument("--nmc-args", default="", help="extra `nmc compress` flags, e.g. '--normal-mode xyz' (they name "
                                                  "their own series in the report)")
    m.add_argument("--quality", default="normal", help="nmc --quality preset (default normal)")
    m.add_argument("--steps", type=int, help="nmc --steps (default: the preset's; --quick 200)")
    m.add_argument("--seed", type=int, default=1, help="nmc --seed (default 1)")
    m.add_argument("--device", default="cpu", help="nmc --device for compression: cpu, cuda, cuda:N")
    m.add_argument("--astc-preset", help="astcenc preset (default medium; --quick fast; ../shared used thorough)")
    m.add_argument("--astc-blocks", default="4,6,8,10,12", help="square ASTC block sizes (default 4,6,8,10,12)")
    m.add_argument("--threads", type=int, default=0, help="astcenc -j (0: its default, every core)")
    m.add_argument("--speed", action="store_true", help="also run the CPU decoder benchmark (nmc_cpu_decoder_bench)")
    m.add_argument("--quick", action="store_true", help="smoke run: 2 smallest materials, rates 2.5,5, 200 steps, "
                   "astcenc -fast; written as *-quick.json, which the report leaves out unless --include-quick")
    m.add_argument("--nmc", help="the nmc binary (default: $NMC, else the newest build*/cli/nmc with compress)")
    m.add_argument("--decode-device", default="cpu", help="nmc decompress --device (default cpu)")
    m.add_argument("--decoder-bench", help="nmc_cpu_decoder_bench (default: newest build*/bench/...)")
    m.add_argument("--cuda-decoder-bench", help="nmc_cuda_decoder_bench, run by --speed when found "
                   "(default: $NMC_CUDA_DECODER_BENCH, else newest build*/bench/...)")
    m.add_argument("--note", action="append", default=[], help="a line for the results file's notes, e.g. that "
                   "other runs shared the GPU (repeatable)")
    m.add_argument("--label", help="name part of the results file (default: the host name)")
    m.add_argument("-o", "--out", help="results file (default bench/results/<UTC time>-<label>[-quick].json)")

    r = sub.add_parser("report", help="regenerate docs/benchmarks.md and docs/bench-plots/ from all results")
    r.add_argument("--results", default=os.path.join(HERE, "results"), help="folder of results files")
    r.add_argument("--baselines", default=os.path.join(shared, "baselines"), help="../shared/baselines")
    r.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    r.add_argument("--plots", default=os.path.join(REPO, "docs", "bench-plots"))
    r.add_argument("--include-quick", action="store_true", help="also use --quick results files")

    opt = ap.parse_args(argv)
    if opt.command == "measure":
        import measure
        measure.measure(opt, REPO)
    else:
        import report
        report.generate(opt, REPO)
    return 0


if __name__ == "__main__":
    sys.exit(main())
