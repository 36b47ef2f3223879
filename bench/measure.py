"""`run_benchmarks.py measure`: runs the codecs on every material and writes one raw results file (JSON) with the
machine, tool versions, seeds and exact command. Per map for the classic codecs (material recipes are formed by
the report), per material and rate for nmc; optionally the CPU decoder's throughput. The file is rewritten after
every map and nmc rate, with "complete": false until the run ends, so a long run that is stopped keeps what it measured.
"""

import csv
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import codec_runners as cr
import environment
import metrics
from materials import Material, find_materials, material_texels, summary_from_scan

SCHEMA = "nmc-bench/1"


def _write_json(path, data):
    tmp = path + ".tmp-%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def _log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def select_materials(opt):
    folders = find_materials(opt.materials)
    if opt.only:
        wanted = [w.strip() for w in opt.only.split(",") if w.strip()]
        folders = [f for f in folders if os.path.basename(f) in wanted]
        missing = set(wanted) - {os.path.basename(f) for f in folders}
        if missing:
            raise SystemExit("measure: no material named %s under %s" % (", ".join(sorted(missing)), opt.materials))
    if opt.smallest:
        folders = sorted(folders, key=lambda f: (material_texels(f), os.path.basename(f)))[:opt.smallest]
    return folders


def measure_classic(material, codecs, log_prefix, rows, errors, save):
    """Every applicable codec on every map: bits per texel (mip 0 only; the report adds the mip chain), per-channel
    MSE in the source layout, encode wall and CPU time. Appends to rows/errors and calls save() after each map."""
    for m in material.maps:
        with tempfile.TemporaryDirectory(prefix="nmcbench_") as work:
            for codec in codecs:
                if not codec.applies(m.kind):
                    continue
                try:
                    out, wall, cpu, cmd = codec.encode(m, work)
                    decoded = codec.decode(m, out, work)
                    stored = metrics.to_stored_layout(m.kind, decoded, m.stored)
                    mse = metrics.channel_mse(m.stored, stored)
                    rows.append(dict(file=m.file, kind=m.kind, codec=codec.name, width=m.width, height=m.height,
                                     bits_per_texel=codec.bits_per_texel(m, out), channel_mse=mse,
                                     psnr8=metrics.pooled_psnr(mse), encode_s=round(wall, 4),
                                     encode_cpu_s=round(cpu, 4),
                                     command=" ".join(os.path.basename(c) if i == 0 else
                                                      (os.path.basename(c) if os.path.sep in c else c)
                                                      for i, c in enumerate(cmd))))
                    _log("%s %s %s: %.3f bpt, %.2f dB, %.2f s" % (log_prefix, m.file, codec.name,
                                                                  rows[-1]["bits_per_texel"], rows[-1]["psnr8"], wall))
                except Exception as e:  # one failing codec must not lose the run: recorded and reported
                    errors.append(dict(file=m.file, codec=codec.name, error=str(e).splitlines()[0][:500]))
                    _log("%s %s %s FAILED: %s" % (log_prefix, m.file, codec.name, errors[-1]["error"]))
        save()


def measure_nmc(nmc, material, opt, log_prefix, rows, errors, save):
    """nmc at every rate: compress, decompress, PSNR8 from the written files, validate. Saves after each rate."""
    for rate in opt.rate_list:
        budget = opt.ntc_budgets.get((material.name, rate), rate)
        with tempfile.TemporaryDirectory(prefix="nmcbench_") as work:
            pack = os.path.join(work, material.name + ".nmc")
            out_dir = os.path.join(work, "decoded")
            try:
                cmd, c_wall, c_cpu, info = nmc.compress(material.folder, pack, budget, opt.seed, opt.quality,
                                                       opt.steps, opt.device, opt.nmc_arg_list)
                d_cmd, d_wall, d_cpu = nmc.decompress(pack, out_dir, opt.decode_device)
                files, all_mse = [], []
                for m in material.maps if cr.HAVE_IMAGING else []:
                    path = os.path.join(out_dir, m.stem + ".png")
                    decoded = cr.read_png(path)
                    if decoded.shape != m.stored.shape:
                        raise RuntimeError("%s: decoded %s, source %s" % (path, decoded.shape, m.stored.shape))
                    mse = metrics.channel_mse(m.stored, decoded)
                    all_mse += mse
                    files.append(dict(file=m.file, channel_mse=mse, psnr8=metrics.pooled_psnr(mse)))
                v_start = time.perf_counter()
                report = nmc.validate(pack, material.folder)
                v_wall = time.perf_counter() - v_start
                q = report.get("quality") or {}
                size = os.path.getsize(pack)
                if not cr.HAVE_IMAGING:  # the same metric, computed by nmc validate instead of here
                    files = [dict(file=t["file"], psnr8=t["psnr8_mip0_db"]) for t in q.get("textures", [])]
                keep = {k: info.get(k) for k in ("file_bytes", "bits_per_texel", "target_bpp", "psnr_db",
                                                 "psnr8_mip0_db", "latents", "preset", "steps", "device",
                                                 "training_seconds", "steps_per_second", "ratio_vs_bcn",
                                                 "arithmetic")}
                rows.append(dict(
                    rate=rate, budget_bpp=budget, extra_args=" ".join(opt.nmc_arg_list), quality=info.get("preset", opt.quality), steps=info.get("steps", opt.steps),
                    seed=opt.seed, device=info.get("device", opt.device), file_bytes=size,
                    bits_per_texel=size * 8.0 / material.texels, files=files,
                    psnr8_mip0=metrics.pooled_psnr(all_mse) if all_mse else q.get("psnr8_mip0_db"),
                    metric_source="decoded files" if all_mse else "nmc validate",
                    validate=dict(psnr8_mip0_db=q.get("psnr8_mip0_db"), psnr_db=q.get("psnr_db"),
                                  verdict=report.get("verdict"), decoder=report.get("decoder"),
                                  wall_s=round(v_wall, 3)),
                    compress=keep, compress_s=round(c_wall, 3), compress_cpu_s=round(c_cpu, 3),
                    decompress_s=round(d_wall, 3), decompress_cpu_s=round(d_cpu, 3),
                    decode_device=opt.decode_device,
                    command=" ".join(shlex.quote(c) for c in
                                     ["nmc"] + cmd[1:2] + [material.name] + ["-o", material.name + ".nmc"] + cmd[5:])))
                _log("%s nmc %.4g bpp: %.3f bpt, %.2f dB (validate %.2f), compress %.1f s, decompress %.2f s" % (
                    log_prefix, rate, rows[-1]["bits_per_texel"], rows[-1]["psnr8_mip0"],
                    q.get("psnr8_mip0_db") or float("nan"), c_wall, d_wall))
            except Exception as e:
                errors.append(dict(codec="nmc", rate=rate, error=str(e).strip()[:800]))
                _log("%s nmc %.4g FAILED: %s" % (log_prefix, rate, errors[-1]["error"]))
        save()


