// The binary16 arithmetic of spec 2.2, 6, 8.3 and 8.6 (network.arithmetic binary16): core's f16 rounding, the
// reference steps and the AVX2 / AVX-512 activations, against an independent implementation through the
// scaled rounding of binary16_reference.h. The activation depends on y only through h = f16(y), so sweeping
// every binary16 value (and the float32 values beside every rounding midpoint) covers it exhaustively.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "decoder/cpu/cpu_decoder.h"
#include "decoder/cpu/decoder_model.h"
#include "tests/decoder/binary16_reference.h"
#include "tests/decoder/random_pack.h"

namespace nmc {
namespace {

using test::independent_f16;
using test::independent_hgelu_binary16;

// Every finite binary16 value, as float32.
std::vector<float> every_finite_binary16() {
    std::vector<float> values;
    for (uint32_t code = 0; code < 0x10000u; ++code) {
        if ((code & 0x7C00u) != 0x7C00u) values.push_back(fp16_to_float(static_cast<uint16_t>(code)));
    }
    return values;
}

// Doubles on and beside every midpoint between neighbouring binary16 values (ties, and one step of 2^-30
// relative either side), the binary16 values themselves, the saturation boundary and random magnitudes.
std::vector<double> rounding_cases() {
    std::vector<double> cases;
    std::vector<float> values = every_finite_binary16();
    for (float v : values) cases.push_back(v);
    for (uint32_t code = 0; code < 0x7BFFu; ++code) {  // positive neighbours (code, code + 1)
        const double mid = (static_cast<double>(fp16_to_float(static_cast<uint16_t>(code))) +
                            fp16_to_float(static_cast<uint16_t>(code + 1))) /
                           2;
        for (double m : {mid, -mid}) {
            cases.push_back(m);
            cases.push_back(m + std::ldexp(std::fabs(m), -30));
            cases.push_back(m - std::ldexp(std::fabs(m), -30));
        }
    }
    for (double x : {65504.0, 65519.99, 65520.0, 70000.0, 1e30, -1e30, std::ldexp(1.0, -25), std::ldexp(1.0, -26),
                     std::ldexp(1.0, -25) + std::ldexp(1.0, -60), -std::ldexp(1.0, -40), 0.0, -0.0}) {
        cases.push_back(x);
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const double mantissa = std::uniform_real_distribution<double>(1.0, 2.0)(rng);
        const int exponent = std::uniform_int_distribution<int>(-30, 17)(rng);
        cases.push_back((i % 2 ? -1 : 1) * std::ldexp(mantissa, exponent));
    }
    return cases;
}

TEST(Binary16Arithmetic, RoundToFp16SatfiniteMatchesAnIndependentConversion) {
    size_t mismatches = 0;
    for (double x : rounding_cases()) {
        const float got = round_to_fp16_satfinite(x);
        const float expected = independent_f16(x);
        if (float_bits(got) != float_bits(expected) && ++mismatches <= 10) {
            ADD_FAILURE() << std::hexfloat << x << ": got " << got << ", expected " << expected;
        }
    }
    EXPECT_EQ(mismatches, 0u);
    EXPECT_EQ(round_to_fp16_satfinite(std::numeric_limits<double>::infinity()), 65504.0f);
    EXPECT_EQ(round_to_fp16_satfinite(-std::numeric_limits<double>::infinity()), -65504.0f);
    EXPECT_TRUE(std::isnan(round_to_fp16_satfinite(std::nan(""))));
    EXPECT_EQ(float_bits(round_to_fp16_satfinite(-std::ldexp(1.0, -40))), float_bits(-0.0f));
    EXPECT_EQ(round_to_fp16_satfinite(std::ldexp(1.0, -25)), 0.0f);  // the tie below the smallest subnormal: to even
}

// The activation's inputs: every binary16 value, the float32 values either side of every midpoint (so h's
// rounding is covered) and values beyond the binary16 range (satfinite).
std::vector<float> activation_inputs() {
    std::vector<float> inputs = every_finite_binary16();
    for (uint32_t code = 0; code < 0x7BFFu; ++code) {
        const float mid = static_cast<float>((static_cast<double>(fp16_to_float(static_cast<uint16_t>(code))) +
                                              fp16_to_float(static_cast<uint16_t>(code + 1))) /
                                             2);
        for (float m : {mid, -mid}) {
            inputs.push_back(m);
            inputs.push_back(std::nextafter(m, 0.0f));
            inputs.push_back(std::nextafter(m, 2 * m));
        }
    }
    for (float y : {65519.0f, 65520.0f, 1e9f, -65520.0f, -1e9f, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
        inputs.push_back(y);
    }
    inputs.push_back(0.5f);  // an odd count exercises the SIMD tails
    return inputs;
}

TEST(Binary16Arithmetic, ReferenceActivationMatchesTheSpecOnEveryBinary16Input) {
    EXPECT_EQ(kOneThirdBinary16, independent_f16(1.0 / 3.0));
    EXPECT_EQ(float_to_fp16(kOneThirdBinary16), 0x3555);
    size_t mismatches = 0;
    size_t differ_from_float32 = 0;
    for (float y : activation_inputs()) {
        const float got = hgelu_clamped_binary16(y);
        const float expected = independent_hgelu_binary16(y);
        // == (not bits): the independent version's fmin/fmax may keep a -0 where minps semantics give +0.
        if (!(got == expected) && ++mismatches <= 10) {
            ADD_FAILURE() << std::hexfloat << "y = " << y << ": got " << got << ", expected " << expected;
        }
        if (got != hgelu_clamped(y)) ++differ_from_float32;
    }
    EXPECT_EQ(mismatches, 0u);
    // Not the float32 activation under another name: most values in (-1.5, 3) round differently.
    EXPECT_GT(differ_from_float32, 10000u);
}

#if NMC_HAVE_X86_KERNELS
void expect_simd_matches_reference(void (*activation)(const float*, float*, size_t)) {
    const std::vector<float> inputs = activation_inputs();
    std::vector<float> got(inputs.size());
    activation(inputs.data(), got.data(), inputs.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const float expected = hgelu_clamped_binary16(inputs[i]);
        if (float_bits(got[i]) != float_bits(expected) && ++mismatches <= 10) {
            ADD_FAILURE() << std::hexfloat << "y = " << inputs[i] << ": got " << got[i] << ", reference " << expected;
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << inputs.size();
}

TEST(Binary16Arithmetic, Avx2ActivationMatchesTheReferenceBitForBit) {
    if (!cpu_detail::avx2_supported()) GTEST_SKIP() << "this CPU lacks AVX2, FMA and F16C";
    expect_simd_matches_reference(cpu_detail::hgelu_clamped_binary16_avx2);
}

TEST(Binary16Arithmetic, Avx512ActivationMatchesTheReferenceBitForBit) {
    if (!cpu_detail::avx512bf16_supported()) GTEST_SKIP() << "this CPU lacks AVX-512 BF16";
    expect_simd_matches_reference(cpu_detail::hgelu_clamped_binary16_avx512);
}

#if NMC_HAVE_AVX512FP16
TEST(Binary16Arithmetic, Avx512Fp16ActivationMatchesTheReferenceBitForBit) {
    if (!cpu_detail::avx512fp16_supported()) GTEST_SKIP() << "this CPU lacks AVX512-FP16";
    expect_simd_matches_reference(cpu_detail::hgelu_clamped_binary16_avx512fp16);
}
#endif
#endif

TEST(Binary16Arithmetic, DequantisationRoundsOnceFromTheExactValue) {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 2000; ++trial) {
        LatentLevel level;
        level.bits = std::vector<int>{1, 2, 4, 8}[static_cast<size_t>(trial % 4)];
        const float scale = std::ldexp(1.0f, std::uniform_int_distribution<int>(-12, 14)(rng));
        level.lo = std::uniform_real_distribution<float>(-1.0f, 0.5f)(rng) * scale;
        level.hi = level.lo + std::uniform_real_distribution<float>(0.01f, 1.0f)(rng) * scale;
        const std::vector<float> values = latent_value_table(level, Arithmetic::binary16);
        const float step = (level.hi - level.lo) / static_cast<float>((1 << level.bits) - 1);
        for (uint32_t q = 0; q < values.size(); ++q) {
            const float expected =
                independent_f16(static_cast<double>(q) * independent_f16(step) + independent_f16(level.lo));
            ASSERT_EQ(float_bits(values[q]), float_bits(expected))
                << "lo " << level.lo << " hi " << level.hi << " bits " << level.bits << " q " << q;
        }
    }
}

// spec 9's widest binary16 range: a 1-bit level of [-16384, 16384] has f16(step) = 32768 and values -16384, 16384,
// finite and exact; one beyond it is refused by the decoder (the CUDA decoder converts without saturating).
TEST(Binary16Arithmetic, WidestLatentRangeStaysFiniteAndWiderIsRefused) {
    LatentLevel level;
    level.bits = 1;
    level.lo = -16384.0f;
    level.hi = 16384.0f;
    EXPECT_EQ(latent_value_table(level, Arithmetic::binary16), (std::vector<float>{-16384.0f, 16384.0f}));
    Pack pack = test::make_random_pack(test::RandomPackOptions{});
    pack.network.arithmetic = Arithmetic::binary16;
    pack.latents.levels[1].lo = -16384.0f;
    pack.latents.levels[1].hi = 16384.0f;
    EXPECT_TRUE(CpuDecoder::create(pack).ok());
    pack.latents.levels[1].hi = 16385.0f;
    const Result<CpuDecoder> refused = CpuDecoder::create(pack);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(refused.status().message().find("'latents.levels[1].range'"), std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("outside [-16384, 16384]"), std::string::npos)
        << refused.status().message();
    pack.network.arithmetic = Arithmetic::float32;  // no such limit in the float32 arithmetic
    EXPECT_TRUE(CpuDecoder::create(pack).ok());
}

TEST(Binary16Arithmetic, BilinearWeightsAreTheFloat32WeightsRoundedOnce) {
    std::mt19937 rng(13);
    for (int trial = 0; trial < 100000; ++trial) {
        const float fx = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
        const float fy = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
        const BilinearWeights w = bilinear_weights(fx, fy);
        const BilinearWeights h = bilinear_weights_binary16(fx, fy);
        ASSERT_EQ(h.w00, independent_f16(w.w00));
        ASSERT_EQ(h.w10, independent_f16(w.w10));
        ASSERT_EQ(h.w01, independent_f16(w.w01));
        ASSERT_EQ(h.w11, independent_f16(w.w11));
    }
}

}  // namespace
}  // namespace nmc
