// The Vulkan runtime's whole-mip decoder against the CPU reference decoder. The shaders follow the portable kernel's
// operation order (each layer's sum in input order, every rounding the spec's), so every texel of every mip must equal
// the portable kernel's bit for bit, on any pack: exact-sum packs, general packs and the golden file, in both
// arithmetics. These tests run wherever the build has the runtime; CI has lavapipe (mesa-vulkan-drivers), and a
// machine without a Vulkan device fails them rather than skipping: install mesa-vulkan-drivers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "decoder/cpu/cpu_decoder.h"
#include "format/pack.h"
#include "runtime/vulkan/vulkan_decoder.h"
#include "tests/decoder/random_pack.h"
#if NMC_HAS_TRAINER
#include "tests/cli/nmc_process.h"
#include "tests/validate/constant_pack.h"
#endif

namespace nmc {
namespace {

Pack with_arithmetic(Pack pack, Arithmetic arithmetic) {
    pack.network.arithmetic = arithmetic;
    return pack;
}

VulkanDecoderOptions on_path(VulkanNetworkPath path) {
    VulkanDecoderOptions options;
    options.path = path;
    return options;
}

// Every mip of the pack on the Vulkan decoder and the CPU's portable kernel. Values further apart than `tolerance`
// (0: value for value; == also equates -0.0 and +0.0, the same value) may be at most `max_fraction` of all.
void expect_agreement_with_portable_kernel(const Pack& pack, const VulkanDecoderOptions& options,
                                           float tolerance = 0.0f, double max_fraction = 0.0) {
    CpuDecoderOptions cpu_options;
    cpu_options.isa = CpuIsa::portable;
    Result<CpuDecoder> cpu = CpuDecoder::create(pack, cpu_options);
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack, options);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    ASSERT_EQ(gpu->path(), options.path == VulkanNetworkPath::automatic ? VulkanNetworkPath::scalar : options.path);
    size_t beyond = 0;
    size_t total = 0;
    for (int m = 0; m < pack.material.mip_count; ++m) {
        std::vector<std::vector<float>> expected;
        std::vector<std::vector<float>> got;
        ASSERT_TRUE(cpu->decode_mip_channels(m, expected).ok());
        const Status s = gpu->decode_mip_channels(m, got);
        ASSERT_TRUE(s.ok()) << s.to_string();
        ASSERT_EQ(got.size(), expected.size());
        for (size_t c = 0; c < got.size(); ++c) {
            size_t differing = 0;
            size_t first = 0;
            for (size_t t = 0; t < got[c].size(); ++t) {
                const bool equal = tolerance == 0.0f ? got[c][t] == expected[c][t]
                                                     : std::fabs(got[c][t] - expected[c][t]) <= tolerance;
                if (!equal && differing++ == 0) first = t;
            }
            if (max_fraction == 0.0) {
                EXPECT_EQ(differing, 0u) << "mip " << m << " channel " << c << ": " << differing << " of "
                                         << got[c].size() << " texels differ; first at " << first << ": "
                                         << got[c][first] << " vs " << expected[c][first];
            }
            beyond += differing;
            total += got[c].size();
        }
    }
    EXPECT_LE(static_cast<double>(beyond), max_fraction * static_cast<double>(total))
        << beyond << " of " << total << " values differ by more than " << tolerance;
}

void expect_equal_to_portable_kernel(const Pack& pack) {
    expect_agreement_with_portable_kernel(pack, on_path(VulkanNetworkPath::scalar));
}

// The first device that runs the cooperative-matrix path, or -1.
int cooperative_matrix_device() {
    Result<std::vector<VulkanDeviceInfo>> devices = list_vulkan_devices();
    if (!devices.ok()) return -1;
    for (const VulkanDeviceInfo& d : *devices)
        if (d.cooperative_matrix) return d.index;
    return -1;
}

// General packs' tolerance where only the order of each layer's sum differs: tests/decoder/cpu_decoder_test.cpp
// derives it (3e-3 in the output, a few texels in 10^3 flipping an E4M3 rounding).
constexpr float kSumOrderTolerance = 3e-3f;
constexpr double kMaxFractionBeyondTolerance = 0.01;

TEST(VulkanDecoder, ListsADevice) {
    Result<std::vector<VulkanDeviceInfo>> devices = list_vulkan_devices();
    ASSERT_TRUE(devices.ok()) << devices.status().to_string() << " (install mesa-vulkan-drivers for lavapipe)";
    ASSERT_FALSE(devices->empty());
    for (const VulkanDeviceInfo& d : *devices)
        std::printf("vulkan:%d %s (%s, Vulkan %s; cooperative matrices: %s)\n", d.index, d.name.c_str(), d.type.c_str(),
                    d.api_version.c_str(), d.cooperative_matrix_detail.c_str());
}

TEST(VulkanDecoder, ExactSumPacksEqualTheCpuInBothArithmetics) {
    for (const test::ExactCase& c : test::exact_sum_cases()) {
        for (Arithmetic a : {Arithmetic::float32, Arithmetic::binary16}) {
            SCOPED_TRACE(std::string(c.name) + ", " + to_string(a));
            expect_equal_to_portable_kernel(with_arithmetic(test::make_random_pack(c.options), a));
        }
    }
}

// E4M3 weights over the whole range with scales, wide channel ranges, F = 16, C = 12: sums that round, activations
// far outside [-3, 3] (so the binary16 arithmetic's roundings and saturation are all reached).
TEST(VulkanDecoder, GeneralPacksEqualThePortableKernelBitForBit) {
    const test::RandomPackOptions o = test::general_pack_options();
    for (Arithmetic a : {Arithmetic::float32, Arithmetic::binary16}) {
        SCOPED_TRACE(to_string(a));
        expect_equal_to_portable_kernel(with_arithmetic(test::make_random_pack(o), a));
    }
}

// The include as an engine that leaves its shape constants unset runs it (the shape read from the model buffer): the
// same values, on the general packs and on a network of other widths and layer count.
TEST(VulkanDecoder, WithoutShapeConstantsTheSameValues) {
    VulkanDecoderOptions generic = on_path(VulkanNetworkPath::scalar);
    generic.shape_constants = false;
    test::RandomPackOptions o = test::general_pack_options();
    for (Arithmetic a : {Arithmetic::float32, Arithmetic::binary16}) {
        SCOPED_TRACE(to_string(a));
        expect_agreement_with_portable_kernel(with_arithmetic(test::make_random_pack(o), a), generic);
    }
    o.hidden_widths = {40, 24};
    o.feature_count = 5;
    expect_agreement_with_portable_kernel(test::make_random_pack(o), generic);
}

// Wide layers (up to spec 9's 256), one texture of one channel, a non-square clamp material.
TEST(VulkanDecoder, WideLayersAndOneChannel) {
    test::RandomPackOptions o;
    o.width = 50;
    o.height = 130;
    o.address_mode = AddressMode::clamp;
    o.feature_count = 3;
    o.channel_count = 1;
    o.hidden_widths = {256, 17};
    o.level_bits = {8, 1};
    o.seed = 21;
    expect_equal_to_portable_kernel(test::make_random_pack(o));
}

TEST(VulkanDecoder, GoldenPackEqualsTheCpu) {
    Result<Pack> pack = read_pack_file(std::string(NMC_SOURCE_DIR) + "/data/golden/v1_0_small.nmc");
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    expect_equal_to_portable_kernel(pack.value());
    expect_equal_to_portable_kernel(with_arithmetic(pack.value(), Arithmetic::binary16));
}

// Source channels (spec 8.8-8.9) come from the same host code as the CPU decoder's, on equal pack values.
TEST(VulkanDecoder, TexturesEqualTheCpu) {
    Result<Pack> pack = read_pack_file(std::string(NMC_SOURCE_DIR) + "/data/golden/v1_0_small.nmc");
    ASSERT_TRUE(pack.ok());
    CpuDecoderOptions cpu_options;
    cpu_options.isa = CpuIsa::portable;
    Result<CpuDecoder> cpu = CpuDecoder::create(pack.value(), cpu_options);
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack.value(), on_path(VulkanNetworkPath::scalar));
    ASSERT_TRUE(cpu.ok() && gpu.ok());
    for (size_t t = 0; t < pack->textures.size(); ++t) {
        for (int m = 0; m < pack->material.mip_count; ++m) {
            Result<Image> expected = cpu->decode_texture(static_cast<int>(t), m);
            Result<Image> got = gpu->decode_texture(static_cast<int>(t), m);
            ASSERT_TRUE(expected.ok() && got.ok());
            EXPECT_EQ(got->pixels, expected->pixels) << "texture " << t << " mip " << m;
            EXPECT_EQ(got->sample_type, expected->sample_type);
        }
    }
}

