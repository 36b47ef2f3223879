// Write -> read -> identical Pack, with and without zstd; determinism; the writer's own checks.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>

#include "core/file_io.h"
#include "core/number_formats.h"
#include "format/container.h"
#include "tests/format/golden_pack.h"
#include "tests/format/pack_equality.h"

namespace nmc {
namespace {

Pack read_back(const std::vector<uint8_t>& bytes, ContainerInfo* info = nullptr) {
    Result<Pack> pack = read_pack(bytes.data(), bytes.size(), info);
    EXPECT_TRUE(pack.ok()) << pack.status().to_string();
    return pack.ok() ? *pack : Pack{};
}

TEST(RoundTrip, UncompressedPackReadsBackIdentical) {
    const Pack pack = testing::make_golden_pack();
    WriteOptions options;
    options.compress = false;
    Result<std::vector<uint8_t>> bytes = write_pack(pack, options);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    ContainerInfo info;
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(*bytes, &info)));
    ASSERT_EQ(info.sections.size(), 3u);
    for (const SectionEntry& e : info.sections) EXPECT_EQ(e.compression, 0) << e.fourcc;
}

// spec 5.6 and 11: a binary16 pack is written as 2.0 with network.arithmetic; a float32 pack stays 1.0 without it.
TEST(RoundTrip, ArithmeticSurvivesAndPicksTheMajorVersion) {
    Pack pack = testing::make_golden_pack();
    ContainerInfo info;
    const std::vector<uint8_t> float32_bytes = write_pack(pack, testing::golden_write_options()).value();
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(float32_bytes, &info)));
    EXPECT_EQ(info.version_major, 1);
    const std::string float32_text(float32_bytes.begin(), float32_bytes.end());
    EXPECT_EQ(float32_text.find("arithmetic"), std::string::npos);

    pack.network.arithmetic = Arithmetic::binary16;
    WriteOptions options;
    options.compress = false;  // the metadata readable in the bytes
    const std::vector<uint8_t> binary16_bytes = write_pack(pack, options).value();
    const Pack back = read_back(binary16_bytes, &info);
    EXPECT_TRUE(testing::expect_same_pack(pack, back));
    EXPECT_EQ(back.network.arithmetic, Arithmetic::binary16);
    EXPECT_EQ(info.version_major, 2);
    EXPECT_EQ(info.version_minor, 0);
    const std::string binary16_text(binary16_bytes.begin(), binary16_bytes.end());
    EXPECT_NE(binary16_text.find("\"arithmetic\":\"binary16\""), std::string::npos);
}

// spec 5.4 and 11: a pack with an HLG-encoded texture is written as 3.0 whatever its arithmetic; its encoding and peak
// read back exactly, and the keys appear only on that texture.
TEST(RoundTrip, HlgTexturePicksMajorVersion3) {
    Pack pack = testing::make_golden_pack();
    pack.channels[6].lo = 0.0f;
    pack.channels[6].hi = 1.0f;
    pack.textures[3].value_encoding = ValueEncoding::hlg;
    pack.textures[3].peak = 12.345678f;
    WriteOptions options;
    options.compress = false;
    for (Arithmetic arithmetic : {Arithmetic::float32, Arithmetic::binary16}) {
        pack.network.arithmetic = arithmetic;
        const std::vector<uint8_t> bytes = write_pack(pack, options).value();
        ContainerInfo info;
        const Pack back = read_back(bytes, &info);
        EXPECT_TRUE(testing::expect_same_pack(pack, back));
        EXPECT_EQ(back.textures[3].peak, 12.345678f);
        EXPECT_EQ(info.version_major, 3);
        const std::string text(bytes.begin(), bytes.end());
        EXPECT_NE(text.find("\"arithmetic\":\"" + std::string(to_string(arithmetic)) + "\""), std::string::npos);
        size_t count = 0;
        for (size_t at = text.find("\"value_encoding\""); at != std::string::npos;
             at = text.find("\"value_encoding\"", at + 1))
            ++count;
        EXPECT_EQ(count, 1u);
    }
}

