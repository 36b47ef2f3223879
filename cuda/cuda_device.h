// CUDA device discovery for the CUDA decoder and the fused CUDA trainer (compressor/cuda). CUDA-free header:
// callers never include cuda_runtime.h.
#pragma once

#include <string>

#include "core/status.h"

namespace nmc {

struct CudaDeviceInfo {
    int index = 0;
    std::string name;
    int compute_major = 0;
    int compute_minor = 0;
    int multiprocessors = 0;
    size_t global_memory_bytes = 0;
    size_t shared_memory_per_block_optin = 0;  // the most shared memory one block may opt in to

    // FP8 E4M3 tensor-core MMA exists from compute capability 8.9 (Ada) on; older RTX GPUs take the FP16 path.
    bool has_fp8_mma() const { return compute_major > 8 || (compute_major == 8 && compute_minor >= 9); }
    // Whether the decoder's fp8 path is the faster one, so that `automatic` takes it. On the H200 (9.0) it is not: 5.1
    // against 5.7 Gtexel/s for the fp16 path (bench/results/notes-cuda-decoder.txt, "Ceilings"). Compute capability
    // 10.x is assumed to be the same, since its cubins have the same shape (33 E4M3 MMAs compile to 816 instructions on
    // sm_90 and sm_100, 264 on sm_89, 256 on sm_120, against 256 for 33 fp16 MMAs); 8.9 and 12.x, where the E4M3 MMA is
    // one instruction, are assumed faster with fp8 (not measured: no such GPU here).
    bool fp8_path_is_faster() const { return (compute_major == 8 && compute_minor >= 9) || compute_major >= 12; }
};

// Number of usable CUDA devices; 0 when there is no driver or no device (never an error).
int cuda_device_count();

// Properties of device `index`; backend_unavailable when it does not exist.
Result<CudaDeviceInfo> query_cuda_device(int index);

}  // namespace nmc