// The tensor-core path: where a device has it, the exact-sum packs equal the CPU bit for bit in both arithmetics (any
// summation order gives the exact sums) and general packs agree within the summation-order tolerance. Elsewhere
// (lavapipe), asking for it is a clear error. automatic runs the scalar path everywhere (the faster one on the H200).
// NMC_REQUIRE_GPU builds (scripts/gpu-check.sh) fail without such a device.
TEST(VulkanDecoder, CooperativeMatrixPathAgreesWhereTheDeviceHasIt) {
    const Pack pack = test::make_random_pack(test::exact_sum_cases()[0].options);
    const int device = cooperative_matrix_device();
    if (device < 0) {
#if NMC_REQUIRE_GPU
        FAIL() << "no Vulkan device runs the cooperative-matrix path";
#endif
        Result<VulkanDecoder> refused = VulkanDecoder::create(pack, on_path(VulkanNetworkPath::cooperative_matrix));
        ASSERT_FALSE(refused.ok());
        EXPECT_EQ(refused.status().code(), StatusCode::backend_unavailable);
        EXPECT_NE(refused.status().message().find("cannot run the cooperative-matrix path: "), std::string::npos)
            << refused.status().to_string();
        Result<VulkanDecoder> automatic = VulkanDecoder::create(pack);
        ASSERT_TRUE(automatic.ok());
        EXPECT_EQ(automatic->path(), VulkanNetworkPath::scalar);
        return;
    }
    Result<VulkanDecoder> automatic = VulkanDecoder::create(pack);
    ASSERT_TRUE(automatic.ok());
    EXPECT_EQ(automatic->path(), VulkanNetworkPath::scalar);
    for (const test::ExactCase& c : test::exact_sum_cases()) {
        for (Arithmetic a : {Arithmetic::float32, Arithmetic::binary16}) {
            SCOPED_TRACE(std::string(c.name) + ", " + to_string(a));
            expect_agreement_with_portable_kernel(with_arithmetic(test::make_random_pack(c.options), a),
                                                  on_path(VulkanNetworkPath::cooperative_matrix));
        }
    }
    const test::RandomPackOptions o = test::general_pack_options();
    for (Arithmetic a : {Arithmetic::float32, Arithmetic::binary16}) {
        SCOPED_TRACE(std::string("general pack, ") + to_string(a));
        expect_agreement_with_portable_kernel(with_arithmetic(test::make_random_pack(o), a),
                                              on_path(VulkanNetworkPath::cooperative_matrix), kSumOrderTolerance,
                                              kMaxFractionBeyondTolerance);
    }
}