TEST(RoundTrip, ZstdPackReadsBackIdenticalAndCompressesMetadata) {
    const Pack pack = testing::make_golden_pack();
    Result<std::vector<uint8_t>> bytes = write_pack(pack);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    ContainerInfo info;
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(*bytes, &info)));
    ASSERT_EQ(info.sections.size(), 3u);
    EXPECT_EQ(info.sections[0].fourcc, "META");
    EXPECT_EQ(info.sections[0].compression, 1);  // JSON text always shrinks
    for (const SectionEntry& e : info.sections) {
        if (e.compression == 1) {
            EXPECT_LT(e.stored_size, e.raw_size) << e.fourcc;
        }
    }
}

TEST(RoundTrip, SameInputGivesSameBytes) {
    const Pack pack = testing::make_golden_pack();
    EXPECT_EQ(write_pack(pack).value(), write_pack(pack).value());
}

// The compressor rewrites a pack whose metadata changed with a CompressedSectionCache: the bytes must be those of
// a write without it, and only sections whose raw bytes and zstd level are unchanged may come from the cache.
TEST(RoundTrip, CompressedSectionCacheChangesNoByte) {
    Pack pack = testing::make_golden_pack();
    CompressedSectionCache cache;
    WriteOptions cached;
    cached.cache = &cache;
    EXPECT_EQ(write_pack(pack, cached).value(), write_pack(pack).value());
    pack.quality.bits_per_texel += 0.125;  // metadata only, as compressor's settling loop does
    EXPECT_EQ(write_pack(pack, cached).value(), write_pack(pack).value());
    pack.latents.levels[0].codes[0] ^= 1;  // the latents too
    const std::vector<uint8_t> rewritten = write_pack(pack, cached).value();
    EXPECT_EQ(rewritten, write_pack(pack).value());
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(rewritten)));

    const std::vector<uint8_t> raw = {1, 2, 3, 4, 5, 6, 7, 8};
    cache.store("TEST", raw, 19, {9, 9});
    ASSERT_NE(cache.find("TEST", raw, 19), nullptr);
    EXPECT_EQ(*cache.find("TEST", raw, 19), (std::vector<uint8_t>{9, 9}));
    EXPECT_EQ(cache.find("TEST", raw, 3), nullptr);
    EXPECT_EQ(cache.find("TSET", raw, 19), nullptr);
    std::vector<uint8_t> changed = raw;
    changed.back() = 0;
    EXPECT_EQ(cache.find("TEST", changed, 19), nullptr);
}

TEST(RoundTrip, FloatsAndOptionalPartsSurviveExactly) {
    Pack pack = testing::make_golden_pack();
    pack.channels[6].lo = 0.1f;
    pack.channels[6].hi = std::nextafter(0.1f, 1.0f);  // adjacent floats: any printing loss would merge them
    pack.latents.levels[0].lo = -0.0f;
    pack.latents.levels[0].hi = 1e-40f;  // a float subnormal
    pack.textures[2].channels[0].constant_value = 3.4028235e38f;
    pack.encoder.target_bpp = 0.1 + 0.2;
    pack.quality = QualityReport{};  // no quality stored
    pack.material.address_mode = AddressMode::clamp;
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(write_pack(pack).value())));
}

// nmc's training schedule in the encoder info (spec 5.7) survives; a pack without it (another tool's, the golden one)
// has none of its keys.
TEST(RoundTrip, EncoderScheduleSurvives) {
    Pack pack = testing::make_golden_pack();
    ASSERT_TRUE(pack.encoder.trainer.empty());
    const std::vector<uint8_t> plain = write_pack(pack).value();
    EXPECT_EQ(std::string(plain.begin(), plain.end()).find("latent_rounding"), std::string::npos);
    pack.encoder.trainer = "fused";
    pack.encoder.batch_size = 65536;
    pack.encoder.latent_learning_rate = 0.1;
    pack.encoder.network_learning_rate = 0.005;
    pack.encoder.latent_rounding = "straight-through";
    pack.encoder.latent_rounding_at = 0.8;
    pack.encoder.weight_rounding_at = 0.96;
    pack.encoder.latent_adam = "dense";
    WriteOptions options;
    options.compress = false;
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(write_pack(pack, options).value())));
}

TEST(RoundTrip, OptionalPerTextureQualitySurvives) {
    Pack pack = testing::make_golden_pack();
    pack.quality.textures[0].psnr8_mip0_db = 36.5;
    pack.quality.textures[2].channels.clear();
    const Pack back = read_back(write_pack(pack).value());
    EXPECT_TRUE(testing::expect_same_pack(pack, back));
    EXPECT_EQ(back.quality.textures[1].psnr8_mip0_db, 0.0);  // absent: not measured
}

