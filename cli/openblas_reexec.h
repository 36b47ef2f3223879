// OpenBLAS's kernel choice on virtual machines. OpenBLAS picks its kernels at load time from CPUID's family and model;
// where a hypervisor hides the model it falls back to its generic "Prescott" kernels (SSE3), even on CPUs with AVX2 or
// AVX-512. The trainer's matrix products then run about 1.4x slower: measured on a 2-core Xeon VM (2026-12-01,
// bench/results/notes-compressor.txt, "OpenBLAS on virtual machines"), the demo trained at 14-15 steps/s with Prescott
// and at 21-23 with OPENBLAS_CORETYPE=Haswell or SkylakeX. OpenBLAS reads OPENBLAS_CORETYPE only when it is loaded, so
// the override must be in the environment when the process starts: nmc's main re-executes itself with it.
#pragma once

#include <string>

namespace nmc::cli {

// The core to ask OpenBLAS for, or "" to keep its choice: SkylakeX (AVX-512) or Haswell (AVX2 + FMA) where the
// detected core is one of OpenBLAS's pre-AVX2 x86 cores and the CPU has those instructions.
std::string openblas_core_override(const std::string& detected_core, bool cpu_has_avx2_fma, bool cpu_has_avx512);

// Where OPENBLAS_CORETYPE is unset and openblas_core_override names a core for this CPU: sets it and replaces this
// process with a new run of the same executable and arguments (Linux; returns only if that fails, leaving the
// variable unset). Elsewhere, or with nothing to change, returns at once. Call it first in main, before any output.
void reexec_with_openblas_core_if_generic(char** argv);

}  // namespace nmc::cli