class _ScannedMaterial:
    """What measure_nmc needs of a Material, from `nmc scan` (no pixels read)."""

    def __init__(self, folder, summary):
        self.folder = os.path.abspath(folder)
        self.name = summary["name"]
        self.texels = summary["width"] * summary["height"]
        self.maps = []


def ntc_budgets(opt):
    """(material, NTC preset bpp) -> bits per mip-0 texel of NTC's file at its longest run, from the baseline CSV."""
    path = os.path.join(os.path.dirname(os.path.abspath(opt.materials.rstrip("/"))), "baselines",
                        "ntc-0.9.2-h200.csv")
    if not os.path.exists(path):
        raise SystemExit("--ntc-sizes: %s not found" % path)
    budgets, steps = {}, {}
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["material"], float(row["preset_bpp"]))
            if int(row["steps"]) >= steps.get(key, -1):
                steps[key] = int(row["steps"])
                budgets[key] = float(row["bits_per_texel_mip0"])
    return budgets


def find_decoder_bench(repo, name="nmc_cpu_decoder_bench"):
    env = os.environ.get("NMC_DECODER_BENCH" if name == "nmc_cpu_decoder_bench" else "NMC_CUDA_DECODER_BENCH")
    if env:
        return env
    found = sorted(glob.glob(os.path.join(repo, "build*", "bench", name)),
                   key=os.path.getmtime, reverse=True)
    return found[0] if found else None


def run_decoder_bench(path, parse):
    wall, cpu, text = cr.run_timed([path])
    parsed = parse(text)
    parsed.update(path=environment.recorded_path(path), sha256=environment.sha256_of(path), wall_s=round(wall, 2))
    return parsed


