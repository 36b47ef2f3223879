#!/usr/bin/env bash
# The main job on the bundled demo material: set up and build, compress data/demo's material into a pack,
# show the pack, decode it back to images, and validate it against the sources (quality and size tables).
# Output goes to out/demo/. Extra flags for `nmc compress` can be passed as arguments (e.g. --bpp 2.5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

nmc=build/cli/nmc
material=data/demo/gltf_flighthelmet_leather_512
out=out/demo
mkdir -p "$out"

if ! "$nmc" compress --help >/dev/null 2>&1; then
  echo "demo: this build has no trainer (LibTorch not found), so it cannot compress; see README 'Build options'" >&2
  exit 7
fi

echo "== nmc compress $material -o $out/leather.nmc $*"
"$nmc" compress "$material" -o "$out/leather.nmc" --force "$@"
echo
echo "== nmc inspect $out/leather.nmc"
"$nmc" inspect "$out/leather.nmc"
echo
echo "== nmc decompress $out/leather.nmc -o $out/decoded"
"$nmc" decompress "$out/leather.nmc" -o "$out/decoded" --force
echo
echo "== nmc validate $out/leather.nmc --source $material"
"$nmc" validate "$out/leather.nmc" --source "$material"
