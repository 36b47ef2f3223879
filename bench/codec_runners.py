"""The codecs the benchmark runs, each as encode (timed) + decode back to 8-bit codes: ARM astcenc (ASTC, every
map), NVIDIA Texture Tools' nvcompress (BC1 colour, BC4 grey, BC5 normal; DDS decoded here with numpy) and nmc
itself through its CLI (compress, decompress, validate). Tools are found on PATH or through the environment
variables ASTCENC, NVCOMPRESS and NMC.
"""

import glob
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import time

try:  # nmc-only runs (e.g. on the GPU machine) work without numpy/PIL, taking PSNR8 from `nmc validate`
    import numpy as np
    from PIL import Image
    HAVE_IMAGING = True
except ImportError:
    np = Image = None
    HAVE_IMAGING = False

ASTC_BLOCKS = (4, 6, 8, 10, 12)


def find_tool(env, names):
    path = os.environ.get(env)
    if path:
        return path if os.access(path, os.X_OK) else None
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def run_timed(cmd, cwd=None, check=True, stdout_only=False):
    """Runs cmd; returns (wall seconds, CPU seconds of the child (user + sys), its output text: stdout and stderr
    together, or stdout alone with stdout_only)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE if stdout_only else subprocess.STDOUT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = p.stdout.decode("utf-8", "replace")
    if check and p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace") if stdout_only else text
        raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), err[-3000:]))
    return wall, cpu, text


def save_png(array, path):
    a = np.ascontiguousarray(array)
    if a.ndim == 3 and a.shape[-1] == 1:
        a = a[..., 0]
    Image.fromarray(a).save(path, compress_level=1)


def read_png(path):
    with Image.open(path) as im:
        a = np.asarray(im)
    return a[..., None] if a.ndim == 2 else a


def dpkg_version(package):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout.decode().strip()
        return out or None
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------------------------
# DDS (the blocks of mip 0) and BC1 / BC4 / BC5 decoding. Interpolated palette entries are truncated by integer
# division, as nvdecompress and rgbcx decode them (../shared/baselines used the same rule, so the BC7 figures
# taken from there and ours agree on it; a GPU's exact UNORM interpolation scores 0.3-0.75 dB lower on BC4/BC5).

_DDS_FOURCC = {b"DXT1": "BC1", b"ATI1": "BC4", b"BC4U": "BC4", b"ATI2": "BC5", b"BC5U": "BC5"}
_DDS_DXGI = {70: "BC1", 71: "BC1", 72: "BC1", 79: "BC4", 80: "BC4", 82: "BC5", 83: "BC5"}
_BLOCK_BYTES = {"BC1": 8, "BC4": 8, "BC5": 16}


def read_dds_mip0(path):
    """-> (format, width, height, blocks as (n, block bytes) uint8), blocks in row-major block order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 128 or data[:4] != b"DDS ":
        raise ValueError("%s: not a DDS file" % path)
    height, width = struct.unpack_from("<II", data, 12)
    fourcc = data[84:88]
    offset = 128
    if fourcc == b"DX10":
        fmt = _DDS_DXGI.get(struct.unpack_from("<I", data, 128)[0])
        offset = 148
    else:
        fmt = _DDS_FOURCC.get(fourcc)
    if fmt is None:
        raise ValueError("%s: pixel format %r not handled" % (path, fourcc))
    count = ((width + 3) // 4) * ((height + 3) // 4)
    size = count * _BLOCK_BYTES[fmt]
    if len(data) < offset + size:
        raise ValueError("%s: truncated (%d bytes, need %d)" % (path, len(data), offset + size))
    return fmt, width, height, np.frombuffer(data, np.uint8, size, offset).reshape(count, _BLOCK_BYTES[fmt])


def _le_bits(blocks, first, count):
    """Little-endian integer of `count` bytes from byte `first` of each block, as uint64."""
    v = np.zeros(len(blocks), np.uint64)
    for i in range(count):
        v |= blocks[:, first + i].astype(np.uint64) << np.uint64(8 * i)
    return v


def _bc1_texels(blocks):
    """(n, 8) BC1 blocks -> (n, 16, 3) int codes."""
    c0 = _le_bits(blocks, 0, 2).astype(np.int64)
    c1 = _le_bits(blocks, 2, 2).astype(np.int64)
    selectors = _le_bits(blocks, 4, 4)

    def rgb565(c):  # 5/6/5 bits widened by bit replication
        r, g, b = (c >> 11) & 31, (c >> 5) & 63, c & 31
        return np.stack([(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2)], -1)
    e0, e1 = rgb565(c0), rgb565(c1)
    four_colour = (c0 > c1)[:, None]
    p2 = np.where(four_colour, (2 * e0 + e1) // 3, (e0 + e1) // 2)
    p3 = np.where(four_colour, (e0 + 2 * e1) // 3, 0)  # three-colour blocks: index 3 is black
    palette = np.stack([e0, e1, p2, p3], 1)  # (n, 4, 3)
    shifts = np.uint64(2) * np.arange(16, dtype=np.uint64)
    index = ((selectors[:, None] >> shifts[None, :]) & np.uint64(3)).astype(np.int64)
    return np.take_along_axis(palette, index[..., None], 1)


def _bc4_texels(blocks):
    """(n, 8) BC4 blocks -> (n, 16, 1) int codes."""
    a0 = blocks[:, 0].astype(np.int64)
    a1 = blocks[:, 1].astype(np.int64)
    eight = a0 > a1
    entries = [a0, a1]
    for i in range(2, 8):
        if i <= 5:
            six = ((6 - i) * a0 + (i - 1) * a1) // 5
        else:
            six = np.full_like(a0, 0 if i == 6 else 255)
        entries.append(np.where(eight, ((8 - i) * a0 + (i - 1) * a1) // 7, six))
    palette = np.stack(entries, 1)  # (n, 8)
    shifts = np.uint64(3) * np.arange(16, dtype=np.uint64)
    index = ((_le_bits(blocks, 2, 6)[:, None] >> shifts[None, :]) & np.uint64(7)).astype(np.int64)
    return np.take_along_axis(palette, index, 1)[..., None]


def decode_dds(path):
    """BC1 -> (H, W, 3), BC4 -> (H, W, 1), BC5 -> (H, W, 2) uint8 codes."""
    fmt, width, height, blocks = read_dds_mip0(path)
    if fmt == "BC1":
        t = _bc1_texels(blocks)
    elif fmt == "BC4":
        t = _bc4_texels(blocks)
    else:
        t = np.concatenate([_bc4_texels(blocks[:, :8]), _bc4_texels(blocks[:, 8:])], -1)
    bw, bh = (width + 3) // 4, (height + 3) // 4
    c = t.shape[-1]
    image = t.reshape(bh, bw, 4, 4, c).transpose(0, 2, 1, 3, 4).reshape(bh * 4, bw * 4, c)
    return image[:height, :width].astype(np.uint8)


def dds_bits_per_texel(path):
    fmt, width, height, blocks = read_dds_mip0(path)
    return blocks.size * 8.0 / (width * height)


# ---------------------------------------------------------------------------------------------------------------
# Classic codecs: encode(map) -> (compressed file, wall s, CPU s, command); decode -> codes the codec carries.


class Astc:
    """ASTC LDR (linear, -cl) at one block size. Grey maps go in as L PNGs, normal maps as stored RGB with
    -normal (X,Y kept, Z rebuilt by the reader); colour maps as stored."""

    def __init__(self, tool, block, preset, threads=0):
        self.tool, self.block, self.preset, self.threads = tool, block, preset, threads
        self.name = "astc-%dx%d" % (block, block)

    def applies(self, kind):
        return True

    def encode(self, m, work):
        src = os.path.join(work, "astc_in.png")
        if not os.path.exists(src):
            save_png(m.stored[..., :1] if m.kind == "grey" else m.stored, src)
        out = os.path.join(work, "%s.astc" % self.name)
        cmd = [self.tool, "-cl", src, out, "%dx%d" % (self.block, self.block), "-" + self.preset, "-silent"]
        if m.kind == "normal":
            cmd.append("-normal")
        if self.threads:
            cmd += ["-j", str(self.threads)]
        wall, cpu, _ = run_timed(cmd, work)
        return out, wall, cpu, cmd

    def decode(self, m, out, work):
        png = out + ".png"
        cmd = [self.tool, "-dl", out, png, "-silent"] + (["-normal"] if m.kind == "normal" else [])
        run_timed(cmd, work)
        return read_png(png)

    def bits_per_texel(self, m, out):
        blocks = -(-m.width // self.block) * -(-m.height // self.block)
        return blocks * 128.0 / m.texels


class Nvtt:
    """nvcompress -nomips: BC1 (with -fast: Debian's nvtt 2.0.8 default-quality BC1 writes broken blocks, see
    ../shared/tools/baseline_codecs.py) for colour maps, BC4 for grey maps (nvtt 2.0.8 encodes the alpha channel,
    so the grey goes in every channel), BC5 for normal maps (R,G; without -normal, which would renormalise)."""

    FORMATS = {"bc1": "colour", "bc4": "grey", "bc5": "normal"}

    def __init__(self, tool, fmt):
        self.tool, self.fmt = tool, fmt
        self.name = "%s-nvtt" % fmt

    def applies(self, kind):
        return self.FORMATS[self.fmt] == kind

    def encode(self, m, work):
        src = os.path.join(work, "nvtt_%s_in.png" % self.fmt)
        if self.fmt == "bc4":
            g = m.grey()[..., None]
            save_png(np.concatenate([g, g, g, g], -1), src)
        else:
            save_png(m.stored[..., :3], src)
        out = os.path.join(work, "%s.dds" % self.name)
        cmd = [self.tool, "-nomips"] + (["-fast"] if self.fmt == "bc1" else []) + ["-" + self.fmt, src, out]
        wall, cpu, _ = run_timed(cmd, work)
        return out, wall, cpu, cmd

    def decode(self, m, out, work):
        return decode_dds(out)

    def bits_per_texel(self, m, out):
        return dds_bits_per_texel(out)


# ---------------------------------------------------------------------------------------------------------------
# nmc through its command line


def find_nmc(repo_root):
    """NMC env, else the newest build*/cli/nmc of the repository with a trainer (`compress --help` lists --bpp;
    builds without LibTorch carry a stub compress)."""
    env = os.environ.get("NMC")
    if env:
        return env
    found = sorted(glob.glob(os.path.join(repo_root, "build*", "cli", "nmc")), key=os.path.getmtime, reverse=True)
    for path in found:
        p = subprocess.run([path, "compress", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode == 0 and b"--bpp" in p.stdout:
            return path
    return None


class Nmc:
    def __init__(self, tool):
        self.tool = tool
        self.help = subprocess.run([tool, "compress", "--help"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT).stdout.decode()

    def has_flag(self, flag):
        return re.search(r"(^|[\s,])%s\b" % re.escape(flag), self.help) is not None

    def compress_cmd(self, folder, pack, bpp, seed, quality, steps, device, extra=()):
        cmd = [self.tool, "compress", folder, "-o", pack, "--bpp", "%.6g" % bpp, "--seed", str(seed), "--force",
               "--json"] + list(extra)
        if quality:
            cmd += ["--quality", quality]
        if steps:
            cmd += ["--steps", str(steps)]
        if device and device != "cpu":
            cmd += ["--device", device]
        return cmd

    def compress(self, *args):
        cmd = self.compress_cmd(*args)
        wall, cpu, text = run_timed(cmd, stdout_only=True)
        return cmd, wall, cpu, _json_tail(text)

    def decompress(self, pack, out_dir, device="cpu"):
        cmd = [self.tool, "decompress", pack, "-o", out_dir, "--format", "png", "--force", "-q"]
        if device and device != "cpu":
            cmd += ["--device", device]
        wall, cpu, _ = run_timed(cmd)
        return cmd, wall, cpu

    def validate(self, pack, source):
        cmd = [self.tool, "validate", pack, "--source", source, "--json"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode not in (0, 6):
            raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode()[-2000:]))
        return json.loads(p.stdout.decode())


def _json_tail(text):
    """The JSON object a command printed (progress lines may precede it)."""
    start = text.find("{")
    if start < 0:
        raise RuntimeError("no JSON in output:\n" + text[-2000:])
    return json.loads(text[start:])
