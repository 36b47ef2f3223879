// An implementation of spec 2.2's f16(x) independent of core's: x scaled by a power of two so that binary16's
// spacing at x becomes 1, rounded to an integer by the C library (to nearest, ties to even), scaled back, then
// saturated to +-65504. Plain double arithmetic, so it is the same with every compiler (Clang 14 has no _Float16 on
// x86-64). For the decoder tests' own spec implementations.
#pragma once

#include <algorithm>
#include <cmath>

namespace nmc::test {

inline float independent_f16(double x) {
    if (std::isnan(x) || x == 0.0) return static_cast<float>(x);
    if (std::isinf(x)) return std::copysign(65504.0f, static_cast<float>(x));
    int exponent = 0;
    std::frexp(x, &exponent);  // |x| in [2^(exponent-1), 2^exponent)
    // binary16 holds 11 significant bits down to 2^-14, and multiples of 2^-24 below (subnormals).
    const int spacing_exponent = std::max(exponent - 11, -24);
    const double rounded = std::ldexp(std::nearbyint(std::ldexp(x, -spacing_exponent)), spacing_exponent);
    return static_cast<float>(std::copysign(std::min(std::fabs(rounded), 65504.0), x));
}

// spec 8.6, binary16 arithmetic, written from the spec with independent_f16; c = f16(1/3) derived here too.
inline float independent_hgelu_binary16(float y) {
    const double h = independent_f16(y);
    const double c = independent_f16(1.0 / 3.0);
    const double t = std::fmin(std::fmax(independent_f16(h * c + 0.5), 0.0), 1.0);
    return independent_f16(std::fmin(h, 3.0) * t);
}

}  // namespace nmc::test
