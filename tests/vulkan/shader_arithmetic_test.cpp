// nmc_decode.glsl's arithmetic steps against the reference decoder's, value for value on a Vulkan device: E4M3
// rounding (spec 2.1), binary16 rounding (2.2) and both activations rounded to E4M3 (8.6: the next layer's inputs,
// nmc_hidden_activation_value's shortcuts included), on every finite binary16 value, the
// midpoints between neighbouring binary16 values and their float32 neighbours, and random float32 values. For the
// binary16 activation every binary16 h = f16(y) is a case, which shows that rounding h * c + 0.5 to float32 before
// binary16 (as the shader does) gives the reference's single rounding of the exact value for every h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "runtime/vulkan/vulkan_context.h"
#include "tests/vulkan/spirv/arithmetic_probe.h"

namespace nmc {
namespace {

using vulkan_detail::Buffer;
using vulkan_detail::ComputePipeline;
using vulkan_detail::Context;

enum Function : uint32_t { kRoundFp8 = 0, kRoundF16 = 1, kActivationBinary16 = 2, kActivationFloat32 = 3 };

struct Probe {
    uint32_t count;
    uint32_t function;
    float one_third;
};

// Every input of the probe, as described above.
std::vector<float> probe_inputs() {
    std::vector<float> inputs;
    for (uint32_t code = 0; code < 0x10000; ++code) {
        if ((code & 0x7C00u) == 0x7C00u) continue;  // infinities and NaNs
        const float h = fp16_to_float(static_cast<uint16_t>(code));
        inputs.push_back(h);
        if ((code & 0x7FFFu) == 0x7BFFu) continue;  // 65504: no larger neighbour
        const float next = fp16_to_float(static_cast<uint16_t>(code + 1));
        const float mid = h + (next - h) * 0.5f;  // exact: binary16 neighbours' midpoint
        inputs.push_back(mid);
        inputs.push_back(std::nextafter(mid, 0.0f));
        inputs.push_back(std::nextafter(mid, 2.0f * mid));
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-40, 20);
    for (int i = 0; i < 200000; ++i)
        inputs.push_back((i % 2 ? -1.0f : 1.0f) * std::ldexp(mantissa(rng), exponent(rng)));
    for (float x : {0.0f, -0.0f, 448.0f, 449.0f, 464.0f, 65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f,
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
        inputs.push_back(x);
    return inputs;
}

float reference(Function f, float x) {
    switch (f) {
        case kRoundFp8:
            return round_to_fp8_e4m3(x);
        case kRoundF16:
            return round_to_fp16_satfinite(x);
        case kActivationBinary16:
            return round_to_fp8_e4m3(hgelu_clamped_binary16(x));
        case kActivationFloat32:
            return round_to_fp8_e4m3(hgelu_clamped(x));
    }
    return 0;
}

class ShaderArithmetic : public ::testing::Test {
protected:
    void SetUp() override {
        Result<std::unique_ptr<Context>> opened = Context::open(-1);
        ASSERT_TRUE(opened.ok()) << opened.status().to_string();
        context_ = std::move(opened).value();
        inputs_ = probe_inputs();
        const VkDeviceSize bytes = inputs_.size() * sizeof(float);
        const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        ASSERT_TRUE(context_->create_buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host, 0, in_).ok());
        ASSERT_TRUE(context_->create_buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host, 0, out_).ok());
        std::memcpy(in_.mapped, inputs_.data(), bytes);
        // Binding 0 is nmc_decode.glsl's model buffer, which the probe declares but never reads.
        Result<std::unique_ptr<ComputePipeline>> made =
            ComputePipeline::create(*context_, nmc_spirv_arithmetic_probe, sizeof(nmc_spirv_arithmetic_probe),
                                    {in_.buffer, in_.buffer, out_.buffer}, {}, sizeof(Probe));
        ASSERT_TRUE(made.ok()) << made.status().to_string();
        pipeline_ = std::move(made).value();
    }
    void TearDown() override {
        pipeline_.reset();
        if (context_) {
            context_->destroy(in_);
            context_->destroy(out_);
        }
    }

    // Runs `f` on every input and compares with the reference decoder's, bit for bit.
    void expect_reference_values(Function f, float one_third) {
        std::memset(out_.mapped, 0xFF, inputs_.size() * sizeof(float));  // NaN: an unwritten output fails
        const Probe probe{static_cast<uint32_t>(inputs_.size()), f, one_third};
        ASSERT_TRUE(context_->begin().ok());
        pipeline_->record_dispatch(&probe, static_cast<uint32_t>((inputs_.size() + 63) / 64));
        context_->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_HOST_READ_BIT);
        ASSERT_TRUE(context_->submit_and_wait().ok());
        const float* got = static_cast<const float*>(out_.mapped);
        size_t differing = 0;
        for (size_t i = 0; i < inputs_.size(); ++i) {
            const float expected = reference(f, inputs_[i]);
            // NaN (the activation of an infinite input, which no finite layer sum gives) may be any NaN: IEEE 754
            // leaves its sign and payload to the hardware (NVIDIA's is 0x7FFFFFFF, x86's 0xFFC00000).
            const bool both_nan = std::isnan(got[i]) && std::isnan(expected);
            if (float_bits(got[i]) != float_bits(expected) && !both_nan && differing++ < 8)
                ADD_FAILURE() << "function " << f << " of " << inputs_[i] << " (bits " << std::hex
                              << float_bits(inputs_[i]) << "): " << got[i] << " (bits " << float_bits(got[i])
                              << "), reference " << expected << " (bits " << float_bits(expected) << ")" << std::dec;
        }
        EXPECT_EQ(differing, 0u) << "of " << inputs_.size();
    }

    std::unique_ptr<Context> context_;
    std::vector<float> inputs_;
    Buffer in_;
    Buffer out_;
    std::unique_ptr<ComputePipeline> pipeline_;
};

TEST_F(ShaderArithmetic, Fp8RoundingEqualsTheReference) {
    expect_reference_values(kRoundFp8, 0.0f);
}

TEST_F(ShaderArithmetic, Binary16RoundingEqualsTheReference) {
    expect_reference_values(kRoundF16, 0.0f);
}

TEST_F(ShaderArithmetic, Binary16ActivationEqualsTheReference) {
    expect_reference_values(kActivationBinary16, kOneThirdBinary16);
}

TEST_F(ShaderArithmetic, Float32ActivationEqualsTheReference) {
    expect_reference_values(kActivationFloat32, kOneThirdFloat32);
}

}  // namespace
}  // namespace nmc
