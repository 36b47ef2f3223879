#!/usr/bin/python3
"""Self-test of the benchmark driver, no codec needed: builds a tiny results file and baselines folder, runs
`run_benchmarks.py report` on them and checks docs-like markdown and plots come out with the expected figures;
also checks the metric helpers on hand-computed values. Exit 0 pass, 1 fail, 77 skipped (numpy, PIL or
matplotlib missing: usable as a ctest SKIP_RETURN_CODE). Run: /usr/bin/python3 bench/test_report.py
"""

import json
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import matplotlib  # noqa: F401
    import PIL  # noqa: F401
except ImportError as e:
    print("skipped: %s (apt-get install python3-numpy python3-pil python3-matplotlib)" % e)
    sys.exit(77)

import metrics  # noqa: E402
import plots  # noqa: E402
import run_benchmarks  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def test_metrics():
    # MSE 1 code^2 per channel -> 48.13 dB; pooled over channels with MSE 1 and 3 -> mean 2 -> 45.12 dB.
    check(abs(metrics.psnr_from_mse(1.0) - 48.1308) < 1e-3, "psnr of MSE 1")
    check(abs(metrics.pooled_psnr([1.0, 3.0]) - 10 * math.log10(255 ** 2 / 2.0)) < 1e-9, "pooled psnr")
    check(metrics.psnr_from_mse(0.0) == 99.0, "lossless shown as 99 dB")
    # A flat normal (128, 128) rebuilds Z = 1 -> code 255; grey decoded into a grey-as-RGB file fills 3 channels.
    stored = np.zeros((1, 1, 3), np.uint8)
    out = metrics.to_stored_layout("normal", np.array([[[127.5, 127.5]]]), stored)
    check(out[0, 0, 2] == 255 and out[0, 0, 0] == 128, "normal Z rebuild: %s" % out[0, 0].tolist())
    out = metrics.to_stored_layout("grey", np.array([[[7.4]]]), stored)
    check(out[0, 0].tolist() == [7, 7, 7], "grey into RGB layout")


def fixture(folder):
    mse1, mse3 = [1.0, 1.0, 1.0], [1.0]
    maps = []
    for codec, bpt, mse in (("astc-4x4", 8.0, 1.0), ("astc-8x8", 2.0, 16.0), ("bc1-nvtt", 4.0, 9.0)):
        maps.append(dict(file="t_color.png", kind="colour", codec=codec, width=4, height=4, bits_per_texel=bpt,
                         channel_mse=[mse] * 3, psnr8=metrics.psnr_from_mse(mse), encode_s=0.1, encode_cpu_s=0.1,
                         command="x"))
    for codec, bpt, mse in (("astc-4x4", 8.0, 1.0), ("astc-8x8", 2.0, 16.0), ("bc4-nvtt", 4.0, 1.0)):
        maps.append(dict(file="t_rough.png", kind="grey", codec=codec, width=4, height=4, bits_per_texel=bpt,
                         channel_mse=[mse], psnr8=metrics.psnr_from_mse(mse), encode_s=0.1, encode_cpu_s=0.1,
                         command="x"))
    nmc = []
    for rate, bpt, mse in ((2.5, 2.4, 20.0), (5.0, 4.8, 6.0)):
        nmc.append(dict(rate=rate, quality="normal", steps=2000, seed=1, device="cpu", file_bytes=int(bpt * 2),
                        bits_per_texel=bpt, psnr8_mip0=metrics.pooled_psnr([mse] * 4),
                        files=[dict(file="t_color.png", channel_mse=[mse] * 3, psnr8=metrics.psnr_from_mse(mse)),
                               dict(file="t_rough.png", channel_mse=[mse], psnr8=metrics.psnr_from_mse(mse))],
                        validate=dict(psnr8_mip0_db=metrics.pooled_psnr([mse] * 4), psnr_db=40.0),
                        compress=dict(training_seconds=1.0, steps_per_second=2000.0),
                        compress_s=1.5, compress_cpu_s=3.0, decompress_s=0.2, decompress_cpu_s=0.2, command="nmc"))
    machine = dict(cpu="Test CPU", cores=2, memory_gib=1.0, gpus=[], os="test", hostname="t", python="3",
                   load_average_start=[0.1, 0.1, 0.1], load_average_end=[0.2, 0.2, 0.2])
    data = dict(schema="nmc-bench/1", complete=True, date_start="2026-01-01T00:00:00+00:00",
                date_end="2026-01-01T00:01:00+00:00", command="bench/run_benchmarks.py measure --test",
                machine=machine, tools=dict(nmc=dict(version="nmc 0.0.0")),
                settings=dict(quick=False, seed=1, rates=[2.5, 5.0], quality="normal", steps=None, device="cpu",
                              astc_preset="medium", astc_blocks="4,8", codecs=["astc", "nmc", "nvtt"], notes=[]),
                materials=[dict(name="tiny", width=4, height=4,
                                files=[dict(file="t_color.png", kind="colour", width=4, height=4, channels=3),
                                       dict(file="t_rough.png", kind="grey", width=4, height=4, channels=1)],
                                maps=maps, nmc=nmc, errors=[])],
                speed=dict(cpu_decoder_bench=dict(pack="p", kernels=[dict(
                    isa="avx2", all_mips_mtexel_s=2.0, all_mips_per_core=1.0, queries_mtexel_s=1.0,
                    queries_per_core=0.5, threads=2)])))
    os.makedirs(os.path.join(folder, "results"))
    with open(os.path.join(folder, "results", "20260101T000000-test.json"), "w") as f:
        json.dump(data, f)
    base = os.path.join(folder, "baselines")
    os.makedirs(base)
    with open(os.path.join(base, "ntc-0.9.2-h200.csv"), "w") as f:
        f.write("material,width,height,ntc_channels,mips,preset_bpp,steps,file_bytes,bits_per_texel_mip0,"
                "bits_per_texel_all_mips,psnr_all_mips_fp8,psnr_all_mips_int8,psnr8_mip0_fp8,psnr8_mip0_int8,"
                "train_wall_s,timing_alone_on_gpu,per_texture_psnr8_mip0_fp8\n")
        f.write("tiny,4,4,4,3,2.5,20000,5,2.5,1.9,41.0,41.1,42.0,42.1,3.0,yes,t_color=41.0;t_rough=45.0\n")
        f.write("tiny,4,4,4,3,5.0,20000,10,5.0,3.8,44.0,44.1,45.0,45.1,3.0,yes,t_color=44.0;t_rough=47.0\n")
    with open(os.path.join(base, "classic-codecs-maps.csv"), "w") as f:
        f.write("material,file,kind,codec,format,bits_per_texel,psnr8_format_channels,psnr8_stored_channels,"
                "normal_angle_deg,encode_s\n")
        f.write("tiny,t_color.png,color,bc7-bc7e,BC7,8.0,50.0,%.6f,,1.0\n" % metrics.psnr_from_mse(1.0))