TEST(RoundTrip, HighlyCompressibleSectionStaysWithinTheRatioLimit) {
    // All-zero latents compress far beyond 64:1; the writer must store them raw so that the reader (which
    // rejects raw_size > 64 x stored_size, spec 9) accepts the pack.
    Pack pack = testing::make_golden_pack();
    pack.material.width = pack.material.height = 1024;
    pack.latents.feature_count = 8;
    pack.network.layers[0].input_width = 32;
    for (size_t k = 0; k < pack.latents.levels.size(); ++k) {
        LatentLevel& l = pack.latents.levels[k];
        l.width = latent_level_size(1024, pack.latents.grid_scale, static_cast<int>(k));
        l.height = l.width;
        l.codes.assign(static_cast<size_t>(l.width * l.height * pack.latents.feature_count), 0);
    }
    WriteOptions options;
    options.zstd_level = 1;
    Result<std::vector<uint8_t>> bytes = write_pack(pack, options);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    ContainerInfo info;
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(*bytes, &info)));
    EXPECT_EQ(info.sections[1].fourcc, "LATN");
    EXPECT_EQ(info.sections[1].compression, 0);
}

// The writer applies the reader's rules: each of these Packs would be rejected, so none is written.
TEST(Writer, RefusesPacksTheReaderWouldReject) {
    struct Case {
        const char* fragment;
        void (*breaks)(Pack&);
    };
    const Case cases[] = {
        {"material.width", [](Pack& p) { p.material.width = 0; }},
        {"E4M3 NaN", [](Pack& p) { p.network.layers[0].weights[3] = 0xFF; }},
        {"Int8 -128", [](Pack& p) { p.network.layers[2].weights[0] = 0x80; }},
        {"scale 1 is not finite", [](Pack& p) { p.network.layers[1].scales[1] = INFINITY; }},
        {"bias 0 is not finite", [](Pack& p) { p.network.layers[1].biases[0] = 0x7C00; }},
        {"beyond 1 bits", [](Pack& p) { p.latents.levels[2].codes[5] = 2; }},
        {"codes", [](Pack& p) { p.latents.levels[0].codes.pop_back(); }},
        {"must have scales", [](Pack& p) { p.network.layers[2].scales.clear(); }},
        {"expected 256 weights", [](Pack& p) { p.network.layers[1].weights.push_back(0); }},
        {"not unique", [](Pack& p) { p.textures[1].name = p.textures[0].name; }},
        {"'textures[1].name': expected a plain file name, got '../escaped' (it contains '/' or '\\')",
         [](Pack& p) { p.textures[1].name = "../escaped"; }},
        {"'textures[2].file_name': expected a plain file name, got '..' (it is '.' or '..')",
         [](Pack& p) { p.textures[2].file_name = ".."; }},
        {"'textures[0].file_name': expected a plain file name, got 'Con.png' (it is a device name reserved on Windows)",
         [](Pack& p) { p.textures[0].file_name = "Con.png"; }},
        {"got 'a\\x00b.png' (it contains a control character)",
         [](Pack& p) { p.textures[3].file_name = std::string("a\0b.png", 7); }},
        {"'textures[1].name': expected a plain file name, got '\\xC3(.png' (it is not valid UTF-8)",
         [](Pack& p) { p.textures[1].name = "\xC3\x28.png"; }},
        {"got 'x.png.' (it ends in a space or a dot)", [](Pack& p) { p.textures[1].file_name = "x.png."; }},
        {"'textures[1].file_name': 'GOLDEN_COLOR.png' is also the file name of textures[0]",
         [](Pack& p) { p.textures[1].file_name = "GOLDEN_COLOR.png"; }},
        {"'material.name': expected UTF-8 text without control characters, got 'a\\x09b'",
         [](Pack& p) { p.material.name = "a\tb"; }},
        {"'material.name': expected UTF-8 text without control characters, got '\\xFF'",
         [](Pack& p) { p.material.name = "\xFF"; }},
        {"quality", [](Pack& p) { p.quality.mips[0] = INFINITY; }},
    };
    for (const Case& c : cases) {
        Pack pack = testing::make_golden_pack();
        c.breaks(pack);
        Result<std::vector<uint8_t>> bytes = write_pack(pack);
        ASSERT_FALSE(bytes.ok()) << c.fragment;
        EXPECT_EQ(bytes.status().code(), StatusCode::invalid_argument) << c.fragment;
        EXPECT_NE(bytes.status().message().find(c.fragment), std::string::npos) << bytes.status().message();
    }
}

