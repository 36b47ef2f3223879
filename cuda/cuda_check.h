// NMC_CUDA_RETURN_IF_ERROR: every CUDA runtime call goes through it, so a failure becomes a Status that names
// the call and its source location instead of a silent error code.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/status.h"

namespace nmc {

inline Status cuda_status(cudaError_t error, const char* call, const char* file, int line) {
    if (error == cudaSuccess) return Status::success();
    return Status(StatusCode::backend_unavailable, std::string(call) + " failed at " + file + ":" +
                                                       std::to_string(line) + ": " + cudaGetErrorString(error));
}

}  // namespace nmc

#define NMC_CUDA_RETURN_IF_ERROR(call) NMC_RETURN_IF_ERROR(::nmc::cuda_status((call), #call, __FILE__, __LINE__))
