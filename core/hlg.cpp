// The HLG curve of core/hlg.h.
#include "core/hlg.h"

#include <algorithm>
#include <cmath>

namespace nmc {

bool is_hdr_map(SampleType sample_type, float min, float max) {
    return is_float(sample_type) && min >= 0 && max > 1;
}

float hlg_encode(float x) {
    const double v = std::min(std::max(static_cast<double>(x), 0.0), 1.0);
    return static_cast<float>(v <= 1.0 / 12.0 ? std::sqrt(3.0 * v) : kHlgA * std::log(12.0 * v - kHlgB) + kHlgC);
}

float hlg_decode(float e) {
    // spec 8.9, in the order written.
    if (e <= 0.5f) return (e * e) / 3.0f;
    return (std::exp((e - kHlgC) / kHlgA) + kHlgB) / 12.0f;
}

}  // namespace nmc
