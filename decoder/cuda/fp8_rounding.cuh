// Device-side FP8 E4M3 rounding (spec 2.1), shared by every CUDA kernel that re-quantises activations.
#pragma once

#include <cuda_fp8.h>

namespace nmc {

// Nearest E4M3 value of x, ties to even; |x| > 448 saturates to +-448 (the hardware's satfinite mode is the
// spec's saturation rule); NaN stays NaN. On sm_89+ this is one cvt instruction pair.
__device__ __forceinline__ float round_to_fp8_e4m3(float x) {
    const __nv_fp8_storage_t code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    const __half_raw h = __nv_cvt_fp8_to_halfraw(code, __NV_E4M3);
    return __half2float(__half(h));
}

}  // namespace nmc