def test_report():
    with tempfile.TemporaryDirectory() as tmp:
        fixture(tmp)
        out = os.path.join(tmp, "benchmarks.md")
        plot_dir = os.path.join(tmp, "plots")
        run_benchmarks.main(["report", "--results", os.path.join(tmp, "results"), "--baselines",
                             os.path.join(tmp, "baselines"), "--out", out, "--plots", plot_dir])
        text = open(out).read()
        for needle in ("# Benchmarks", "## Summary", "## Where nmc loses", "### tiny", "## Speed", "Test CPU",
                       "NTC 0.9.2 20k steps", "BCn high", "BCn low", "ASTC", "nmc cpu normal 2000 steps",
                       "bench/run_benchmarks.py measure --test", "differ by at most 0 dB"):
            check(needle in text, "markdown mentions %r" % needle)
        # BCn high for tiny: BC7 colour (8 bpt, MSE 1 x3) + BC4 grey (4 bpt, MSE 1): (8 + 4) * 4/3 = 16 bits,
        # PSNR of MSE 1 = 48.13 dB.
        check("| BCn high | BC7 colour + BC5 normal + BC4 grey | 1 | 16.00 | 48.13 |" in text,
              "BCn high row (16.00 bits, 48.13 dB)")
        # No run log is copied in; the page says where its figures come from, and stays short.
        check("20260101T000000-test.json" in text and "```" not in text, "source file named, no inlined log")
        check("scripts/gpu-check.sh" in text, "how-measured paragraph names scripts/gpu-check.sh")
        # nmc at 4.8 bits vs NTC 20k interpolated at 4.8 bits: 42 + 3 * (2.3 / 2.5) = 44.76 dB.
        check("44.76" in text, "NTC interpolated at nmc's rate")
        for name in ("tiny.png", "overview.png"):
            check(os.path.getsize(os.path.join(plot_dir, name)) > 1000, "plot %s written" % name)
        # A results file named in superseded.txt is left out, and the report says so with the reason.
        with open(os.path.join(tmp, "results", "superseded.txt"), "w") as f:
            f.write("# comment\n20260101T000000-test.json  made before a default changed\n")
        run_benchmarks.main(["report", "--results", os.path.join(tmp, "results"), "--baselines",
                             os.path.join(tmp, "baselines"), "--out", out, "--plots", plot_dir])
        text = open(out).read()
        check("(0 results files used)" in text and "made before a default changed" in text, "superseded run left out")
        check("nmc cpu normal 2000 steps" not in text, "superseded run's series gone")


