#!/usr/bin/env bash
# The whole test suite, as a newcomer or CI runs it: set up and build (scripts/setup.sh), run every test, then
# rebuild the libraries that parse untrusted bytes under AddressSanitizer + UBSan and run their tests again (the Vulkan
# runtime, which takes packs only after the reader's checks, stays out: the Vulkan driver is not built for ASan);
# finally build the libFuzzer targets with clang and run each for a bounded time (NMC_FUZZ_SECONDS, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== test suite (build/)" >&2
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== sanitizer build (build-asan/): pack reader, material loader and CPU decoder under ASan + UBSan" >&2
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNMC_SANITIZE=address,undefined \
  -DNMC_WITH_TRAINER=OFF -DNMC_WITH_CUDA=OFF -DNMC_WITH_VULKAN=OFF -DNMC_BUILD_BENCH=OFF >build-asan.configure.log 2>&1 ||
  { cat build-asan.configure.log >&2; exit 1; }
cmake --build build-asan -j"$(nproc)"
# Full unwinding on malloc so suppressions can name library frames (libstdc++ has no frame pointers).
ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp" \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)"

echo "== fuzzers (build-fuzz/): clang, libFuzzer + ASan + UBSan, each target for ${NMC_FUZZ_SECONDS:-30} s" >&2
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNMC_BUILD_FUZZERS=ON \
  -DNMC_FUZZ_SECONDS="${NMC_FUZZ_SECONDS:-30}" -DNMC_BUILD_TESTS=OFF -DNMC_WITH_TRAINER=OFF -DNMC_WITH_CUDA=OFF \
  -DNMC_WITH_VULKAN=OFF -DNMC_BUILD_BENCH=OFF >build-fuzz.configure.log 2>&1 ||
  { cat build-fuzz.configure.log >&2; exit 1; }
cmake --build build-fuzz -j"$(nproc)" --target nmc_fuzzers
ctest --test-dir build-fuzz --output-on-failure -j"$(nproc)" -L fuzz
