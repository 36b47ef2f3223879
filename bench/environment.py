"""What a results file records about where and with what it was measured: machine (CPU model, cores, memory,
GPU, load average), OS, tool versions (nmc, astcenc, nvcompress), and the CPU decoder benchmark's output parsed.
"""

import datetime
import hashlib
import os
import platform
import re
import shutil
import subprocess

from codec_runners import dpkg_version


def _first_line(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        for line in p.stdout.decode("utf-8", "replace").splitlines():
            if line.strip():
                return line.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1048576.0, 1)
    except OSError:
        pass
    return None


def gpus():
    if not shutil.which("nvidia-smi"):
        return []
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
        return [line.strip() for line in p.stdout.decode().splitlines() if line.strip()]
    except (OSError, subprocess.TimeoutExpired):
        return []


def os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def machine():
    return dict(cpu=cpu_model(), cores=os.cpu_count(), memory_gib=memory_gib(), gpus=gpus(), os=os_name(),
                hostname=platform.node(), python=platform.python_version(), load_average_start=os.getloadavg())


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def recorded_path(path):
    """A path as results files record it: relative to the repository (../shared for the shared folder) when it
    lies in or beside it, so results do not carry one machine's checkout location; absolute otherwise."""
    full = os.path.abspath(path)
    parent = os.path.dirname(REPO)
    if full == REPO or full.startswith(REPO + os.sep):
        return os.path.relpath(full, REPO)
    if full.startswith(parent + os.sep):
        return os.path.relpath(full, REPO)
    return full


def tool_versions(nmc=None, astcenc=None, nvcompress=None):
    out = {}
    if nmc:
        out["nmc"] = dict(path=recorded_path(nmc), version=_first_line([nmc, "--version"]), sha256=sha256_of(nmc))
    if astcenc:
        out["astcenc"] = dict(path=astcenc, version=_first_line([astcenc, "-version"]),
                              package=dpkg_version("astcenc"))
    if nvcompress:
        out["nvcompress"] = dict(path=nvcompress, version=_first_line([nvcompress]),
                                 package=dpkg_version("libnvtt-bin"))
    return out


_BENCH_LINE = re.compile(r"^(\S+)\s+all mips:\s*([\d.]+) Mtexel/s(?: \(\s*([\d.]+) per core\))?\s+random queries:"
                         r"\s*([\d.]+) Mtexel/s(?: \(\s*([\d.]+) per core\))?\s+(\d+) threads")


_CUDA_LINE = re.compile(r"^(fp8|fp16|cpu)\s+(.+?)\s{2,}([\d.]+)\s+([\d.]+)")


def parse_cuda_decoder_bench(text):
    """nmc_cuda_decoder_bench output -> {'device': first line, 'rows': [{path, what, ms, gtexel_s}], 'raw'}."""
    lines = text.splitlines()
    rows = []
    for line in lines:
        m = _CUDA_LINE.match(line.strip())
        if m:
            rows.append(dict(path=m.group(1), what=m.group(2).strip(), ms=float(m.group(3)),
                             gtexel_s=float(m.group(4))))
    return dict(device=lines[0].strip() if lines else "", rows=rows, raw=text)


def parse_decoder_bench(text):
    """nmc_cpu_decoder_bench output -> {'pack': first line, 'kernels': [{isa, all_mips_mtexel_s, ...}]}."""
    lines = text.splitlines()
    rows = []
    for line in lines:
        m = _BENCH_LINE.match(line.strip())
        if m:
            f = lambda x: float(x) if x else None  # noqa: E731
            rows.append(dict(isa=m.group(1), all_mips_mtexel_s=f(m.group(2)), all_mips_per_core=f(m.group(3)),
                             queries_mtexel_s=f(m.group(4)), queries_per_core=f(m.group(5)),
                             threads=int(m.group(6))))
        elif "unavailable" in line:
            rows.append(dict(isa=line.split()[0], unavailable=line.strip()))
    return dict(pack=lines[0].strip() if lines else "", kernels=rows, raw=text)