def measure(opt, repo):
    if opt.quick:
        opt.smallest = opt.smallest or (None if opt.only else 2)
        opt.rates = opt.rates or "2.5,5"
        opt.steps = opt.steps or 200
        opt.astc_preset = opt.astc_preset or "fast"
    opt.rates = opt.rates or "1.5,2.5,5,10"
    opt.astc_preset = opt.astc_preset or "medium"
    opt.rate_list = [float(r) for r in opt.rates.split(",") if r.strip()]
    opt.nmc_arg_list = shlex.split(getattr(opt, "nmc_args", "") or "")
    opt.ntc_budgets = ntc_budgets(opt) if getattr(opt, "ntc_sizes", False) else {}
    wanted = {c.strip() for c in opt.codecs.split(",") if c.strip()}
    if not cr.HAVE_IMAGING and wanted - {"nmc"}:
        raise SystemExit("measure: astc/nvtt need python3-numpy and python3-pil (apt-get install python3-numpy "
                         "python3-pil); without them only --codecs nmc runs (PSNR8 from nmc validate)")

    astcenc = cr.find_tool("ASTCENC", ["astcenc", "astcenc-avx2", "astcenc-sse4.1", "astcenc-sse2"])
    nvcompress = cr.find_tool("NVCOMPRESS", ["nvcompress"])
    nmc_path = opt.nmc or cr.find_nmc(repo) if "nmc" in wanted else None
    notes = [] if cr.HAVE_IMAGING else ["numpy/PIL missing: nmc PSNR8 and per-texture figures taken from "
                                        "`nmc validate --json` (the same definition)"]
    notes += getattr(opt, "note", None) or []
    classic = []
    if "astc" in wanted:
        if astcenc:
            blocks = [int(b) for b in opt.astc_blocks.split(",")]
            classic += [cr.Astc(astcenc, b, opt.astc_preset, opt.threads) for b in blocks]
        else:
            notes.append("astcenc not found: ASTC skipped")
    if "nvtt" in wanted:
        if nvcompress:
            classic += [cr.Nvtt(nvcompress, f) for f in ("bc1", "bc4", "bc5")]
        else:
            notes.append("nvcompress not found: BC1/BC4/BC5 skipped")
    nmc = None
    snapshot_dir = None
    if "nmc" in wanted:
        if not nmc_path:
            notes.append("no nmc with a working `compress` found: nmc skipped")
        else:
            # The build tree is rebuilt by others while a long run goes on: run a private copy of the binary.
            snapshot_dir = tempfile.mkdtemp(prefix="nmcbench_bin_")
            shutil.copy2(nmc_path, os.path.join(snapshot_dir, "nmc"))
            nmc = cr.Nmc(os.path.join(snapshot_dir, "nmc"))
            if opt.steps and not nmc.has_flag("--steps"):
                notes.append("this nmc has no --steps: preset's step count used")
                opt.steps = None
            if opt.quality and not nmc.has_flag("--quality"):
                notes.append("this nmc has no --quality: its default used")
                opt.quality = None

    folders = select_materials(opt)
    started = environment.now_utc()
    stamp = started.replace(":", "").replace("-", "")[:15]
    out = opt.out or os.path.join(repo, "bench", "results", "%s-%s%s.json" % (
        stamp, opt.label or environment.platform.node() or "run", "-quick" if opt.quick else ""))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tools = environment.tool_versions(nmc_path if nmc else None, astcenc if "astc" in wanted else None,
                                      nvcompress if "nvtt" in wanted else None)
    result = dict(
        schema=SCHEMA, complete=False, date_start=started, date_end=None,
        command=" ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], repo)] + sys.argv[1:]),
        machine=environment.machine(), tools=tools,
        settings=dict(quick=bool(opt.quick), seed=opt.seed, rates=opt.rate_list if nmc else [],
                      ntc_sizes=bool(opt.ntc_budgets), nmc_args=" ".join(opt.nmc_arg_list),
                      quality=opt.quality, steps=opt.steps, device=opt.device, decode_device=opt.decode_device,
                      astc_preset=opt.astc_preset,
                      astc_blocks=opt.astc_blocks, astc_threads=opt.threads or "astcenc default (all cores)",
                      codecs=sorted(wanted), materials_root=environment.recorded_path(opt.materials),
                      bc_decode="palette interpolation truncated (as nvdecompress)", notes=notes),
        materials=[], speed={})
    _log("results -> %s" % out)
    _write_json(out, result)
    try:
        if opt.speed:
            bench = opt.decoder_bench or find_decoder_bench(repo)
            if bench:
                _log("CPU decoder benchmark: %s" % bench)
                result["speed"]["cpu_decoder_bench"] = run_decoder_bench(bench, environment.parse_decoder_bench)
            else:
                notes.append("no nmc_cpu_decoder_bench found: build it with "
                             "`cmake --build build --target nmc_cpu_decoder_bench` (Release)")
            cuda_bench = opt.cuda_decoder_bench or find_decoder_bench(repo, "nmc_cuda_decoder_bench")
            if cuda_bench:
                _log("CUDA decoder benchmark: %s" % cuda_bench)
                result["speed"]["cuda_decoder_bench"] = run_decoder_bench(
                    cuda_bench, environment.parse_cuda_decoder_bench)
            _write_json(out, result)
        for i, folder in enumerate(folders):
            if getattr(opt, "deadline", None) and time.time() > opt.deadline:
                notes.append("stopped at the --deadline before %d of %d materials" % (len(folders) - i, len(folders)))
                _log("deadline reached: %d materials left out" % (len(folders) - i))
                break
            if cr.HAVE_IMAGING:
                material = Material(folder)
                entry = material.summary()
            else:
                entry = summary_from_scan(nmc.tool, folder)
                material = _ScannedMaterial(folder, entry)
            prefix = "[%d/%d %s]" % (i + 1, len(folders), material.name)
            entry.update(maps=[], nmc=[], errors=[])
            result["materials"].append(entry)
            save = lambda: _write_json(out, result)  # noqa: E731
            if classic:
                measure_classic(material, classic, prefix, entry["maps"], entry["errors"], save)
            if nmc:
                measure_nmc(nmc, material, opt, prefix, entry["nmc"], entry["errors"], save)
        result["complete"] = True
    finally:
        result["date_end"] = environment.now_utc()
        result["machine"]["load_average_end"] = os.getloadavg()
        _write_json(out, result)
        if snapshot_dir:
            shutil.rmtree(snapshot_dir, ignore_errors=True)
    _log("done: %s" % out)
    return out