def test_plot_styles():
    # An nmc series keeps its colour whichever panel draws it: the k-th nmc series of the report, not of the plot.
    names = ["nmc a", "NTC 0.9.2 20k steps", "nmc b", "nmc c"]
    check(plots.style_of("nmc b", names)[0] == plots.NMC_COLOURS[1], "second nmc series, second colour")
    check(plots.style_of("nmc c", names)[0] == plots.NMC_COLOURS[2], "third nmc series, third colour")
    check(plots.style_of("NTC 0.9.2 20k steps", names) == plots.STYLE["NTC 0.9.2 20k"], "NTC style fixed")
    # Every series of a plot gets its own colour: the two NTC step counts, ASTC, BCn and the nmc series all differ.
    every = names + ["NTC 0.9.2 100k steps", "ASTC", "BCn high", "BCn low"]
    colours = [plots.style_of(n, names + ["NTC 0.9.2 100k steps"])[0] for n in every]
    check(len(set(colours)) == len(every), "distinct colours: %s" % colours)


def test_series_names():
    # The arithmetic names a series the same whether the run asked for it or took the default (compress's JSON says
    # which); a run from before format 2.0 with neither is float32, which stays unnamed.
    import results_db
    data = {"settings": {"device": "cuda"}}
    base = {"device": "cuda:0", "quality": "best", "steps": 100000}
    asked = dict(base, extra_args="--arithmetic=binary16")
    asked_apart = dict(base, extra_args="--normal-mode xyz --arithmetic binary16")
    default = dict(base, compress={"arithmetic": "binary16"})
    old = dict(base, extra_args="--normal-mode xyz")
    name = "nmc cuda best 100000 steps, binary16 arithmetic"
    check(results_db.nmc_series(asked, data) == name, "asked binary16: %s" % results_db.nmc_series(asked, data))
    check(results_db.nmc_series(default, data) == name, "default binary16: %s" % results_db.nmc_series(default, data))
    check(results_db.nmc_series(asked_apart, data) == name + ", --normal-mode xyz",
          "binary16 among other flags: %s" % results_db.nmc_series(asked_apart, data))
    check(results_db.nmc_series(old, data) == "nmc cuda best 100000 steps, --normal-mode xyz",
          "float32 unnamed: %s" % results_db.nmc_series(old, data))


def test_cuda_decoder_table_choice():
    # The newest GPU run with the whole CUDA decoder table (timing variants included) wins over a newer check-mode run
    # that printed only the table's tail; with no whole table, the newest partial one is used.
    import report
    whole = ("== [0s] machine: GPU A\n== [1s] bench: CUDA decoder (x)\nheader\n"
             "fp8    variant full_3_blocks                         4.404         5.08      19.6%\n"
             "fp8    full decode, binary16, tiled kernel           1.514        14.78      56.8%\n== [2s] done\n")
    tail = ("== [0s] machine: GPU B\n== [1s] bench: CUDA decoder (x)\n"
            "fp8    full decode, binary16, tiled kernel           1.506        14.85      57.2%\n== [2s] done\n")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("20260101T0000-h200-gpu-check-decoder.txt", whole),
                           ("20260102T0000-h200-gpu-check.txt", tail)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        found = report._cuda_decoder_bench_from_gpu_check(tmp)
        check(found is not None and found[0] == "20260101T0000-h200-gpu-check-decoder.txt" and
              len(found[2]["rows"]) == 2, "whole table preferred: %s" % (found and found[0]))
        with open(os.path.join(tmp, "20260103T0000-h200-gpu-check.txt"), "w") as f:
            f.write(whole.replace("GPU A", "GPU C"))
        found = report._cuda_decoder_bench_from_gpu_check(tmp)
        check(found is not None and found[0] == "20260103T0000-h200-gpu-check.txt" and found[1] == "GPU C",
              "the newest whole table: %s" % (found and found[0]))
        os.remove(os.path.join(tmp, "20260103T0000-h200-gpu-check.txt"))
        os.remove(os.path.join(tmp, "20260101T0000-h200-gpu-check-decoder.txt"))
        found = report._cuda_decoder_bench_from_gpu_check(tmp)
        check(found is not None and found[0] == "20260102T0000-h200-gpu-check.txt" and found[1] == "GPU B",
              "partial table as the fallback: %s" % (found and found[0]))


if __name__ == "__main__":
    test_metrics()
    test_report()
    test_plot_styles()
    test_series_names()
    test_cuda_decoder_table_choice()
    print("FAILED: %d" % len(FAILURES) if FAILURES else "ok")
    sys.exit(1 if FAILURES else 0)