// Names that are plain file names, with spaces, dots and non-ASCII letters inside, are written and read back.
TEST(RoundTrip, OrdinaryNamesSurvive) {
    Pack pack = testing::make_golden_pack();
    pack.material.name = "Ziegel Wand (Größe 2)";
    pack.textures[0].name = "wall.001_diff";
    pack.textures[0].file_name = "wall.001_diff.png";
    pack.textures[1].name = "Ziegel_Wand_Größe";
    pack.textures[1].file_name = "Ziegel_Wand_Größe.png";
    pack.textures[2].name = "T Crate D";
    pack.textures[2].file_name = "T Crate D.png";
    pack.textures[3].file_name = "Metal009_2K-JPG_Displacement.exr";
    pack.quality.textures[0].texture = "wall.001_diff";
    pack.quality.textures[1].texture = "Ziegel_Wand_Größe";
    pack.quality.textures[2].texture = "T Crate D";
    Result<std::vector<uint8_t>> bytes = write_pack(pack);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    EXPECT_TRUE(testing::expect_same_pack(pack, read_back(*bytes)));
}

// The writer applies the reader's limits on the META text (spec 9), which no rule on the Pack sees.
TEST(Writer, RefusesMetadataBeyondTheReadersLimits) {
    Pack pack = testing::make_golden_pack();
    while (pack.quality.textures.size() <= kMaxMetadataMembers) {
        TextureQuality t;
        t.texture = "t" + std::to_string(pack.quality.textures.size());
        pack.quality.textures.push_back(t);
    }
    Result<std::vector<uint8_t>> bytes = write_pack(pack);
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::limit_exceeded);
    EXPECT_EQ(bytes.status().message(),
              "cannot write pack: section 'META': 'quality.textures' has more than 64 members (the limit of spec 9)");
    pack = testing::make_golden_pack();
    pack.encoder.tool = std::string(kMaxMetadataSize, 'x');
    bytes = write_pack(pack);
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::limit_exceeded);
    EXPECT_NE(bytes.status().message().find("cannot write pack: section 'META': "), std::string::npos)
        << bytes.status().message();
}

TEST(Writer, RefusesInvalidUtf8AndBadZstdLevel) {
    Pack pack = testing::make_golden_pack();
    pack.encoder.device = "\xC3\x28";
    EXPECT_EQ(write_pack(pack).status().code(), StatusCode::invalid_argument);
    WriteOptions options;
    options.zstd_level = 1000;
    EXPECT_EQ(write_pack(testing::make_golden_pack(), options).status().code(), StatusCode::invalid_argument);
}

TEST(Writer, FileWriteRefusesToOverwriteWhenAsked) {
    const std::string path = ::testing::TempDir() + "/round_trip_" + std::to_string(::getpid()) + ".nmc";
    const Pack pack = testing::make_golden_pack();
    ASSERT_TRUE(write_pack_file(path, pack).ok());
    EXPECT_EQ(write_pack_file(path, pack, {}, false).code(), StatusCode::io_error);
    Result<Pack> back = read_pack_file(path);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_TRUE(testing::expect_same_pack(pack, *back));
    std::remove(path.c_str());
}

TEST(Reader, FileErrorsNameThePath) {
    Result<Pack> missing = read_pack_file("/nonexistent/x.nmc");
    EXPECT_EQ(missing.status().code(), StatusCode::io_error);
    EXPECT_NE(missing.status().message().find("/nonexistent/x.nmc"), std::string::npos);
}

TEST(LatentLevelSize, FollowsSpec55) {
    EXPECT_EQ(latent_level_size(32, 2, 0), 16);
    EXPECT_EQ(latent_level_size(33, 2, 0), 17);  // ceil
    EXPECT_EQ(latent_level_size(16, 2, 4), 1);   // max(1, ...)
    EXPECT_EQ(latent_level_size(16384, 16, 15), 1);
    EXPECT_EQ(latent_level_size(1000, 3, 2), 84);
}

}  // namespace
}  // namespace nmc
