// FP8 E4M3 and binary16 conversions by integer manipulation of the float32 bit pattern, so the result does
// not depend on the floating-point environment or the compiler's contraction choices.
#include "core/number_formats.h"

#include <cmath>

namespace nmc {
namespace {

// Rounds the 24-bit significand (implicit bit included) of a normal float32 right by `shift` bits,
// ties to even. Returns the rounded significand (may carry into bit 24 - shift).
uint32_t round_significand(uint32_t significand, int shift) {
    const uint32_t kept = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u))) return kept + 1u;
    return kept;
}

// Rounds a non-negative value below the subnormal limit to an integer multiple of 2^-scale_log2, ties to
// even. Exact: multiplying by a power of two is exact for the values involved.
uint32_t round_subnormal(float magnitude, int scale_log2) {
    const float scaled = std::ldexp(magnitude, scale_log2);
    const float floor_value = std::floor(scaled);
    const float rest = scaled - floor_value;
    auto q = static_cast<uint32_t>(floor_value);
    if (rest > 0.5f || (rest == 0.5f && (q & 1u))) ++q;
    return q;
}

}  // namespace

float fp8_e4m3_to_float(uint8_t code) {
    const bool negative = (code & 0x80u) != 0;
    const int exponent = (code >> 3) & 0xF;
    const int mantissa = code & 0x7;
    float magnitude;
    if (exponent == 15 && mantissa == 7) {
        magnitude = std::nanf("");
    } else if (exponent == 0) {
        magnitude = std::ldexp(static_cast<float>(mantissa), -9);
    } else {
        magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
    }
    return negative ? -magnitude : magnitude;
}

uint8_t float_to_fp8_e4m3(float x) {
    if (std::isnan(x)) return 0x7F;
    const uint32_t b = float_bits(x);
    const uint8_t sign = static_cast<uint8_t>((b >> 24) & 0x80u);
    const float magnitude = std::fabs(x);
    if (magnitude > kFp8E4M3Max) return static_cast<uint8_t>(sign | 0x7E);
    if (magnitude < 0.015625f) {  // below 2^-6: subnormal step 2^-9; q == 8 is the smallest normal, code 0x08
        return static_cast<uint8_t>(sign | round_subnormal(magnitude, 9));
    }
    int exponent = static_cast<int>((b >> 23) & 0xFFu) - 127;
    const uint32_t significand = (b & 0x7FFFFFu) | 0x800000u;
    uint32_t rounded = round_significand(significand, 20);  // 4 significant bits remain
    if (rounded == 16u) {
        rounded = 8u;
        ++exponent;
    }
    const int field = exponent + 7;
    const uint32_t mantissa = rounded & 0x7u;
    if (field > 15 || (field == 15 && mantissa == 7)) return static_cast<uint8_t>(sign | 0x7E);
    return static_cast<uint8_t>(sign | (static_cast<uint32_t>(field) << 3) | mantissa);
}

float round_to_fp8_e4m3(float x) {
    return fp8_e4m3_to_float(float_to_fp8_e4m3(x));
}

float fp16_to_float(uint16_t code) {
    const bool negative = (code & 0x8000u) != 0;
    const int exponent = (code >> 10) & 0x1F;
    const int mantissa = code & 0x3FF;
    float magnitude;
    if (exponent == 31) {
        magnitude = mantissa == 0 ? INFINITY : std::nanf("");
    } else if (exponent == 0) {
        magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    } else {
        magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 1024.0f, exponent - 15);
    }
    return negative ? -magnitude : magnitude;
}

uint16_t float_to_fp16(float x) {
    if (std::isnan(x)) return 0x7E00;
    const uint32_t b = float_bits(x);
    const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
    const float magnitude = std::fabs(x);
    if (std::isinf(magnitude)) return static_cast<uint16_t>(sign | 0x7C00);
    if (magnitude < 6.103515625e-05f) {  // below 2^-14: subnormal step 2^-24; q == 1024 is the smallest normal
        return static_cast<uint16_t>(sign | round_subnormal(magnitude, 24));
    }
    int exponent = static_cast<int>((b >> 23) & 0xFFu) - 127;
    const uint32_t significand = (b & 0x7FFFFFu) | 0x800000u;
    uint32_t rounded = round_significand(significand, 13);  // 11 significant bits remain
    if (rounded == 2048u) {
        rounded = 1024u;
        ++exponent;
    }
    const int field = exponent + 15;
    if (field >= 31) return static_cast<uint16_t>(sign | 0x7C00);
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(field) << 10) | (rounded & 0x3FFu));
}

float round_to_fp16_satfinite(double x) {
    if (std::isnan(x)) return static_cast<float>(x);
    const double magnitude = std::fabs(x);
    // Everything above 65504 rounds to 65504 or (to nearest) to infinity, which saturates to 65504.
    if (magnitude >= kFp16Max) return std::copysign(kFp16Max, static_cast<float>(x));
    // The quantum at this magnitude: 2^-24 below 2^-14 (subnormals), else 2^(e - 10) for magnitude in [2^e, 2^(e+1)).
    // Scaling by a power of two is exact; nearbyint rounds to nearest even under the default rounding mode.
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
    const int quantum_exponent = exponent - 1 < -14 ? -24 : exponent - 1 - 10;
    const double rounded = std::ldexp(std::nearbyint(std::ldexp(magnitude, -quantum_exponent)), quantum_exponent);
    return std::copysign(static_cast<float>(rounded), static_cast<float>(x));
}

}  // namespace nmc
