#!/usr/bin/env bash
# Everything GPU-side in one call on the GPU machine (Ubuntu, nvcc, LibTorch from python3's torch, no
# OpenImageIO): build with CUDA and the trainer, run the whole test suite with GPU tests required (a skip
# is a failure there), then the benchmarks. Logs and results go to $OUT (or ./gpu-check-out).
#   scripts/gpu-check.sh [check]   build, tests, decoder benchmarks, compress + validate of bench-materials/*; needs
#                                  the shared materials (./shared on the GPU machine, below)
#   scripts/gpu-check.sh measure   build, then bench/run_benchmarks.py measure: nmc on every shared material at
#                                  NTC's file sizes (--ntc-sizes) on the GPU -> $OUT/bench-h200-r<rate>.json;
#                                  settings from NMC_MEASURE_RATES (5,2.5,10,1.5; RATE@STEPS sets one rate's
#                                  steps), NMC_MEASURE_QUALITY (best), NMC_MEASURE_STEPS (the preset's),
#                                  NMC_MEASURE_ARGS (more measure flags), NMC_MEASURE_PARALLEL=1 (every rate at
#                                  once, one process each: quality is unchanged, timings are shared-GPU ones),
#                                  NMC_MEASURE_SPLIT=N (each rate's materials in N processes at once, written
#                                  as bench-h200-r<rate>-part<i>.json; timings shared-GPU ones too)
#   scripts/gpu-check.sh all       both (longer than one 10-minute device call: run them as two calls)
#   scripts/gpu-check.sh decoder   the CUDA decoder alone, for its work: a build without the trainer (LibTorch) of the
#                                  decoder's tests and benchmark only (build-gpu-decoder/, much shorter than the full
#                                  build), then the CPU and CUDA decoder tests, nmc_cuda_decoder_bench and ncu on the
#                                  whole-mip kernel (ncu.txt, ncu-metrics.txt; NMC_DECODER_NCU=0 skips it);
#                                  NMC_DECODER_SASS=1 also writes the
#                                  warpgroup and tiled kernels' SASS (warpgroup.sass); NMC_DECODER_LINES=1 builds with -lineinfo
#                                  and writes that kernel's instructions per source line (ncu-lines.csv, summed up
#                                  by bench/ncu_lines.py into ncu-lines.txt); NMC_NCU_KERNEL picks the kernel
#   scripts/gpu-check.sh variants   decoder experiments side by side in one call: this tree ("base") and, for every
#                                  variants/NAME.patch (made here with `git diff main BRANCH -- decoder tests bench
#                                  > variants/NAME.patch`; variants/ is git-ignored: pass it to the device tool's
#                                  carry), a copy of the tree with the patch applied; all built at once as the
#                                  decoder mode builds (no trainer), then for each in turn the CUDA decoder tests and
#                                  nmc_cuda_decoder_bench -> $OUT/NAME.txt (ctest's tail, then the benchmark)
#   scripts/gpu-check.sh vulkan    the Vulkan runtime on the GPU's driver: a build without the trainer, with CUDA (for the
#                                  tiled kernel's figure in the same run) and Vulkan; the Vulkan loader, headers and
#                                  glslangValidator come as Debian packages in .gl/ (the device tool's carry; made here
#                                  with `cd .gl && apt-get download libvulkan1 libvulkan-dev glslang-tools vulkan-tools
#                                  libwayland-client0 libx11-6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libegl1
#                                  libglvnd0 libopengl0 libgl1 libglx0 libgles2`); then
#                                  vulkaninfo, the Vulkan decoder and CLI tests, nmc validate on both devices for
#                                  each vulkan-packs/<material>.nmc (carried; made here by nmc compress on the shared
#                                  materials, which travel as ./shared) -> vulkan-validate.txt, then
#                                  nmc_vulkan_decoder_bench, nmc_cuda_decoder_bench and nmc_vulkan_peak_bench
#                                  (vulkan.txt: the three tables),
#                                  nmc_vulkan_render_bench at 1920x1080 on vulkan-packs/$NMC_VULKAN_RENDER.nmc (default
#                                  polyhaven_rusty_metal_05_1k) -> vulkan-render.txt and render/*.png;
#                                  NMC_VULKAN_CUDA=0 builds without CUDA (shorter; no CUDA figures)
#   scripts/gpu-check.sh sweep FILE   build nmc only, then one `nmc compress --device cuda` per line of FILE
#                                  ("MATERIAL FLAGS..." under ../shared/materials; # comments), NMC_SWEEP_JOBS
#                                  (4) at a time -> $OUT/sweep.jsonl (one line per run: material, flags, wall
#                                  seconds, nmc's --json result); summarise with bench/sweep_table.py
set -uo pipefail
mode="${1:-check}"
case "$mode" in check | measure | all | sweep | decoder | variants | vulkan) ;;
  *) echo "usage: $0 [check|measure|all|decoder|variants|vulkan|sweep FILE]" >&2; exit 2 ;;
