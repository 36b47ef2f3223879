// The committed data/golden/v1_0_small.nmc and v2_0_small.nmc: the writer still produces them byte for byte, and the
// reader still reads the fields they hold. Either failing means the format changed (spec 11: bump the version and add
// a new golden file instead of regenerating these).
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/number_formats.h"
#include "tests/format/golden_pack.h"
#include "tests/format/pack_equality.h"

namespace nmc {
namespace {

std::vector<uint8_t> committed_golden(int version_major = 1) {
    Result<std::vector<uint8_t>> bytes = read_file(testing::golden_pack_path(version_major), 1 << 20);
    EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
    return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

void expect_written_bytes(const Pack& pack, const std::vector<uint8_t>& committed) {
    Result<std::vector<uint8_t>> written = write_pack(pack, testing::golden_write_options());
    ASSERT_TRUE(written.ok()) << written.status().to_string();
    ASSERT_EQ(written->size(), committed.size());
    for (size_t i = 0; i < committed.size(); ++i)
        ASSERT_EQ((*written)[i], committed[i]) << "first difference at byte " << i;
}

TEST(GoldenPack, WriterReproducesTheCommittedBytes) {
    expect_written_bytes(testing::make_golden_pack(), committed_golden(1));
}

TEST(GoldenPack, WriterReproducesTheCommitted2_0Bytes) {
    expect_written_bytes(testing::make_golden_pack_2_0(), committed_golden(2));
}

TEST(GoldenPack, StaysSmallEnoughForExhaustiveCorruptionTests) {
    EXPECT_LT(committed_golden().size(), 8u * 1024u);
}

// The 2.0 pack differs from 1.0 in the header's version, network.arithmetic and the training schedule's keys.
TEST(GoldenPack, ReaderReadsTheCommitted2_0Fields) {
    const std::vector<uint8_t> committed = committed_golden(2);
    ContainerInfo info;
    Result<Pack> read = read_pack(committed.data(), committed.size(), &info);
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    EXPECT_EQ(info.version_major, 2);
    EXPECT_EQ(info.version_minor, 0);
    EXPECT_EQ(read->network.arithmetic, Arithmetic::binary16);
    EXPECT_EQ(read->network.activation, Activation::hgelu_clamped);
    EXPECT_EQ(read->encoder.trainer, "fused");
    EXPECT_EQ(read->encoder.latent_rounding, "straight-through");
    EXPECT_EQ(read->encoder.weight_rounding_at, 0.96);
    EXPECT_TRUE(testing::expect_same_pack(testing::make_golden_pack_2_0(), *read));
}

TEST(GoldenPack, ReaderReadsTheCommittedFields) {
    const std::vector<uint8_t> committed = committed_golden();
    ContainerInfo info;
    Result<Pack> read = read_pack(committed.data(), committed.size(), &info);
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    const Pack& p = *read;

    EXPECT_EQ(info.version_major, 1);
    EXPECT_EQ(info.version_minor, 0);
    EXPECT_EQ(info.file_size, committed.size());
    ASSERT_EQ(info.sections.size(), 3u);
    EXPECT_EQ(info.sections[0].fourcc, "META");
    EXPECT_EQ(info.sections[0].offset, 256u);  // align64(64 + 3 * 48)
    EXPECT_EQ(info.sections[1].fourcc, "LATN");
    EXPECT_EQ(info.sections[1].raw_size, 312u);  // 256 + 32 + (4 -> pad 16) + 8
    EXPECT_EQ(info.sections[2].fourcc, "WGHT");
    EXPECT_EQ(info.sections[2].raw_size, 1056u);  // 544 + 352 + 160 (spec 7 padding)

    EXPECT_EQ(p.material.name, "golden_small");
    EXPECT_EQ(p.material.width, 32);
    EXPECT_EQ(p.material.height, 16);
    EXPECT_EQ(p.material.mip_count, 3);
    EXPECT_EQ(p.material.address_mode, AddressMode::wrap);
    ASSERT_EQ(p.channels.size(), 7u);
    EXPECT_EQ(p.channels[6].name, "height");
    EXPECT_EQ(p.channels[6].lo, -0.1f);
    EXPECT_EQ(p.channels[6].hi, 2.5f);

    ASSERT_EQ(p.textures.size(), 4u);
    const TextureLayout& normal = p.textures[1];
    EXPECT_EQ(normal.file_name, "golden_NormalDX.png");
    EXPECT_EQ(normal.normal_mode, NormalMode::xy);
    EXPECT_EQ(normal.normal_convention, NormalConvention::directx);
    EXPECT_TRUE(normal.channels[1].invert);
    EXPECT_EQ(normal.channels[2].kind, ChannelSource::Kind::normal_z);
    EXPECT_EQ(p.textures[2].channels[2].kind, ChannelSource::Kind::constant);
    EXPECT_EQ(p.textures[2].channels[2].constant_value, 1.0f / 3.0f);
    EXPECT_EQ(p.textures[3].sample_type, SampleType::float32);
    EXPECT_EQ(p.textures[0].color_space, ColorSpace::srgb);

    ASSERT_EQ(p.latents.levels.size(), 4u);
    EXPECT_EQ(p.latents.feature_count, 4);
    EXPECT_EQ(p.latents.levels[0].width, 16);
    EXPECT_EQ(p.latents.levels[3].height, 1);
    EXPECT_EQ(p.latents.levels[2].bits, 1);
    // The first codes of the deterministic sequence, as packed LSB first (spec 6).
    const std::vector<uint8_t> first_codes(p.latents.levels[0].codes.begin(), p.latents.levels[0].codes.begin() + 4);
    const Pack rebuilt = testing::make_golden_pack();
    EXPECT_EQ(first_codes, std::vector<uint8_t>(rebuilt.latents.levels[0].codes.begin(),
                                                rebuilt.latents.levels[0].codes.begin() + 4));

    ASSERT_EQ(p.network.layers.size(), 3u);
    EXPECT_EQ(p.network.layers[0].input_width, 32);
    EXPECT_FALSE(p.network.layers[0].has_scale());
    EXPECT_EQ(p.network.layers[2].weight_type, WeightType::int8);
    EXPECT_EQ(p.network.layers[2].output_width, 7);
    EXPECT_EQ(fp16_to_float(p.network.layers[2].biases[0]), -0.5f);

    EXPECT_EQ(p.encoder.seed, 42);
    EXPECT_EQ(p.encoder.target_bpp, 0.1);
    ASSERT_TRUE(p.quality.present);
    EXPECT_EQ(p.quality.textures[1].mean_angle_deg, 2.5);
    EXPECT_EQ(p.quality.channels[5], 99.0);

    EXPECT_TRUE(testing::expect_same_pack(rebuilt, p));
}

}  // namespace
}  // namespace nmc
