// DDS and KTX2 files: what is written reads back identical (headers and every level's blocks; KTX2 with and
// without zstd supercompression), the fixed header fields are where the specifications put them, and truncated,
// extended or damaged files are refused with a specific status; DDS refuses ASTC. Files are written atomically. Pillow, an independent decoder, reads our BC7 DDS files as we do.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/file_io.h"
#include "material/image_io.h"
#include "texture/block_codecs.h"
#include "texture/texture_file.h"

namespace nmc::texture {
namespace {

// A 13x7 texture with its full chain (13x7, 6x3, 3x1, 1x1) of seeded random block bytes: the containers do not
// look inside blocks.
BlockTexture make_texture(BlockFormat f, bool srgb) {
    BlockTexture t;
    t.format = f, t.srgb = srgb, t.width = 13, t.height = 7;
    std::mt19937 rng(uint32_t(f) * 2 + srgb);
    for (int m = 0; m < 4; ++m) {
        t.levels.emplace_back(level_bytes(f, mip_extent(13, m), mip_extent(7, m)));
        for (uint8_t& b : t.levels.back()) b = uint8_t(rng());
    }
    return t;
}

struct Case {
    BlockFormat format;
    bool srgb;
};
const Case kCases[] = {
    {BlockFormat::bc1, false},     {BlockFormat::bc1, true},        {BlockFormat::bc4, false},
    {BlockFormat::bc5, false},     {BlockFormat::bc6h, false},      {BlockFormat::bc7, false},
    {BlockFormat::bc7, true},      {BlockFormat::astc_4x4, true},   {BlockFormat::astc_6x5, false},
    {BlockFormat::astc_8x8, true}, {BlockFormat::astc_10x6, false}, {BlockFormat::astc_12x12, false}};

TEST(TextureFile, RoundTripsEveryFormatInBothContainers) {
    const struct {
        ContainerFormat container;
        Supercompression supercompression;
    } files[] = {{ContainerFormat::dds, Supercompression::none},
                 {ContainerFormat::ktx2, Supercompression::none},
                 {ContainerFormat::ktx2, Supercompression::zstd}};
    for (const auto& [c, s] : files)
        for (const Case& k : kCases) {
            const BlockTexture t = make_texture(k.format, k.srgb);
            auto bytes = encode_texture_file(c, t, s);
            if (c == ContainerFormat::dds && is_astc(k.format)) {
                EXPECT_EQ(bytes.status().code(), StatusCode::invalid_argument);
                EXPECT_NE(bytes.status().message().find("DDS has no ASTC"), std::string::npos);
                continue;
            }
            ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
            EXPECT_EQ(load_u32_le(bytes->data() + 44), s == Supercompression::zstd ? 2u : 0u) << to_string(c);
            auto back = decode_texture_file(c, *bytes);
            ASSERT_TRUE(back.ok()) << to_string(c) << " " << to_string(k.format) << ": " << back.status().to_string();
            EXPECT_EQ(back->format, t.format);
            EXPECT_EQ(back->srgb, t.srgb);
            EXPECT_EQ(back->width, 13);
            EXPECT_EQ(back->height, 7);
            EXPECT_EQ(back->levels, t.levels) << to_string(c) << " " << to_string(k.format);
        }
}

// The fields engines read first, at the offsets of the specifications.
TEST(TextureFile, HeaderFieldsAtTheirOffsets) {
    const BlockTexture t = make_texture(BlockFormat::bc7, true);
    auto dds = encode_texture_file(ContainerFormat::dds, t);
    ASSERT_TRUE(dds.ok());
    EXPECT_EQ(load_u32_le(dds->data()), 0x20534444u);        // "DDS "
    EXPECT_EQ(load_u32_le(dds->data() + 12), 7u);            // height
    EXPECT_EQ(load_u32_le(dds->data() + 16), 13u);           // width
    EXPECT_EQ(load_u32_le(dds->data() + 28), 4u);            // mipMapCount
    EXPECT_EQ(load_u32_le(dds->data() + 84), 0x30315844u);   // pixel format FourCC "DX10"
    EXPECT_EQ(load_u32_le(dds->data() + 128), 99u);          // DXGI_FORMAT_BC7_UNORM_SRGB
    EXPECT_EQ(dds->size(), 148u + 4 * 2 * 16 + 2 * 16 + 1 * 16 + 16);

    auto ktx = encode_texture_file(ContainerFormat::ktx2, t);
    ASSERT_TRUE(ktx.ok());
    EXPECT_EQ((*ktx)[1], 'K');
    EXPECT_EQ(load_u32_le(ktx->data() + 12), 146u);  // VK_FORMAT_BC7_SRGB_BLOCK
    EXPECT_EQ(load_u32_le(ktx->data() + 20), 13u);   // pixelWidth
    EXPECT_EQ(load_u32_le(ktx->data() + 24), 7u);    // pixelHeight
    EXPECT_EQ(load_u32_le(ktx->data() + 40), 4u);    // levelCount
    EXPECT_EQ(load_u32_le(ktx->data() + 44), 0u);    // supercompressionScheme
    const uint32_t dfd = load_u32_le(ktx->data() + 48);
    EXPECT_EQ((*ktx)[dfd + 12], 134);  // colorModel KHR_DF_MODEL_BC7
    EXPECT_EQ((*ktx)[dfd + 14], 2);    // transferFunction sRGB
    // Level 0 (the largest) comes last in the file, aligned to its 16-byte blocks.
    const uint64_t level0 = load_u64_le(ktx->data() + 80);
    EXPECT_EQ(level0 % 16, 0u);
    EXPECT_EQ(level0 + t.levels[0].size(), ktx->size());

    // BC6H (UF16): its DXGI and Vulkan formats, the BC6H colour model and a float sample of range 0.0 to 1.0.
    const BlockTexture hdr = make_texture(BlockFormat::bc6h, false);
    EXPECT_EQ(load_u32_le(encode_texture_file(ContainerFormat::dds, hdr)->data() + 128), 95u);  // DXGI_FORMAT_BC6H_UF16
    auto hdr_ktx = encode_texture_file(ContainerFormat::ktx2, hdr);
    ASSERT_TRUE(hdr_ktx.ok());
    EXPECT_EQ(load_u32_le(hdr_ktx->data() + 12), 143u);  // VK_FORMAT_BC6H_UFLOAT_BLOCK
    const uint32_t hdr_dfd = load_u32_le(hdr_ktx->data() + 48);
    EXPECT_EQ((*hdr_ktx)[hdr_dfd + 12], 133);                             // KHR_DF_MODEL_BC6H
    EXPECT_EQ((*hdr_ktx)[hdr_dfd + 31], 0x80);                            // channelType: COLOR, FLOAT, unsigned
    EXPECT_EQ(load_u32_le(hdr_ktx->data() + hdr_dfd + 36), 0u);           // sampleLower 0.0f
    EXPECT_EQ(load_u32_le(hdr_ktx->data() + hdr_dfd + 40), 0x3F800000u);  // sampleUpper 1.0f

    // ASTC 10x6 sRGB: its Vulkan format, the ASTC colour model and the block's footprint in the descriptor.
    auto astc = encode_texture_file(ContainerFormat::ktx2, make_texture(BlockFormat::astc_10x6, true));
    ASSERT_TRUE(astc.ok());
    EXPECT_EQ(load_u32_le(astc->data() + 12), 176u);  // VK_FORMAT_ASTC_10x6_SRGB_BLOCK
    const uint32_t astc_dfd = load_u32_le(astc->data() + 48);
    EXPECT_EQ((*astc)[astc_dfd + 12], 162);  // KHR_DF_MODEL_ASTC
    EXPECT_EQ((*astc)[astc_dfd + 14], 2);    // sRGB
    EXPECT_EQ((*astc)[astc_dfd + 16], 9);    // texelBlockDimension0: 10 - 1
    EXPECT_EQ((*astc)[astc_dfd + 17], 5);    // texelBlockDimension1: 6 - 1
    EXPECT_EQ((*astc)[astc_dfd + 20], 16);   // bytesPlane0
    EXPECT_EQ(load_u32_le(encode_texture_file(ContainerFormat::ktx2, make_texture(BlockFormat::astc_4x4, false))
                              ->data() + 12),
              157u);  // VK_FORMAT_ASTC_4x4_UNORM_BLOCK
    EXPECT_EQ(load_u32_le(encode_texture_file(ContainerFormat::ktx2, make_texture(BlockFormat::astc_12x12, true))
                              ->data() + 12),
              184u);  // VK_FORMAT_ASTC_12x12_SRGB_BLOCK

    // zstd: each level one frame; byteLength the frame's, uncompressedByteLength the level's.
    auto zstd = encode_texture_file(ContainerFormat::ktx2, t, Supercompression::zstd);
    ASSERT_TRUE(zstd.ok());
    EXPECT_EQ(load_u32_le(zstd->data() + 44), 2u);  // supercompressionScheme: Zstandard
    const uint64_t offset0 = load_u64_le(zstd->data() + 80), length0 = load_u64_le(zstd->data() + 88);
    EXPECT_EQ(load_u64_le(zstd->data() + 96), t.levels[0].size());
    EXPECT_EQ(load_u32_le(zstd->data() + offset0), 0xFD2FB528u);  // the zstd frame magic
    EXPECT_EQ(offset0 + length0, zstd->size());
}

TEST(TextureFile, CompressibleLevelsShrinkWithZstd) {
    BlockTexture t = make_texture(BlockFormat::astc_4x4, false);
    for (std::vector<uint8_t>& level : t.levels)
        for (size_t i = 0; i < level.size(); ++i) level[i] = uint8_t(i % 16);  // one block repeated
    const size_t plain = encode_texture_file(ContainerFormat::ktx2, t)->size();
    const size_t zstd = encode_texture_file(ContainerFormat::ktx2, t, Supercompression::zstd)->size();
    EXPECT_LT(zstd, plain);
    // The reader's bound on what a frame can hold (128 KiB per 4 bytes of zstd) admits zstd's best case: a 2048^2
    // level of zero blocks (4 MiB) in a few hundred bytes of RLE blocks.
    BlockTexture zeros;
    zeros.format = BlockFormat::astc_4x4, zeros.width = 2048, zeros.height = 2048;
    zeros.levels.emplace_back(level_bytes(BlockFormat::astc_4x4, 2048, 2048), uint8_t(0));
    auto bytes = encode_texture_file(ContainerFormat::ktx2, zeros, Supercompression::zstd);
    ASSERT_TRUE(bytes.ok());
    EXPECT_LT(bytes->size(), 2048u);
    auto back = decode_texture_file(ContainerFormat::ktx2, *bytes);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->levels, zeros.levels);
}

TEST(TextureFile, RefusesInconsistentTextures) {
    BlockTexture t = make_texture(BlockFormat::bc4, false);
    t.srgb = true;  // BC4 has no sRGB format
    EXPECT_EQ(encode_texture_file(ContainerFormat::dds, t).status().code(), StatusCode::invalid_argument);
    t = make_texture(BlockFormat::bc5, false);
    t.levels[2].pop_back();
    EXPECT_EQ(encode_texture_file(ContainerFormat::ktx2, t).status().code(), StatusCode::invalid_argument);
    t = make_texture(BlockFormat::bc1, false);
    t.levels.push_back(t.levels.back());  // a fifth level past 1x1
    EXPECT_EQ(encode_texture_file(ContainerFormat::dds, t).status().code(), StatusCode::invalid_argument);
}

// Every truncation and one extra byte are refused (corrupt, or not_recognized when the magic itself is cut), and
// so is a change of any header field the reader checks.
TEST(TextureFile, RefusesTruncatedExtendedAndDamagedFiles) {
    const struct {
        ContainerFormat container;
        Supercompression supercompression;
        BlockFormat format;
    } files[] = {{ContainerFormat::dds, Supercompression::none, BlockFormat::bc5},
                 {ContainerFormat::ktx2, Supercompression::none, BlockFormat::bc5},
                 {ContainerFormat::ktx2, Supercompression::zstd, BlockFormat::astc_5x4}};
    for (const auto& [c, s, f] : files) {
        const std::vector<uint8_t> good = *encode_texture_file(c, make_texture(f, false), s);
        for (size_t n = 0; n < good.size(); ++n) {
            const std::vector<uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
            const auto r = decode_texture_file(c, cut);
            ASSERT_FALSE(r.ok()) << to_string(c) << " cut to " << n;
            ASSERT_TRUE(r.status().code() == StatusCode::corrupt || r.status().code() == StatusCode::not_recognized);
        }
        std::vector<uint8_t> longer = good;
        longer.push_back(0);
        EXPECT_EQ(decode_texture_file(c, longer).status().code(), StatusCode::corrupt) << to_string(c);
        // Each byte of the header and (KTX2) level index and descriptor, changed.
        const size_t checked = c == ContainerFormat::dds ? 148 : size_t(load_u32_le(good.data() + 48)) + 44;
        int accepted = 0;
        for (size_t i = 0; i < checked; ++i) {
            std::vector<uint8_t> bad = good;
            bad[i] ^= 0x10;
            if (decode_texture_file(c, bad).ok()) ++accepted;
        }
        EXPECT_EQ(accepted, 0) << to_string(c);
        if (s == Supercompression::zstd) {
            // Any byte of a level's zstd frame changed: refused (the frame's checksum, sizes or structure). The
            // frame of mip 0 is last in the file.
            int damaged_accepted = 0;
            for (size_t i = size_t(load_u64_le(good.data() + 80)); i < good.size(); ++i) {
                std::vector<uint8_t> bad = good;
                bad[i] ^= 0x01;
                if (decode_texture_file(c, bad).ok()) ++damaged_accepted;
            }
            EXPECT_EQ(damaged_accepted, 0);
        }
    }
}

// texture_file_fuzzer found it: a level count of 2^31 or more turned negative as an int, passed the check against
// the full chain, and the DDS reader went on with no level. Such counts are corrupt in both containers.
TEST(TextureFile, RefusesLevelCountsAboveTwoToThe31) {
    for (ContainerFormat c : {ContainerFormat::dds, ContainerFormat::ktx2}) {
        std::vector<uint8_t> bytes = *encode_texture_file(c, make_texture(BlockFormat::bc7, false));
        const size_t level_count = c == ContainerFormat::dds ? 28 : 40;  // mipMapCount, levelCount
        store_u32_le(bytes.data() + level_count, 0x94000000u);
        const auto r = decode_texture_file(c, bytes);
        EXPECT_EQ(r.status().code(), StatusCode::corrupt) << to_string(c);
        EXPECT_NE(r.status().message().find("at most"), std::string::npos) << r.status().message();
    }
}

TEST(TextureFile, WritesAtomicallyAndRefusesToReplace) {
    std::string dir = ::testing::TempDir() + "/nmc_texture_file_XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::string path = dir + "/t.ktx2";
    const BlockTexture t = make_texture(BlockFormat::bc7, false);
    ASSERT_TRUE(write_texture_file(path, ContainerFormat::ktx2, t, Supercompression::none, false).ok());
    auto bytes = read_file(path, 1 << 20);
    ASSERT_TRUE(bytes.ok());
    auto back = decode_texture_file(ContainerFormat::ktx2, *bytes);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->levels, t.levels);
    EXPECT_EQ(write_texture_file(path, ContainerFormat::ktx2, t, Supercompression::none, false).code(), StatusCode::io_error);
    BlockTexture bad = t;
    bad.levels[0].clear();
    const Status refused = write_texture_file(dir + "/bad.dds", ContainerFormat::dds, bad, Supercompression::none, true);
    EXPECT_EQ(refused.code(), StatusCode::invalid_argument);
    EXPECT_NE(refused.message().find("bad.dds"), std::string::npos) << refused.message();
    EXPECT_NE(::access((dir + "/bad.dds").c_str(), F_OK), 0) << "nothing written for a refused texture";
    std::remove(path.c_str());
    ::rmdir(dir.c_str());
}