esac
sweep_file="${2:-}"
if [ "$mode" = sweep ] && [ ! -f "$sweep_file" ]; then echo "$0 sweep: no such file '$sweep_file'" >&2; exit 2; fi
sweep_jobs="${NMC_SWEEP_JOBS:-4}"
case "$sweep_jobs" in '' | *[!0-9]* | 0) echo "$0: NMC_SWEEP_JOBS must be a positive number" >&2; exit 2 ;; esac
measure_rates="${NMC_MEASURE_RATES:-5,2.5,10,1.5}"
measure_split="${NMC_MEASURE_SPLIT:-1}"
case "$measure_split" in '' | *[!0-9]* | 0) echo "$0: NMC_MEASURE_SPLIT must be a positive number" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
jobs=$(nproc)
status=0

step() { echo "== [${SECONDS}s] $*" | tee -a "$out/summary.txt"; }

# configure BUILD_DIR [CMAKE_ARGS...]: the GPU machine's CMake configuration of this tree (Release, CUDA required,
# PNG/JPEG images, GPU tests required, NMC_CUDA_ARCHITECTURES or sm_90a) into BUILD_DIR.
configure() {
  local dir="$1"
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DNMC_WITH_CUDA=ON -DNMC_IMAGE_IO=PNGJPEG -DNMC_REQUIRE_GPU=ON \
    -DNMC_CUDA_ARCHITECTURES="${NMC_CUDA_ARCHITECTURES:-90a}" \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" "$@"
}

step "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
torch_prefix=""
if [ "$mode" != decoder ] && [ "$mode" != variants ] && [ "$mode" != vulkan ]; then  # those build without the trainer
  torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  step "libtorch: ${torch_prefix:-not found} ($(python3 -c 'import torch;print(torch.__version__)' 2>/dev/null))"
fi

# Tests and benchmarks read the shared materials from ../shared; on the GPU machine they travel as ./shared (the
# device tool copies shared/ only where the checkout has one: `mkdir shared && cp -r ../shared/materials
# ../shared/baselines shared/` before the call; .gitignore keeps it out of git).
if [ ! -e ../shared ] && [ -d shared ]; then ln -s "$PWD/shared" ../shared; fi
if [ "$mode" = check ] || [ "$mode" = measure ] || [ "$mode" = all ] || [ "$mode" = sweep ]; then
  if [ ! -d ../shared/materials ]; then
    echo "$0 $mode: no ../shared/materials (nor ./shared/materials): the $mode mode needs the shared materials" >&2
    exit 2
  fi
fi