#if NMC_HAS_TRAINER
// Packs the trainer writes (`nmc compress` on two shared materials, a short run: real weight and latent statistics,
// the default network, both arithmetics) decode to the CPU portable kernel's values on every texel of every mip.
TEST(VulkanDecoder, FreshlyCompressedSharedMaterialsEqualTheCpu) {
    testing::TempDir dir;
    const std::string materials = std::string(NMC_SHARED_DIR) + "/materials/";
    const struct {
        const char* material;
        const char* arithmetic;
    } cases[] = {{"gltf_flighthelmet_leather_512", "binary16"}, {"polyhaven_factory_wall_1k", "float32"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.material);
        const std::string pack_path = dir.file(std::string(c.material) + ".nmc");
        const test::CommandResult r =
            test::run_nmc("compress '" + materials + c.material + "' -o '" + pack_path +
                              "' --quality fast --steps 100 --bpp 4 --seed 1 --arithmetic " + c.arithmetic,
                          dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        Result<Pack> pack = read_pack_file(pack_path);
        ASSERT_TRUE(pack.ok()) << pack.status().to_string();
        EXPECT_EQ(to_string(pack->network.arithmetic), std::string(c.arithmetic));
        expect_equal_to_portable_kernel(pack.value());
    }
}
#endif

// A texture of the test pack below: its sample type, colour space, normal mode and channel sources.
TextureLayout texture(const std::string& name, SampleType type, ColorSpace space, NormalMode mode,
                      std::vector<ChannelSource> channels) {
    TextureLayout t;
    t.name = name;
    t.file_name = name + (type == SampleType::float16 || type == SampleType::float32 ? ".exr" : ".png");
    t.file_format = type == SampleType::float16 || type == SampleType::float32 ? "exr" : "png";
    t.sample_type = type;
    t.color_space = space;
    t.normal_mode = mode;
    t.channels = std::move(channels);
    return t;
}

ChannelSource from_pack(int channel, bool invert = false) {
    ChannelSource c;
    c.pack_channel = channel;
    c.invert = invert;
    return c;
}

ChannelSource constant(float value) {
    ChannelSource c;
    c.kind = ChannelSource::Kind::constant;
    c.constant_value = value;
    return c;
}

// The bytes a file of the texture's sample type holds for CPU value v (spec 8.10), as decode_texture.comp packs them.
void append_file_value(SampleType type, float v, std::vector<uint8_t>& out) {
    uint32_t code = 0;
    int bytes = 4;
    if (type == SampleType::uint8) {
        code = quantize_u8(v);
        bytes = 1;
    } else if (type == SampleType::uint16) {
        code = quantize_u16(v);
        bytes = 2;
    } else if (type == SampleType::float16) {
        code = float_to_fp16(v);
        bytes = 2;
    } else {
        code = float_bits(v);
    }
    for (int b = 0; b < bytes; ++b) out.push_back(static_cast<uint8_t>(code >> (8 * b)));
}

// Inference on load: every sample type, 1, 2, 3 (-> RGBA) and 4 channels, sRGB colour, a DirectX normal map (xy, Y
// inverted, Z rebuilt), constants and inverts, channel ranges beyond [0, 1] (clamped in 8- and 16-bit files, kept in
// float ones), odd mip sizes; the image bytes equal the CPU's texture values as files store them. Normal maps may
// differ by one code (GPU square roots and divisions are not correctly rounded), on few texels.
TEST(VulkanDecoder, TextureImagesHoldTheCpuFileValues) {
    test::RandomPackOptions o;
    o.width = 45;
    o.height = 30;
    o.channel_count = 9;
    o.wide_channel_ranges = true;
    o.seed = 31;
    Pack pack = test::make_random_pack(o);
    ChannelSource z;
    z.kind = ChannelSource::Kind::normal_z;
    pack.textures = {
        texture("color", SampleType::uint8, ColorSpace::srgb, NormalMode::none,
                {from_pack(0), from_pack(1), from_pack(2)}),
        texture("normal", SampleType::uint8, ColorSpace::linear, NormalMode::xy, {from_pack(3), from_pack(4, true), z}),
        texture("height", SampleType::uint16, ColorSpace::linear, NormalMode::none, {from_pack(5)}),
        texture("mask", SampleType::uint8, ColorSpace::linear, NormalMode::none, {constant(0.25f), from_pack(6, true)}),
        texture("emissive", SampleType::float16, ColorSpace::linear, NormalMode::none, {from_pack(7), from_pack(8)}),
        texture("data", SampleType::float32, ColorSpace::linear, NormalMode::none,
                {from_pack(0), from_pack(8), constant(2.5f), from_pack(5, true)})};
    const char* formats[] = {"R8G8B8A8_SRGB", "R8G8B8A8_UNORM", "R16_UNORM",
                             "R8G8_UNORM",    "R16G16_SFLOAT",  "R32G32B32A32_SFLOAT"};
    CpuDecoderOptions cpu_options;
    cpu_options.isa = CpuIsa::portable;
    Result<CpuDecoder> cpu = CpuDecoder::create(pack, cpu_options);
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack, on_path(VulkanNetworkPath::scalar));
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        SCOPED_TRACE(pack.textures[t].name);
        Result<TextureImage> image = gpu->decode_texture_image(static_cast<int>(t));
        ASSERT_TRUE(image.ok()) << image.status().to_string();
        EXPECT_EQ(image->format, formats[t]);
        ASSERT_EQ(image->mips.size(), static_cast<size_t>(pack.material.mip_count));
        const bool normal = pack.textures[t].normal_mode != NormalMode::none;
        for (int m = 0; m < pack.material.mip_count; ++m) {
            Result<Image> values = cpu->decode_texture(static_cast<int>(t), m);
            ASSERT_TRUE(values.ok());
            std::vector<uint8_t> expected;
            for (size_t i = 0; i < values->texel_count(); ++i) {
                for (int c = 0; c < image->samples; ++c) {
                    const float v =
                        c < values->channels
                            ? values->pixels[i * static_cast<size_t>(values->channels) + static_cast<size_t>(c)]
                            : 1.0f;
                    append_file_value(pack.textures[t].sample_type, v, expected);
                }
            }
            const std::vector<uint8_t>& got = image->mips[static_cast<size_t>(m)];
            ASSERT_EQ(got.size(), expected.size()) << "mip " << m;
            size_t differing = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                const int difference = std::abs(static_cast<int>(got[i]) - static_cast<int>(expected[i]));
                if (difference > (normal ? 1 : 0))
                    ADD_FAILURE() << "mip " << m << " byte " << i << ": " << int(got[i]) << " vs " << int(expected[i]);
                differing += difference != 0;
            }
            EXPECT_LE(differing, normal ? got.size() / 100 : 0) << "mip " << m;
        }
    }
}

