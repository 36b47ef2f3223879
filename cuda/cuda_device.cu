// CUDA device discovery.
#include "cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "cuda/cuda_check.h"

namespace nmc {

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no driver" error so later calls start clean
        return 0;
    }
    return count;
}

Result<CudaDeviceInfo> query_cuda_device(int index) {
    const int count = cuda_device_count();
    if (index < 0 || index >= count)
        return Status(StatusCode::backend_unavailable, "CUDA device " + std::to_string(index) + " does not exist (" +
                                                           std::to_string(count) + " device(s) found)");
    cudaDeviceProp prop{};
    NMC_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, index));
    CudaDeviceInfo info;
    info.index = index;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    info.global_memory_bytes = prop.totalGlobalMem;
    info.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
    return info;
}

}  // namespace nmc
