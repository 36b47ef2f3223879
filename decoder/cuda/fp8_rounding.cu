// The CUDA decoder's FP8 rounding as a host entry point, so tests compare it with the spec's (core's) rounding.
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/device_array.h"
#include "decoder/cuda/cuda_decoder.h"
#include "decoder/cuda/fp8_rounding.cuh"

namespace nmc {
namespace {

__global__ void round_to_fp8_kernel(const float* in, float* out, size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = round_to_fp8_e4m3(in[i]);
}

}  // namespace

Status cuda_round_to_fp8_e4m3(int device, const float* in, float* out, size_t n) {
    auto info = query_cuda_device(device);
    if (!info.ok()) return info.status();
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    if (n == 0) return Status::success();
    DeviceArray<float> d_in;
    NMC_RETURN_IF_ERROR(device_alloc(n, d_in));
    DeviceArray<float> d_out;
    NMC_RETURN_IF_ERROR(device_alloc(n, d_out));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(d_in.get(), in, n * sizeof(float), cudaMemcpyHostToDevice));
    constexpr unsigned kThreads = 256;
    const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
    round_to_fp8_kernel<<<blocks, kThreads>>>(d_in.get(), d_out.get(), n);
    NMC_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(out, d_out.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::success();
}

}  // namespace nmc
