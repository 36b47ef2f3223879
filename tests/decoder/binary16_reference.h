// An implementation of spec 2.2's f16(x) independent of core's: the compiler's conversion from double to _Float16
// (one rounding, to nearest even), then saturated to +-65504. For the decoder tests' own spec implementations.
#pragma once

#include <cmath>

namespace nmc::test {

inline float independent_f16(double x) {
    const float rounded = static_cast<float>(static_cast<_Float16>(x));
    return std::isinf(rounded) ? std::copysign(65504.0f, rounded) : rounded;
}

// spec 8.6, binary16 arithmetic, written from the spec with independent_f16; c = f16(1/3) derived here too.
inline float independent_hgelu_binary16(float y) {
    const double h = independent_f16(y);
    const double c = independent_f16(1.0 / 3.0);
    const double t = std::fmin(std::fmax(independent_f16(h * c + 0.5), 0.0), 1.0);
    return independent_f16(std::fmin(h, 3.0) * t);
}

}  // namespace nmc::test