// HLG-encoded HDR textures (spec 8.9): the shader's peak * hlg_decode(v) against the CPU's. GPU exp and division are not
// correctly rounded (GLSL allows exp 3 + 2|x| ulps; x <= 2.5 here), so each value may differ by a relative 2^-19, a
// few float32 steps; a float16 file rounds that away on all but a few texels, to one step.
TEST(VulkanDecoder, HlgTexturesAgreeWithTheCpu) {
    test::RandomPackOptions o;
    o.width = 37;
    o.height = 21;
    o.channel_count = 5;
    o.seed = 47;
    Pack pack = test::make_random_pack(o);
    pack.textures = {texture("emissive", SampleType::float32, ColorSpace::linear, NormalMode::none,
                             {from_pack(0), from_pack(1), from_pack(2)}),
                     texture("sky", SampleType::float16, ColorSpace::linear, NormalMode::none,
                             {from_pack(3), constant(0.5f)}),
                     texture("mask", SampleType::uint8, ColorSpace::linear, NormalMode::none, {from_pack(4)})};
    for (size_t t = 0; t < 2; ++t) {
        pack.textures[t].value_encoding = ValueEncoding::hlg;
        pack.textures[t].peak = t == 0 ? 16.0f : 1000.0f;
    }
    CpuDecoderOptions cpu_options;
    cpu_options.isa = CpuIsa::portable;
    Result<CpuDecoder> cpu = CpuDecoder::create(pack, cpu_options);
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack, on_path(VulkanNetworkPath::scalar));
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        SCOPED_TRACE(pack.textures[t].name);
        Result<TextureImage> image = gpu->decode_texture_image(static_cast<int>(t));
        ASSERT_TRUE(image.ok()) << image.status().to_string();
        const SampleType type = pack.textures[t].sample_type;
        float largest = 0;
        for (int m = 0; m < pack.material.mip_count; ++m) {
            Result<Image> values = cpu->decode_texture(static_cast<int>(t), m);
            ASSERT_TRUE(values.ok());
            const std::vector<uint8_t>& got = image->mips[static_cast<size_t>(m)];
            ASSERT_EQ(got.size(), values->texel_count() * static_cast<size_t>(image->bytes_per_texel));
            size_t differing = 0;
            for (size_t i = 0; i < values->texel_count(); ++i) {
                for (int c = 0; c < values->channels; ++c) {
                    const float v = values->pixels[i * static_cast<size_t>(values->channels) + static_cast<size_t>(c)];
                    largest = std::max(largest, v);
                    const size_t at = (i * static_cast<size_t>(image->samples) + static_cast<size_t>(c));
                    if (type == SampleType::float32) {
                        float g;
                        std::memcpy(&g, &got[at * 4], 4);
                        EXPECT_NEAR(g, v, std::fabs(v) * 0x1p-19f) << "mip " << m << " texel " << i;
                    } else {
                        std::vector<uint8_t> expected;
                        append_file_value(type, v, expected);
                        const size_t bytes = expected.size();
                        uint32_t e = 0, g = 0;
                        std::memcpy(&e, expected.data(), bytes);
                        std::memcpy(&g, &got[at * bytes], bytes);
                        EXPECT_LE(std::abs(static_cast<int64_t>(g) - static_cast<int64_t>(e)), 1) << "mip " << m;
                        differing += g != e;
                    }
                }
            }
            EXPECT_LE(differing, values->pixels.size() / 100) << "mip " << m;
        }
        // The HLG textures reach well beyond [0, 1]: their values are decoded, not clamped.
        if (t < 2) {
            EXPECT_GT(largest, 1.0f);
        }
    }
}

