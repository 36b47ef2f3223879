"""Material folders as the benchmark sees them: every image file of a folder, its pixels exactly as stored (8-bit
codes, the file's own channel count) and its kind (colour, grey or normal), which picks the classic codec per map.
"""

import os
import re

try:  # see codec_runners.HAVE_IMAGING
    import numpy as np
    from PIL import Image
except ImportError:
    np = Image = None

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tga", ".bmp")

# File-name tokens that mark a tangent-space normal map (as in docs/manifest.md's recognition rules).
_NORMAL_TOKEN = re.compile(r"(nrm|norm|normal|normals|normalmap|nor|nml)\d*")


class MapImage:
    """One texture file: `stored` is (H, W, C) uint8 as the file holds it (C = 1 for L, 3 for RGB, 4 for RGBA)."""

    def __init__(self, path):
        self.path = path
        self.file = os.path.basename(path)
        self.stem = os.path.splitext(self.file)[0]
        self.stored = load_stored(path)
        self.height, self.width, self.channels = self.stored.shape
        self.kind = classify(self.file, self.stored)

    @property
    def texels(self):
        return self.width * self.height

    def grey(self):
        """(H, W) the single grey channel of a grey map."""
        return self.stored[..., 0]


class Material:
    def __init__(self, folder):
        self.folder = os.path.abspath(folder)
        self.name = os.path.basename(self.folder.rstrip("/"))
        files = sorted(f for f in os.listdir(self.folder) if f.lower().endswith(IMAGE_EXTENSIONS))
        self.maps = [MapImage(os.path.join(self.folder, f)) for f in files]
        if not self.maps:
            raise ValueError("%s: no image files" % self.folder)
        # Bits per texel are counted per mip-0 texel of the material: the largest map sets the size.
        largest = max(self.maps, key=lambda m: m.texels)
        self.width, self.height = largest.width, largest.height

    @property
    def texels(self):
        return self.width * self.height

    def summary(self):
        return dict(name=self.name, width=self.width, height=self.height,
                    files=[dict(file=m.file, kind=m.kind, width=m.width, height=m.height, channels=m.channels)
                           for m in self.maps])


def load_stored(path):
    """8-bit codes in the file's own layout. 16-bit greys are scaled to 8 bits (none of the shared sets has any)."""
    with Image.open(path) as im:
        if im.mode == "P":
            im = im.convert("RGBA" if "transparency" in im.info else "RGB")
        elif im.mode in ("I;16", "I;16B", "I"):
            a = np.asarray(im, np.float64)
            return np.floor(np.clip(a / 257.0, 0, 255) + 0.5).astype(np.uint8)[..., None]
        elif im.mode not in ("L", "LA", "RGB", "RGBA"):
            im = im.convert("RGB")
        a = np.asarray(im)
    return a[..., None] if a.ndim == 2 else a


def classify(file_name, stored):
    """'normal' by file-name token, 'grey' when one channel or R == G == B, else 'colour' (packed ORM maps too:
    the classic recipes give them the colour format, as ../shared/baselines did)."""
    stem = os.path.splitext(file_name.lower())[0]
    tokens = [t for t in re.split(r"[_\-. ]+", stem) if t]
    if stored.shape[-1] >= 3 and (any(_NORMAL_TOKEN.fullmatch(t) for t in tokens)
                                  or re.search(r"normal\d*$", stem) or (len(tokens) > 1 and tokens[-1] == "n")):
        return "normal"
    if stored.shape[-1] in (1, 2):
        return "grey"
    if np.array_equal(stored[..., 0], stored[..., 1]) and np.array_equal(stored[..., 0], stored[..., 2]):
        return "grey"
    return "colour"


def find_materials(root):
    """Sub-folders of `root` that hold images, sorted by name; `root` itself when it holds images directly."""
    root = os.path.abspath(root)
    if any(f.lower().endswith(IMAGE_EXTENSIONS) for f in os.listdir(root)):
        return [root]
    out = []
    for d in sorted(os.listdir(root)):
        p = os.path.join(root, d)
        if os.path.isdir(p) and any(f.lower().endswith(IMAGE_EXTENSIONS) for f in os.listdir(p)):
            out.append(p)
    return out


def summary_from_scan(nmc_tool, folder):
    """A Material.summary() without reading pixels: from `nmc scan --json` (for runs without numpy/PIL)."""
    import json
    import subprocess
    p = subprocess.run([nmc_tool, "scan", folder, "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError("nmc scan %s failed (exit %d)" % (folder, p.returncode))
    scan = json.loads(p.stdout.decode())
    files = []
    for t in scan["textures"]:
        n = len(t["channels"])
        kind = "normal" if t.get("normal_mode", "none") != "none" else ("grey" if n == 1 else "colour")
        files.append(dict(file=t["file_name"], kind=kind, width=t["width"], height=t["height"], channels=n))
    return dict(name=os.path.basename(os.path.abspath(folder).rstrip("/")), width=scan["width"],
                height=scan["height"], files=sorted(files, key=lambda f: f["file"]), files_from="nmc scan")


def material_texels(folder):
    """Mip-0 texels of the largest image, from the headers only (to order materials by size cheaply)."""
    if Image is None:
        return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))  # a stand-in: bytes
    best = 0
    for f in os.listdir(folder):
        if f.lower().endswith(IMAGE_EXTENSIONS):
            with Image.open(os.path.join(folder, f)) as im:
                best = max(best, im.width * im.height)
    return best