if [ "$mode" = variants ]; then
  # Each variant is its own source tree (the base: this one) with its own build directory; the builds run together,
  # their nvcc compiles being one thread each, then the tests and benchmarks one variant at a time.
  names=(base)
  roots=("$PWD")
  for patch in variants/*.patch; do
    [ -e "$patch" ] || continue
    name=$(basename "$patch" .patch)
    root="/tmp/nmc-variant-$name"
    rm -rf "$root" && mkdir -p "$root"
    tar --exclude=./.git --exclude='./build*' --exclude=./shared --exclude=./variants --exclude=./gpu-check-out -cf - . |
      tar -xf - -C "$root"
    if ! patch -d "$root" -p1 -s <"$patch"; then
      echo "$0 variants: $patch does not apply to this tree" >&2
      exit 2
    fi
    names+=("$name")
    roots+=("$root")
  done
  step "build: ${names[*]} (decoder tests and benchmark, no trainer)"
  per_build=$(( (jobs + ${#names[@]} - 1) / ${#names[@]} ))
  pids=()
  for i in "${!names[@]}"; do
    (
      cd "${roots[$i]}" &&
        configure build-gpu-variant -DNMC_WITH_TRAINER=OFF &&
        cmake --build build-gpu-variant -j"$per_build" --target cuda_decoder_test nmc_cuda_decoder_bench
    ) >"/tmp/nmc-variant-build-${names[$i]}.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!names[@]}"; do
    if ! wait "${pids[$i]}"; then
      step "${names[$i]}: build failed"
      grep -B2 -A8 -m5 "error" "/tmp/nmc-variant-build-${names[$i]}.log" | tee "$out/${names[$i]}.txt"
      status=1
    fi
  done
  for i in "${!names[@]}"; do
    build="${roots[$i]}/build-gpu-variant"
    [ -x "$build/bench/nmc_cuda_decoder_bench" ] || continue
    step "${names[$i]}: CUDA decoder tests and benchmark"
    {
      (cd "${roots[$i]}" && "$build/tests/cuda/cuda_decoder_test" --gtest_brief=1 2>&1 | tail -8) || status=1
      "$build/bench/nmc_cuda_decoder_bench" 2>&1 | grep -E "^(path|fp8|fp16|cpu) " | tail -24 || status=1
    } >"$out/${names[$i]}.txt"
    grep -E "FAILED|tiled kernel|S=4" "$out/${names[$i]}.txt"
  done
  step "done, status $status"
  exit $status
fi

if [ "$mode" = vulkan ]; then
  # The loader, headers, glslangValidator and the GL dispatch libraries the NVIDIA driver's Vulkan library loads
  # (libglvnd) into / (as the device tool's README does for loaders); vulkaninfo's X and Wayland client libraries
  # into /tmp/vulkan-tools only, so that Debian's older copies never replace the machine's own.
  for deb in .gl/*.deb; do
    case "$(basename "$deb")" in
      libvulkan* | glslang-tools* | libegl1* | libglvnd0* | libopengl0* | libgl1* | libglx0* | libgles2*) dpkg -x "$deb" / ;;
      *) dpkg -x "$deb" /tmp/vulkan-tools ;;
    esac
  done
  ldconfig
  vulkaninfo() { LD_LIBRARY_PATH=/tmp/vulkan-tools/usr/lib/x86_64-linux-gnu /tmp/vulkan-tools/usr/bin/vulkaninfo "$@"; }
  step "vulkaninfo"
  if ! vulkaninfo >/tmp/vulkaninfo.txt 2>&1 && [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    echo "no driver through the default ICD files: VK_DRIVER_FILES=$VK_DRIVER_FILES" | tee -a "$out/summary.txt"
    vulkaninfo >/tmp/vulkaninfo.txt 2>&1
  fi
  grep -E "deviceName|driverVersion|apiVersion|ERROR" /tmp/vulkaninfo.txt | head -8 | tee -a "$out/summary.txt"
  grep -oE "VK_(NV|KHR)_cooperative_(matrix|matrix2|vector) *: extension revision *[0-9]+" /tmp/vulkaninfo.txt |
    sort -u | tee -a "$out/summary.txt"
  # NMC_VULKAN_CUDA=0 builds without CUDA (a shorter build; no CUDA decoder figures in the same run).
  cuda_targets="nmc_cuda_decoder_bench"
  cuda_args=()
  if [ "${NMC_VULKAN_CUDA:-1}" = 0 ]; then cuda_targets="" && cuda_args=(-DNMC_WITH_CUDA=OFF); fi
  step "configure and build (build-gpu-vulkan: no trainer, Vulkan${cuda_targets:+ and CUDA})"
  configure build-gpu-vulkan -DNMC_WITH_TRAINER=OFF -DNMC_WITH_VULKAN=ON "${cuda_args[@]}" >"$out/configure.log" 2>&1 ||
    { tail -40 "$out/configure.log"; exit 1; }
  # shellcheck disable=SC2086
  cmake --build build-gpu-vulkan -j"$jobs" --target nmc vulkan_decoder_test nmc_decompress_validate_cli_tests \
    nmc_vulkan_decoder_bench nmc_vulkan_peak_bench nmc_vulkan_render_bench $cuda_targets >"$out/build.log" 2>&1 ||
    { grep -B2 -A8 -m5 error "$out/build.log"; exit 1; }
  rm -f "$out/build.log" "$out/configure.log"  # the device tool brings back 8 files: keep them for results
  step "Vulkan decoder and CLI tests (vulkan-tests.txt)"
  build-gpu-vulkan/tests/vulkan/vulkan_decoder_test >"$out/vulkan-tests.txt" 2>&1 || status=1
  NMC_BINARY=build-gpu-vulkan/cli/nmc build-gpu-vulkan/tests/cli/nmc_decompress_validate_cli_tests \
    --gtest_filter='*Vulkan*' >>"$out/vulkan-tests.txt" 2>&1 || status=1
  grep -E "^vulkan:|OK|FAILED|PASSED|differ" "$out/vulkan-tests.txt" | head -40
  if ls vulkan-packs/*.nmc >/dev/null 2>&1 && [ -d ../shared/materials ]; then
    # Packs of the shared materials (vulkan-packs/<material>.nmc, carried): nmc validate on both devices.
    step "nmc validate --device cpu and --device vulkan on vulkan-packs/ (vulkan-validate.txt)"
    for pack in vulkan-packs/*.nmc; do
      material=$(basename "$pack" .nmc)
      for device in cpu vulkan; do
        build-gpu-vulkan/cli/nmc validate "$pack" --source "../shared/materials/$material" --device "$device" \
          --json >"/tmp/validate-$material-$device.json" 2>>"$out/vulkan-validate.txt" || status=1
      done
    done
    python3 - vulkan-packs >"$out/vulkan-validate.txt" <<'PY' || status=1
import glob, json, os, sys
print("| material | PSNR cpu | PSNR vulkan | difference dB | psnr8 cpu | psnr8 vulkan |")
print("|---|---:|---:|---:|---:|---:|")
worst = 0.0
for pack in sorted(glob.glob(sys.argv[1] + "/*.nmc")):
    m = os.path.basename(pack)[:-4]
    q = {d: json.load(open(f"/tmp/validate-{m}-{d}.json"))["quality"] for d in ("cpu", "vulkan")}
    diff = q["vulkan"]["psnr_db"] - q["cpu"]["psnr_db"]
    worst = max(worst, abs(diff))
    print(f"| {m} | {q['cpu']['psnr_db']:.4f} | {q['vulkan']['psnr_db']:.4f} | {diff:+.4f} | "
          f"{q['cpu']['psnr8_mip0_db']:.4f} | {q['vulkan']['psnr8_mip0_db']:.4f} |")
print(f"largest difference: {worst:.4f} dB")
sys.exit(0 if worst <= 0.01 else 1)
PY
    cat "$out/vulkan-validate.txt"
  fi
  step "benchmarks: nmc_vulkan_decoder_bench 4096, nmc_cuda_decoder_bench (vulkan.txt)"
  build-gpu-vulkan/bench/nmc_vulkan_decoder_bench 4096 10 5 >"$out/vulkan.txt" 2>&1 || status=1
  if [ -n "$cuda_targets" ]; then build-gpu-vulkan/bench/nmc_cuda_decoder_bench >>"$out/vulkan.txt" 2>&1 || status=1; fi
  build-gpu-vulkan/bench/nmc_vulkan_peak_bench >>"$out/vulkan.txt" 2>&1 || status=1
  # Inference on sample at 1920x1080 (vulkan-render.txt, frames in $OUT/render/) on NMC_VULKAN_RENDER's pack.
  render_material="${NMC_VULKAN_RENDER:-polyhaven_rusty_metal_05_1k}"
  if [ -f "vulkan-packs/$render_material.nmc" ] && [ -d "../shared/materials/$render_material" ]; then
    step "render: nmc_vulkan_render_bench $render_material 1920x1080 (vulkan-render.txt)"
    mkdir -p "$out/render"
    build-gpu-vulkan/bench/nmc_vulkan_render_bench "vulkan-packs/$render_material.nmc" \
      "../shared/materials/$render_material" "$out/render" 1920 1080 10 >"$out/vulkan-render.txt" 2>&1 || status=1
    cat "$out/vulkan-render.txt"
  fi
  head -8 "$out/vulkan.txt"
  grep -E "^(path|fp8|fp16|cpu) " "$out/vulkan.txt" | tail -24
  step "done, status $status"
  exit $status
fi

if [ "$mode" = decoder ]; then
  step "configure (build-gpu-decoder: no trainer)"
  lineinfo=""
  if [ "${NMC_DECODER_LINES:-0}" = 1 ]; then lineinfo="-lineinfo"; fi
  configure build-gpu-decoder -DNMC_WITH_TRAINER=OFF -DCMAKE_CUDA_FLAGS="$lineinfo" >"$out/configure.log" 2>&1 ||
    { tail -40 "$out/configure.log"; exit 1; }
  step "build: the decoder tests and benchmarks"
  cmake --build build-gpu-decoder -j"$jobs" --target nmc nmc_decoder_cpu_test cuda_numerics_test cuda_decoder_test \
    cuda_validation_test nmc_cuda_decoder_bench >"$out/build.log" 2>&1 ||
    { grep -B2 -A8 -m5 "error" "$out/build.log"; tail -30 "$out/build.log"; exit 1; }
  step "tests: CPU and CUDA decoders (GPU tests required)"
  # The test executables not built here stand in ctest as <target>_NOT_BUILT placeholders: leave those out.
  OMP_NUM_THREADS=4 ctest --test-dir build-gpu-decoder --output-on-failure -j4 -E '_NOT_BUILT$' >"$out/ctest.log" 2>&1 ||
    status=1
  tail -6 "$out/ctest.log"
  step "bench: CUDA decoder (4096x4096 default network, fp8 and fp16 paths, CPU ratio)"
  build-gpu-decoder/bench/nmc_cuda_decoder_bench 2>&1 | tee "$out/cuda_decoder_bench.txt" | tail -24 || status=1
  if [ "${NMC_DECODER_NCU:-1}" = 1 ] && command -v ncu >/dev/null 2>&1; then
    # What binds the whole-mip decode: Nsight Compute on one launch of the kernel that decodes binary16 packs of the
    # default shape (the tiled kernel for hidden layers without scales, by its mangled name; NMC_NCU_KERNEL overrides
    # the pattern), after the benchmark's first launches.
    kernel="${NMC_NCU_KERNEL:-decode_tiles_kernelILb0ELb.ELNS0_11TiledTimingE0ELNS0_11TiledWidthsE0E}"  # full, 64-64-64
    step "ncu: $kernel"
    ncu --clock-control none --kernel-name-base mangled -k "regex:$kernel" --launch-skip 3 -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section SourceCounters \
      build-gpu-decoder/bench/nmc_cuda_decoder_bench >"$out/ncu.txt" 2>&1 || echo "ncu failed (see ncu.txt)"
    grep -E "Duration|Issue Slots Busy|Executed Ipc A|No Eligible|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Stall" \
      "$out/ncu.txt" | head -20
    # The same launch's pipe utilisation and warp stall reasons (per issued instruction), as raw metrics.
    ncu --clock-control none --kernel-name-base mangled -k "regex:$kernel" --launch-skip 3 -c 1 --metrics \
      'regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,smsp__inst_executed.sum,sm__warps_active.min.per_cycle_active,sm__warps_active.max.per_cycle_active,sm__warps_active.avg.per_cycle_active,sm__ctas_launched.min,sm__ctas_launched.max,sm__cycles_active.min,sm__cycles_active.max' \
      build-gpu-decoder/bench/nmc_cuda_decoder_bench >"$out/ncu-metrics.txt" 2>&1 || echo "ncu metrics failed (see ncu-metrics.txt)"
    if [ "${NMC_DECODER_LINES:-0}" = 1 ]; then
      # The same launch's instructions per source line (the build has -lineinfo).
      ncu --clock-control none --kernel-name-base mangled -k "regex:$kernel" --launch-skip 3 -c 1 --section SourceCounters \
        --import-source yes -f -o "$out/ncu-lines" build-gpu-decoder/bench/nmc_cuda_decoder_bench >"$out/ncu-lines.log" 2>&1 &&
        ncu -i "$out/ncu-lines.ncu-rep" --page source --print-source cuda,sass --csv >"$out/ncu-lines.csv" 2>>"$out/ncu-lines.log" &&
        python3 bench/ncu_lines.py "$out/ncu-lines.csv" >"$out/ncu-lines.txt" 2>>"$out/ncu-lines.log" &&
        head -12 "$out/ncu-lines.txt" || echo "ncu source lines failed (see ncu-lines.log)"
      rm -f "$out/ncu-lines.ncu-rep"
    fi
  fi
  if [ "${NMC_DECODER_SASS:-0}" = 1 ] && command -v cuobjdump >/dev/null 2>&1; then
    # The warpgroup and tiled kernels' machine code (the build machine's toolkit has no disassembler): $out/warpgroup.sass.
    cuobjdump -sass build-gpu-decoder/decoder/cuda/libnmc_decoder_cuda.a 2>&1 |
      awk '/Function : /{keep = /warpgroup|tiles_kernel.*TiledTimingE0E/} keep' >"$out/warpgroup.sass" || echo "cuobjdump failed"
  fi
  step "done, status $status"
  exit $status
fi

step "configure"
configure build-gpu -DNMC_WITH_TRAINER=ON -DCMAKE_PREFIX_PATH="$torch_prefix" >"$out/configure.log" 2>&1 ||
  { tail -40 "$out/configure.log"; exit 1; }
grep -A12 "nmc .* configuration" "$out/configure.log"

step "build"
targets=()
# sweep and measure run nmc alone: build just it (not the tests and benchmarks)
{ [ "$mode" = sweep ] || [ "$mode" = measure ]; } && targets=(--target nmc)
cmake --build build-gpu -j"$jobs" "${targets[@]}" >"$out/build.log" 2>&1 ||
  { grep -B2 -A8 -m5 "error" "$out/build.log"; tail -30 "$out/build.log"; exit 1; }

if [ "$mode" = sweep ]; then
  # One compress per line, NMC_SWEEP_JOBS at a time on the one GPU (quality is unaffected by sharing; times are).
  sweep_one() {  # INDEX MATERIAL FLAGS...
    local index="$1" material="$2" started=$SECONDS
    shift 2
    # shellcheck disable=SC2068
    OMP_NUM_THREADS=$((jobs / sweep_jobs > 0 ? jobs / sweep_jobs : 1)) \
      build-gpu/cli/nmc compress "../shared/materials/$material" -o "$out/sweep-$index.nmc" --device cuda --seed 1 \
      --force --json $@ >"$out/sweep-$index.json" 2>"$out/sweep-$index.log"
    local rc=$?
    python3 - "$index" "$material" "$*" "$((SECONDS - started))" "$rc" "$out/sweep-$index.json" "$out/sweep-$index.log" <<'PY' >>"$out/sweep.jsonl"
import json, sys
index, material, flags, wall, rc, result, log = sys.argv[1:]
try:
    r = json.load(open(result))
except ValueError:
    r = {"error": open(log).read()[-400:]}
print(json.dumps(dict(index=int(index), material=material, flags=flags, wall_s=int(wall), rc=int(rc), result=r)))
PY
    rm -f "$out/sweep-$index.nmc" "$out/sweep-$index.json" "$out/sweep-$index.log"
    echo "  $material $* -> rc $rc in $((SECONDS - started)) s"
  }
  step "sweep: $sweep_file, $sweep_jobs at a time"
  : >"$out/sweep.jsonl"
  index=0
  while read -r material flags || [ -n "$material" ]; do
    case "$material" in '' | '#'*) continue ;; esac
    while [ "$(jobs -rp | wc -l)" -ge "$sweep_jobs" ]; do wait -n; done
    index=$((index + 1))
    # shellcheck disable=SC2086
    sweep_one "$index" "$material" $flags &
  done <"$sweep_file"
  wait
  python3 bench/sweep_table.py "$out/sweep.jsonl" | tee "$out/sweep-table.txt"
  grep -q FAILED "$out/sweep-table.txt" && status=1
fi

if [ "$mode" != measure ] && [ "$mode" != sweep ]; then
step "tests (GPU tests required)"
# Four test processes share the 16 cores: give each four OpenMP threads, or they spin against each other.
OMP_NUM_THREADS=4 ctest --test-dir build-gpu --output-on-failure -j4 >"$out/ctest.log" 2>&1 || status=1
tail -15 "$out/ctest.log"

if [ -x build-gpu/bench/nmc_cpu_decoder_bench ]; then
  step "bench: CPU decoder on this machine"
  build-gpu/bench/nmc_cpu_decoder_bench 2>&1 | tee "$out/cpu_decoder_bench.txt" | tail -12 || status=1
fi

if [ -x build-gpu/bench/nmc_cuda_decoder_bench ]; then
  step "bench: CUDA decoder (4096x4096 default network, fp8 and fp16 paths, CPU ratio)"
  # The whole table (about 60 lines): the log is the one file every device call brings back.
  build-gpu/bench/nmc_cuda_decoder_bench 2>&1 | tee "$out/cuda_decoder_bench.txt" || status=1
fi

if [ -x build-gpu/bench/nmc_fused_training_bench ] && [ -d ../shared/materials ]; then
  step "bench: fused CUDA trainer against eager (ms per step at batch 65536, 1K and 2K, 2.5/5/10 bpp; per kernel)"
  build-gpu/bench/nmc_fused_training_bench --materials ../shared/materials 2>&1 | tee "$out/fused_training_bench.txt" | tail -9
  # Same material, seed and schedule with each trainer (the CPU's normal schedule, which eager keeps on a GPU; the
  # fused trainer's own normal is 20k x 65536 at another network rate, and its latent Adam is sparse by default):
  # the final PSNRs should agree within 0.1 dB.
  for trainer in fused eager; do
    step "bench: nmc compress polyhaven_rusty_metal_05_1k --device cuda --trainer $trainer --steps 3000 --batch 8192"
    build-gpu/cli/nmc compress ../shared/materials/polyhaven_rusty_metal_05_1k -o "$out/rusty-$trainer.nmc" \
      --device cuda --trainer "$trainer" --steps 3000 --batch 8192 --latent-lr 0.1 --network-lr 0.02 --latent-adam dense --bpp 5 --force --json \
      >"$out/compress-rusty-$trainer.json" \
      2>"$out/compress-rusty-$trainer.log" || status=1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in ("trainer", "psnr_db", "psnr8_mip0_db", "training_seconds", "steps_per_second")})' \
      "$out/compress-rusty-$trainer.json" 2>/dev/null || tail -c 600 "$out/compress-rusty-$trainer.json"
  done
  # NTC's full schedule on a 2K material with the fused trainer, loading and measuring included.
  step "bench: nmc compress polyhaven_beige_wall_001_2k --quality best (100000 x 65536) --device cuda --trainer fused"
  started=$SECONDS
  build-gpu/cli/nmc compress ../shared/materials/polyhaven_beige_wall_001_2k -o "$out/beige-best.nmc" --quality best \
    --device cuda --trainer fused --bpp 5 --force --json >"$out/compress-beige-best.json" \
    2>"$out/compress-beige-best.log" || status=1
  echo "wall $((SECONDS - started)) s (loading, training, measuring and writing)"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in ("trainer", "psnr_db", "psnr8_mip0_db", "bits_per_texel", "training_seconds", "steps_per_second", "seconds", "quantisation_trace")})' \
    "$out/compress-beige-best.json" 2>/dev/null || tail -c 600 "$out/compress-beige-best.json"
  # Time to quality on a 2K material (the fused-kernel issue's end-to-end bar): ambientcg_metal009_2k at NTC's 5 bpp
  # file size, the best preset's schedule shortened to N steps; NTC 0.9.2 reaches 44.83 dB psnr8 at 20k steps and
  # 45.73 at 100k (../shared/baselines/ntc-0.9.2-h200.csv). Wall time of the whole command, process start included.
  step "bench: time to NTC's PSNR, nmc compress ambientcg_metal009_2k --quality best --steps N --bpp 5.378 --device cuda"
  for steps in 10000 20000 30000 40000 60000; do
    started_ns=$(date +%s%N)
    build-gpu/cli/nmc compress ../shared/materials/ambientcg_metal009_2k -o "$out/metal009-$steps.nmc" --quality best \
      --steps "$steps" --device cuda --trainer fused --bpp 5.378 --seed 1 --force --json \
      >"$out/compress-metal009-$steps.json" 2>"$out/compress-metal009-$steps.log" || status=1
    wall=$(( ($(date +%s%N) - started_ns) / 1000000 ))
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("metal009 %6d steps: wall %6.2f s, psnr8_mip0 %.2f dB, %.3f bpt, seconds %s" % (r["steps"], int(sys.argv[2]) / 1000, r["psnr8_mip0_db"], r["bits_per_texel"], {k: round(v, 2) for k, v in r["seconds"].items()}))' \
      "$out/compress-metal009-$steps.json" "$wall" 2>/dev/null || tail -c 600 "$out/compress-metal009-$steps.log"
    [ "$steps" = 20000 ] || rm -f "$out/metal009-$steps.nmc"
  done
  # The two arithmetics end to end: the 20000-step run above (binary16, the default: format 2.0) validated on the GPU
  # decoder and on the CPU one (the same PSNR to 0.01 dB), and the same run in float32 (format 1.0) to compare.
  for device in cuda cpu; do
    build-gpu/cli/nmc validate "$out/metal009-20000.nmc" --source ../shared/materials/ambientcg_metal009_2k \
      --device "$device" >"$out/validate-metal009-20000-$device.txt" 2>&1 || status=1
    echo "validate metal009-20000.nmc (binary16) --device $device:"; grep -E "PSNR|verdict" "$out/validate-metal009-20000-$device.txt"
  done
  # The same trained pack decoded to files on both devices (nmc decompress: on the GPU the tiled kernel, whose
  # bilinear sums are tensor-core sums): the 8-bit files should be identical; a last-bit difference of the sums may
  # flip a code now and then, which spec 8.3 allows, so differing files are listed, not failed.
  for device in cuda cpu; do
    build-gpu/cli/nmc decompress "$out/metal009-20000.nmc" -o "$out/metal009-decoded-$device" --device "$device" \
      >"$out/decompress-metal009-$device.txt" 2>&1 || status=1
  done
  for f in "$out"/metal009-decoded-cpu/*; do
    if cmp -s "$f" "$out/metal009-decoded-cuda/$(basename "$f")"; then echo "decompress cuda = cpu: $(basename "$f")"
    else echo "decompress cuda differs from cpu: $(basename "$f")"; fi
  done
  rm -rf "$out/metal009-20000.nmc" "$out"/metal009-decoded-*
  step "bench: nmc compress ambientcg_metal009_2k --quality best --steps 20000 --bpp 5.378 --arithmetic float32 --device cuda"
  build-gpu/cli/nmc compress ../shared/materials/ambientcg_metal009_2k -o "$out/metal009-float32.nmc" --quality best \
    --steps 20000 --device cuda --trainer fused --bpp 5.378 --seed 1 --arithmetic float32 --force --json \
    >"$out/compress-metal009-float32.json" 2>"$out/compress-metal009-float32.log" || status=1
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in ("arithmetic", "trainer", "psnr_db", "psnr8_mip0_db", "bits_per_texel", "training_seconds")})' \
    "$out/compress-metal009-float32.json" 2>/dev/null || tail -c 600 "$out/compress-metal009-float32.log"
  rm -f "$out/metal009-float32.nmc"
fi

if [ -d "${NMC_BENCH_MATERIALS:-bench-materials}" ] && [ -x build-gpu/cli/nmc ]; then
  for m in "${NMC_BENCH_MATERIALS:-bench-materials}"/*/; do
    name=$(basename "$m")
    step "bench: nmc compress $name --device cuda"
    started=$SECONDS
    build-gpu/cli/nmc compress "$m" -o "$out/$name.nmc" --device cuda --bpp 5 --force --json \
      >"$out/compress-$name.json" 2>"$out/compress-$name.log" || status=1
    echo "wall $((SECONDS - started)) s (loading, training, measuring and writing)"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in r if not isinstance(r[k], (list, dict))})' \
      "$out/compress-$name.json" 2>/dev/null || tail -c 600 "$out/compress-$name.json"
    build-gpu/cli/nmc validate "$out/$name.nmc" --source "$m" --device cuda >"$out/validate-$name.txt" 2>&1 ||
      build-gpu/cli/nmc validate "$out/$name.nmc" --source "$m" >"$out/validate-$name.txt" 2>&1 || status=1
    grep -E "PSNR|verdict" "$out/validate-$name.txt"
  done
