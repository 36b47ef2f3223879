// The timing variants of the CUDA decoder (CudaDecodeVariant): which are binary16 ones (values close to the spec's),
// which the tiled kernel's breakdown and which need the warpgroup kernels, and how far apart two decodes of the same
// pack are. Shared by the decoder test and its benchmark.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "decoder/cuda/cuda_decode_variants.h"

namespace nmc::test {

inline bool is_binary16_variant(CudaDecodeVariant variant) {
    return variant == CudaDecodeVariant::binary16_activation ||
           variant == CudaDecodeVariant::binary16_activation_and_sampling ||
           variant == CudaDecodeVariant::tensor_sampling_binary16;
}

// The tiled kernel's breakdown: timing only, values neither the spec's nor close to them.
inline bool is_tiled_breakdown_variant(CudaDecodeVariant variant) {
    return variant == CudaDecodeVariant::tiled_without_activation ||
           variant == CudaDecodeVariant::tiled_without_stores || variant == CudaDecodeVariant::tiled_without_sampling;
}

// The variants that run only where the Hopper warpgroup kernels do (else invalid_argument).
inline bool is_warpgroup_variant(CudaDecodeVariant variant) {
    return variant == CudaDecodeVariant::warpgroup_4_blocks || variant == CudaDecodeVariant::tensor_sampling_binary16 ||
           is_tiled_breakdown_variant(variant);
}

struct ValueDifference {
    double rms = 0.0;
    double largest = 0.0;
    double changed_fraction = 0.0;  // of the values that differ at all
};

// `values` against `reference`, value by value (same length).
inline ValueDifference value_difference(const std::vector<float>& values, const std::vector<float>& reference) {
    double sum_squares = 0.0;
    ValueDifference out;
    size_t changed = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        const double d = static_cast<double>(values[i]) - static_cast<double>(reference[i]);
        sum_squares += d * d;
        out.largest = std::max(out.largest, std::fabs(d));
        changed += d != 0.0;
    }
    const double n = static_cast<double>(reference.size());
    out.rms = std::sqrt(sum_squares / n);
    out.changed_fraction = static_cast<double>(changed) / n;
    return out;
}

}  // namespace nmc::test
