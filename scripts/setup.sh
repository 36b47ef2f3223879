#!/usr/bin/env bash
# Installs every Debian/Ubuntu package nmc's build and tests need (idempotent; as root or through sudo),
# then configures and builds nmc in ./build. Extra CMake arguments: NMC_CMAKE_ARGS="-DNMC_WITH_CUDA=OFF ...".
# In CI (CI=true) warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ make cmake git pkg-config ca-certificates
  libtorch-dev libopenblas0-pthread                 # the trainer (LibTorch on OpenBLAS: ~4x faster than reference BLAS)
  libopenimageio-dev libopencv-core-dev openimageio-tools   # image I/O (OIIO's CMake package needs opencv's headers)
  libpng-dev libjpeg-dev                            # the PNG/JPEG backend used where OpenImageIO is missing
  libcli11-dev nlohmann-json3-dev libzstd-dev
  libastcenc-dev astcenc                            # ASTC output (decompress --codec astc-*); the CLI for bench/
  googletest libgtest-dev
  clang libclang-rt-dev                             # the fuzzers (libFuzzer; scripts/test.sh builds them in build-fuzz/)
  python3-pil                                       # an independent DDS/BC7 decoder for texture/'s tests
  libvulkan-dev glslang-tools mesa-vulkan-drivers   # the Vulkan runtime (lavapipe: a Vulkan device on any CPU)
  slurm-wlm munge                                   # scripts/slurm/'s test: a one-node Slurm cluster on loopback
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake_args=(-DCMAKE_BUILD_TYPE=Release)
if [ "${CI:-}" = "true" ]; then cmake_args+=(-DNMC_WERROR=ON); fi
# shellcheck disable=SC2206
cmake_args+=(${NMC_CMAKE_ARGS:-})
cmake -S . -B build "${cmake_args[@]}" >build.configure.log 2>&1 || { cat build.configure.log >&2; exit 1; }
grep -A12 "nmc .* configuration" build.configure.log >&2 || true
cmake --build build -j"$(nproc)"