fi

fi

if [ "$mode" = measure ] || [ "$mode" = all ]; then
  # One results file per rate, every material at that rate before the next rate: a run cut short by the
  # device call's time limit still has whole rates. With NMC_MEASURE_PARALLEL=1 the rates run side by side.
  measure_part() {  # RATE STEPS PART ONLY NOTE...
    local rate="$1" steps="$2" part="$3" only="$4"
    shift 4
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 python3 bench/run_benchmarks.py measure --codecs nmc --device cuda --decode-device cuda \
      --ntc-sizes --rates "$rate" --quality "${NMC_MEASURE_QUALITY:-best}" ${steps:+--steps "$steps"} \
      --nmc build-gpu/cli/nmc --label "h200-r$rate" -o "$out/bench-h200-r$rate$part.json" ${only:+--only "$only"} \
      "$@" ${NMC_MEASURE_ARGS:-} >"$out/measure-r$rate$part.log" 2>&1
    local rc=$?
    grep -E "nmc .* bpp|FAILED|done|deadline" "$out/measure-r$rate$part.log"
    return $rc
  }
  measure_rate() {  # RATE[@STEPS]
    local rate="${1%@*}" steps="${NMC_MEASURE_STEPS:-}" note=() split="$measure_split" rc=0
    [ "$1" != "$rate" ] && steps="${1#*@}"
    [ "${NMC_MEASURE_PARALLEL:-0}" = 1 ] &&
      note=(--note "rates $measure_rates ran at the same time on one GPU: timings are not alone on the GPU")
    [ "$split" -gt 1 ] &&
      note+=(--note "the materials ran in $split processes at the same time on one GPU: timings are not alone on the GPU")
    step "bench: nmc on every shared material at NTC's $rate bpp file size (CUDA training and decoding${steps:+, $steps steps})"
    if [ "$split" -le 1 ]; then
      measure_part "$rate" "$steps" "" "" "${note[@]}"
      return $?
    fi
    # The material folders as the driver finds them, dealt round-robin into the parts (empty parts skipped).
    local parts=() part names
    for ((part = 0; part < split; part++)); do
      names=$(cd bench && python3 -c 'import os, sys, materials
names = [os.path.basename(p) for p in materials.find_materials("../../shared/materials")]
print(",".join(names[int(sys.argv[1])::int(sys.argv[2])]))' "$part" "$split") ||
        { echo "$0: could not list the shared materials for part $part" >&2; return 1; }
      parts+=("$names")
    done
    local pids=()
    for ((part = 0; part < split; part++)); do
      [ -n "${parts[$part]}" ] || continue
      measure_part "$rate" "$steps" "-part$part" "${parts[$part]}" "${note[@]}" & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    return $rc
  }
  pids=()
  for rate in $(echo "$measure_rates" | tr , ' '); do
    if [ "${NMC_MEASURE_PARALLEL:-0}" = 1 ]; then
      measure_rate "$rate" & pids+=($!)
    else
      measure_rate "$rate" || status=1
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
fi

step "done, status $status"
exit $status
