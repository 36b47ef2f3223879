// OpenBLAS's kernel choice on virtual machines. OpenBLAS picks its kernels at load time from CPUID's family and model;
// where a hypervisor hides the model it falls back to its generic "Prescott" kernels (SSE3), even on CPUs with AVX2 or
// AVX-512. The trainer's matrix products then run about 1.4x slower: measured on a 2-core Xeon VM (2026-12-01,
// bench/results/notes-compressor.txt, "OpenBLAS on virtual machines"), the demo trained at 14-15 steps/s with Prescott
// and at 21-23 with OPENBLAS_CORETYPE=Haswell or SkylakeX. OpenBLAS reads OPENBLAS_CORETYPE only when it is loaded, so
// the override must be in the environment when the process starts: nmc's main re-executes itself with it.
//
// And its thread count: OpenBLAS divides a matrix product between its threads in a way that changes the float32
// sums, so the packs of OMP_NUM_THREADS=1 and 2 differed (and `batch -j 2`'s, whose children get fewer threads,
// differed from `compress`'s). CPU training holds a OneOpenBlasThread; LibTorch's own threads, whose results for the
// trainer's operations do not depend on their count, still run the rest in parallel.
#pragma once

#include <string>

namespace nmc {

// The core to ask OpenBLAS for, or "" to keep its choice: SkylakeX (AVX-512) or Haswell (AVX2 + FMA) where the
// detected core is one of OpenBLAS's pre-AVX2 x86 cores and the CPU has those instructions.
std::string openblas_core_override(const std::string& detected_core, bool cpu_has_avx2_fma, bool cpu_has_avx512);

// The core OpenBLAS runs with in this process, or "" when the BLAS loaded is not OpenBLAS.
std::string openblas_core_name();

// Where OPENBLAS_CORETYPE is unset and openblas_core_override names a core for this CPU: sets it and replaces this
// process with a new run of the same executable and arguments (Linux; returns only if that fails, leaving the
// variable unset). Elsewhere, or with nothing to change, returns at once. Call it first in main, before any output.
void reexec_with_openblas_core_if_generic(char** argv);

// While at least one instance lives, OpenBLAS runs every product on the calling thread (openblas_set_num_threads(1));
// after the last is destroyed, the thread count it had before is restored. Nothing where the BLAS loaded is not
// OpenBLAS. Safe to create and destroy from several threads.
class OneOpenBlasThread {
public:
    OneOpenBlasThread();
    ~OneOpenBlasThread();
    OneOpenBlasThread(const OneOpenBlasThread&) = delete;
    OneOpenBlasThread& operator=(const OneOpenBlasThread&) = delete;
};

// OpenBLAS's thread count now (openblas_get_num_threads), or 0 when the BLAS loaded is not OpenBLAS.
int openblas_threads();

}  // namespace nmc