// An independent decoder: Pillow (Debian's python3-pil) reads the BC7 DDS file nmc writes to the texels nmc's own
// decoder gives, sample for sample. Skipped where Debian's python3 or Pillow's BC7 support is missing.
// An independent BC6H decoder: OpenImageIO's oiiotool reads our BC6H_UF16 DDS file (37 x 21: partial edge blocks)
// to the same half floats our decoder gives, value for value. The texels span 2^-10 to 2^10 at random, so the
// encoder spreads its blocks over one- and two-region modes.
TEST(TextureFile, OpenImageIoDecodesOurBc6hDdsAsWeDo) {
    if (::access("/usr/bin/oiiotool", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/oiiotool";
    if (!image_format_supported("exr")) GTEST_SKIP() << "this build reads no EXR";
    Image image(37, 21, 3, SampleType::float32);
    std::mt19937 rng(3);
    for (float& v : image.pixels) v = std::exp2(float(int(rng() % 200) - 100) / 10.0f);
    BlockTexture t;
    t.format = BlockFormat::bc6h, t.width = image.width, t.height = image.height;
    t.levels.push_back(encode_bc6h_blocks(image, 1));
    int two_region_blocks = 0;
    for (size_t b = 0; b < t.levels[0].size(); b += 16) two_region_blocks += (t.levels[0][b] & 3) != 3;
    EXPECT_GT(two_region_blocks, 0);
    EXPECT_LT(two_region_blocks, int(t.levels[0].size() / 16));
    auto ours = decode_bc6h_blocks(t.width, t.height, t.levels[0]);
    ASSERT_TRUE(ours.ok());

    std::string dir = ::testing::TempDir() + "/nmc_oiio_XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::string dds = dir + "/t.dds", exr = dir + "/t.exr";
    ASSERT_TRUE(write_texture_file(dds, ContainerFormat::dds, t, Supercompression::none, false).ok());
    const int status = std::system(("/usr/bin/oiiotool '" + dds + "' -d float -o '" + exr + "' 2>&1").c_str());
    auto theirs = read_image(exr);
    std::remove(dds.c_str());
    std::remove(exr.c_str());
    ::rmdir(dir.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "oiiotool failed";
    ASSERT_TRUE(theirs.ok()) << theirs.status().to_string();
    ASSERT_EQ(theirs->channels, 3);
    ASSERT_EQ(theirs->pixels.size(), ours->pixels.size());
    size_t differing = 0;
    for (size_t i = 0; i < ours->pixels.size(); ++i) differing += ours->pixels[i] != theirs->pixels[i];
    EXPECT_EQ(differing, 0u) << "of " << ours->pixels.size() << " values";
}

TEST(TextureFile, PillowDecodesOurBc7DdsAsWeDo) {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
    Image image(37, 21, 4);  // partial edge blocks
    std::mt19937 rng(9);
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x)
            for (int c = 0; c < 4; ++c)
                image.at(x, y, c) = float((x * (c + 1) * 7 + y * 5 + int(rng() % 24)) % 256) / 255.0f;
    const Rgba8Image texels = to_rgba8(image);
    BlockTexture t;
    t.format = BlockFormat::bc7, t.srgb = true, t.width = image.width, t.height = image.height;
    // Block i in mode i % 8, so Pillow's decoder checks ours on every mode.
    const int blocks_x = (image.width + 3) / 4, blocks_y = (image.height + 3) / 4;
    t.levels.emplace_back(level_bytes(BlockFormat::bc7, image.width, image.height));
    for (int by = 0; by < blocks_y; ++by)
        for (int bx = 0; bx < blocks_x; ++bx) {
            uint8_t tile[kBlockTexels * 4];
            for (int i = 0; i < kBlockTexels; ++i) {
                const int x = std::min(bx * 4 + i % 4, image.width - 1), y = std::min(by * 4 + i / 4, image.height - 1);
                std::copy_n(&texels.texels[size_t(y * image.width + x) * 4], 4, tile + 4 * i);
            }
            const int b = by * blocks_x + bx;
            encode_bc7_block_in_mode(tile, &t.levels[0][size_t(b) * 16], b % 8);
        }
    auto decoded = decode_blocks(BlockFormat::bc7, t.width, t.height, t.levels[0]);
    ASSERT_TRUE(decoded.ok());

    std::string dir = ::testing::TempDir() + "/nmc_pillow_XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::string dds = dir + "/t.dds", raw = dir + "/t.raw";
    ASSERT_TRUE(write_texture_file(dds, ContainerFormat::dds, t, Supercompression::none, false).ok());
    ASSERT_TRUE(write_file_atomically(raw, decoded->texels.data(), decoded->texels.size()).ok());
    const std::string command = "/usr/bin/python3 '" + std::string(NMC_SOURCE_DIR) +
                                "/tests/texture/pillow_reads_dds.py' '" + dds + "' '" + raw + "' 2>&1";
    const int status = std::system(command.c_str());
    std::remove(dds.c_str());
    std::remove(raw.c_str());
    ::rmdir(dir.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "Pillow missing or without BC7 support";
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace nmc::texture
