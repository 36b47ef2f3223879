#!/usr/bin/python3
# An independent decoder for nmc's BC7 DDS files: Pillow's DDS reader (DX10 header, BPTC) must decode the file to
# the texels in RAW (width x height x RGBA bytes, nmc's own decoder's output). Exit 0 when they match, 1 when
# not, 77 (skipped) where Pillow or its BC7 support is missing. Usage: pillow_reads_dds.py FILE.dds RAW
import sys

try:
    from PIL import Image
except ImportError:
    sys.exit(77)

path, raw_path = sys.argv[1], sys.argv[2]
try:
    image = Image.open(path)
    image.load()
except Exception as e:  # Pillow before 9.x reads no DX10 BC7 files
    print(f"Pillow cannot read {path}: {e}")
    sys.exit(77)
ours = open(raw_path, "rb").read()
theirs = image.convert("RGBA").tobytes()
if len(ours) != len(theirs):
    print(f"size differs: nmc {len(ours)} bytes, Pillow {len(theirs)}")
    sys.exit(1)
differing = sum(1 for a, b in zip(ours, theirs) if a != b)
print(f"{image.size[0]}x{image.size[1]}: {differing} of {len(ours)} samples differ")
sys.exit(1 if differing else 0)
