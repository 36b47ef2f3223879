// Device discovery and the FP8 rounding entry point of the CUDA decoder.
#include <cuda_runtime.h>

#include <memory>

#include "decoder/cuda/cuda_check.h"
#include "decoder/cuda/cuda_device.h"
#include "decoder/cuda/fp8_rounding.cuh"

namespace nmc {
namespace {

__global__ void round_to_fp8_kernel(const float* in, float* out, size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = round_to_fp8_e4m3(in[i]);
}

struct DeviceFree {
    void operator()(void* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<float, DeviceFree>;

}  // namespace

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

Status cuda_round_to_fp8_e4m3(int device, const float* in, float* out, size_t n) {
    auto info = query_cuda_device(device);
    if (!info.ok()) return info.status();
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    if (n == 0) return Status::success();
    float* raw_in = nullptr;
    float* raw_out = nullptr;
    NMC_CUDA_RETURN_IF_ERROR(cudaMalloc(&raw_in, n * sizeof(float)));
    DeviceBuffer d_in(raw_in);
    NMC_CUDA_RETURN_IF_ERROR(cudaMalloc(&raw_out, n * sizeof(float)));
    DeviceBuffer d_out(raw_out);
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(d_in.get(), in, n * sizeof(float), cudaMemcpyHostToDevice));
    constexpr unsigned kThreads = 256;
    const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
    round_to_fp8_kernel<<<blocks, kThreads>>>(d_in.get(), d_out.get(), n);
    NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(out, d_out.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::success();
}

}  // namespace nmc
