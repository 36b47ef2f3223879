// Device memory owned by a unique_ptr (freed by cudaFree), and its one checked allocation. For .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "cuda/cuda_check.h"

namespace nmc {

struct DeviceFree {
    void operator()(void* p) const { cudaFree(p); }
};
template <typename T>
using DeviceArray = std::unique_ptr<T, DeviceFree>;

// `count` elements of T (at least one, so that an empty array is still a valid pointer) into `out`.
template <typename T>
Status device_alloc(size_t count, DeviceArray<T>& out) {
    void* p = nullptr;
    NMC_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
    out.reset(static_cast<T*>(p));
    return Status::success();
}

}  // namespace nmc
