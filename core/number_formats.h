// The scalar number formats of the .nmc format (docs/format-spec.md section "Number formats"):
// FP8 E4M3 (OCP "FN" variant: no infinities, one NaN code per sign, max 448) and IEEE binary16; and the
// quantisation of decoded samples to 8- and 16-bit codes (spec 8.10).
// Conversions round to nearest, ties to even; the saturation rules are the spec's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace nmc {

// Exact value of an E4M3 code. 0x7F and 0xFF are NaN.
float fp8_e4m3_to_float(uint8_t code);

// Nearest E4M3 code, ties to even. |x| > 448 (including infinity) saturates to +-448;
// NaN encodes as 0x7F. -0.0 encodes as 0x80.
uint8_t float_to_fp8_e4m3(float x);

// Rounds x to the nearest E4M3 value (float_to_fp8_e4m3 then back), the "FP8 rounding" of the spec.
float round_to_fp8_e4m3(float x);

constexpr float kFp8E4M3Max = 448.0f;

// The IEEE bit pattern of a float32, and the float32 of a bit pattern (inline: hot loops use them).
inline uint32_t float_bits(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
inline float float_from_bits(uint32_t b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

// Exact value of an IEEE binary16 code (subnormals, infinities and NaN included).
float fp16_to_float(uint16_t code);

// Nearest binary16 code, ties to even; overflow gives +-infinity, NaN gives 0x7E00.
uint16_t float_to_fp16(float x);

// The spec's f16(x) (section 2.2, the binary16 arithmetic): the binary16 value nearest the exact x, ties to even,
// rounded once; magnitudes that round beyond 65504 (infinity included) saturate to +-65504; NaN stays NaN. Callers
// pass the exact value of the spec's expression (binary64 holds each one exactly); the result, a binary16 value,
// is exact in float32.
float round_to_fp16_satfinite(double x);

constexpr float kFp16Max = 65504.0f;

// spec 8.6: hgelu_clamped's slope 1/3 in each arithmetic: float32(1/3), and f16(1/3) = binary16 0x3555 (2.2).
constexpr float kOneThirdFloat32 = 0.333333343f;
constexpr float kOneThirdBinary16 = 0.333251953125f;

// spec 8.10: uint8 files store floor(min(max(v, 0), 1) * 255 + 0.5); uint16 use 65535.
inline uint8_t quantize_u8(float v) {
    const float c = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;  // also maps NaN to 0
    return static_cast<uint8_t>(std::floor(c * 255.0f + 0.5f));
}
inline uint16_t quantize_u16(float v) {
    const float c = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
    return static_cast<uint16_t>(std::floor(c * 65535.0f + 0.5f));
}

}  // namespace nmc
