// FP8 E4M3 and binary16 conversions by integer manipulation of the float32 bit pattern, so the result does
// not depend on the floating-point environment or the compiler's contraction choices.
#include "core/number_formats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

float round_to_fp8_e4m3(float x) { return fp8_e4m3_to_float(float_to_fp8_e4m3(x)); }

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
    // The "magic number" rounding of binary64: for |x| in [2^e, 2^(e+1)), adding m = 2^(e+42) leaves a binary64 whose
    // last mantissa bit is worth 2^(e-10), binary16's step at that exponent, so the add rounds |x| to binary16
    // precision (to nearest, ties to even) and subtracting m again is exact. Below 2^-14 the step is the subnormal
    // step 2^-24, so e is clamped to -14. |x| is clamped to 65504 first: every larger magnitude saturates there
    // (satfinite), and those between 65504 and 65520 round to it anyway. NaN is returned as it is. Like all of nmc's
    // arithmetic, this assumes the default rounding mode (to nearest).
    constexpr uint64_t kExponentMask = 0x7FF0000000000000ull;
    constexpr uint64_t kMinNormalBits = uint64_t{1023 - 14} << 52;  // 2^-14
    constexpr uint64_t kShift = uint64_t{42} << 52;                 // times 2^42
    const double magnitude = std::fmin(std::fabs(x), static_cast<double>(kFp16Max));
    uint64_t bits;
    std::memcpy(&bits, &magnitude, sizeof bits);
    const uint64_t magic_bits = std::max(bits & kExponentMask, kMinNormalBits) + kShift;
    double magic;
    std::memcpy(&magic, &magic_bits, sizeof magic);
    const double rounded = (magnitude + magic) - magic;
    return std::isnan(x) ? static_cast<float>(x) : std::copysign(static_cast<float>(rounded), static_cast<float>(x));
}

}  // namespace nmc