TEST(VulkanDecoder, ABrokenPackNeverReachesTheDevice) {
    Pack pack = test::make_random_pack(test::exact_sum_cases()[0].options);
    pack.network.layers[1].weights[5] = 0x7F;  // an E4M3 NaN code (spec 10)
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack);
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(gpu.status().message().find("NaN"), std::string::npos) << gpu.status().to_string();
}

TEST(VulkanDecoder, AMissingDeviceIsAClearError) {
    VulkanDecoderOptions options;
    options.device = 999;
    Result<VulkanDecoder> gpu =
        VulkanDecoder::create(test::make_random_pack(test::exact_sum_cases()[0].options), options);
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), StatusCode::backend_unavailable);
    EXPECT_NE(gpu.status().message().find("no such Vulkan device"), std::string::npos) << gpu.status().to_string();
}

TEST(VulkanDecoder, MipOutOfRangeIsRefused) {
    const Pack pack = test::make_random_pack(test::exact_sum_cases()[0].options);
    Result<VulkanDecoder> gpu = VulkanDecoder::create(pack);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    std::vector<std::vector<float>> out;
    EXPECT_EQ(gpu->decode_mip_channels(pack.material.mip_count, out).code(), StatusCode::invalid_argument);
    EXPECT_EQ(gpu->decode_mip_channels(-1, out).code(), StatusCode::invalid_argument);
    EXPECT_EQ(gpu->decode_texture(99, 0).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace nmc
