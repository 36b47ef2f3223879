// BC6H: hand-built blocks of the one-region modes and a two-region mode decode to the values the specification's
// formulas give, the reserved modes are refused, and the encoder keeps flat colours exactly, splits a block of two
// regions, and keeps an HDR image (values from 1/1000 to 10000) close in the log domain.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/number_formats.h"
#include "texture/block_codecs.h"

namespace nmc::texture {
namespace {

void set_bits(uint8_t* block, int first, int count, uint32_t value) {
    for (int i = 0; i < count; ++i)
        if ((value >> i) & 1) block[(first + i) >> 3] = uint8_t(block[(first + i) >> 3] | (1 << ((first + i) & 7)));
}

// The decoded texel t of `block` as UF16.
struct Rgb {
    uint16_t r, g, b;
};
std::vector<Rgb> decode_uf16(const uint8_t block[16]) {
    uint16_t halves[kBlockTexels * 3];
    EXPECT_TRUE(decode_bc6h_block(block, halves, Bc6hType::uf16));
    std::vector<Rgb> out;
    for (int t = 0; t < kBlockTexels; ++t) out.push_back({halves[3 * t], halves[3 * t + 1], halves[3 * t + 2]});
    return out;
}
void expect_texel(const std::vector<Rgb>& texels, int t, Rgb want) {
    EXPECT_EQ(texels[size_t(t)].r, want.r) << "texel " << t;
    EXPECT_EQ(texels[size_t(t)].g, want.g) << "texel " << t;
    EXPECT_EQ(texels[size_t(t)].b, want.b) << "texel " << t;
}

// Mode 3: two 10-bit endpoints stored whole; texel t takes index t. Endpoint 0 unquantizes to 0, 1023 to 0xFFFF
// (0x7BFF, 65504, after the 31/64 scale) and 512 to ((512 << 16) + 0x8000) >> 10 = 32800 (0x3E0F).
TEST(Bc6h, DecodesMode3) {
    uint8_t block[16] = {};
    set_bits(block, 0, 5, 3);
    set_bits(block, 5, 10, 0), set_bits(block, 15, 10, 512), set_bits(block, 25, 10, 1023);   // endpoint 0
    set_bits(block, 35, 10, 1023), set_bits(block, 45, 10, 512), set_bits(block, 55, 10, 0);  // endpoint 1
    for (int t = 1; t < kBlockTexels; ++t) set_bits(block, 68 + 4 * (t - 1), 4, uint32_t(t));
    const auto texels = decode_uf16(block);
    expect_texel(texels, 0, {0x0000, 0x3E0F, 0x7BFF});
    expect_texel(texels, 8, {0x41DF, 0x3E0F, 0x3A20});  // weight 34 of 64
    expect_texel(texels, 15, {0x7BFF, 0x3E0F, 0x0000});
}

// Mode 7: an 11-bit first endpoint (bit 10 stored apart) and 9-bit signed deltas: R 1024 - 1, G 100 + 255,
// B 2047 - 256.
TEST(Bc6h, DecodesMode7Deltas) {
    uint8_t block[16] = {};
    set_bits(block, 0, 5, 7);
    set_bits(block, 44, 1, 1);                                 // R0 = 1024: bit 10 only
    set_bits(block, 15, 10, 100);                              // G0
    set_bits(block, 25, 10, 1023), set_bits(block, 64, 1, 1);  // B0 = 2047
    set_bits(block, 35, 9, 0x1FF), set_bits(block, 45, 9, 255), set_bits(block, 55, 9, 0x100);
    set_bits(block, 65 + 3 + 4 * 14, 4, 15);  // texel 15: index 15
    const auto texels = decode_uf16(block);
    expect_texel(texels, 0, {0x3E07, 0x0615, 0x7BFF});
    expect_texel(texels, 15, {0x3DF8, 0x1586, 0x6C78});
}

// Mode 11: the first endpoint's bits 10 and 11 are stored reversed (R0 bits 10..11: block bit 43 is R0's bit 11).
TEST(Bc6h, DecodesMode11ReversedBits) {
    uint8_t block[16] = {};
    set_bits(block, 0, 5, 11);
    set_bits(block, 43, 1, 1);  // R0 = 0x800 of 12 bits
    auto texels = decode_uf16(block);
    expect_texel(texels, 0, {0x3E03, 0, 0});
    set_bits(block, 44, 1, 1);  // and bit 10: 0xC00
    texels = decode_uf16(block);
    expect_texel(texels, 0, {0x5D03, 0, 0});
}

// Mode 15: 16-bit endpoints (used as they are) and 4-bit deltas; R0 bits 10..15 reversed, bit 15 first.
TEST(Bc6h, DecodesMode15) {
    uint8_t block[16] = {};
    set_bits(block, 0, 5, 15);
    set_bits(block, 39, 1, 1);  // R0 = 0x8000
    set_bits(block, 35, 4, 7);  // R1 = R0 + 7
    set_bits(block, 65 + 3 + 4 * 7, 4, 8), set_bits(block, 65 + 3 + 4 * 14, 4, 15);
    const auto texels = decode_uf16(block);
    expect_texel(texels, 0, {0x3E00, 0, 0});
    expect_texel(texels, 8, {0x3E01, 0, 0});
    expect_texel(texels, 15, {0x3E03, 0, 0});
}

// Mode 0, partition 0 (texels 2, 3, 6, 7, ... in region 1, anchor texel 15): 10-bit endpoints, 5-bit deltas. Region 0
// is 512 throughout; region 1's red runs from 512 + 15 to 512 - 16 (a negative delta, sign-extended).
TEST(Bc6h, DecodesTwoRegionMode0) {
    uint8_t block[16] = {};
    set_bits(block, 5, 10, 512), set_bits(block, 15, 10, 512), set_bits(block, 25, 10, 512);
    set_bits(block, 65, 5, 15);         // R2: +15
    set_bits(block, 71, 5, 0x10);       // R3: -16
    set_bits(block, 84 + 3 * 2, 3, 7);  // texel 3: index 7 (3 bits)
    set_bits(block, 126, 2, 3);         // texel 15, the anchor: index 3 (2 bits)
    const auto texels = decode_uf16(block);
    expect_texel(texels, 0, {0x3E0F, 0x3E0F, 0x3E0F});
    expect_texel(texels, 2, {0x3FE0, 0x3E0F, 0x3E0F});
    expect_texel(texels, 3, {0x3C1F, 0x3E0F, 0x3E0F});
    expect_texel(texels, 15, {0x3E4B, 0x3E0F, 0x3E0F});  // weight 27 of 64
}

TEST(Bc6h, ReservedModesRefused) {
    for (uint32_t mode : {19u, 23u, 27u, 31u}) {
        uint8_t block[16] = {};
        set_bits(block, 0, 5, mode);
        set_bits(block, 5, 10, 1023);
        uint16_t halves[kBlockTexels * 3];
        std::fill(halves, halves + kBlockTexels * 3, uint16_t(1));
        EXPECT_FALSE(decode_bc6h_block(block, halves, Bc6hType::uf16)) << mode;
        EXPECT_TRUE(std::all_of(halves, halves + kBlockTexels * 3, [](uint16_t h) { return h == 0; })) << mode;
    }
}

// Signed blocks: a mode 3 endpoint of -1 (10 bits, sign-extended) against +1.
TEST(Bc6h, DecodesSignedMode3) {
    uint8_t block[16] = {};
    set_bits(block, 0, 5, 3);
    set_bits(block, 5, 10, 0x3FF);  // R0 = -1
    set_bits(block, 35, 10, 1);     // R1 = +1
    set_bits(block, 65 + 3 + 4 * 14, 4, 15);
    uint16_t halves[kBlockTexels * 3];
    ASSERT_TRUE(decode_bc6h_block(block, halves, Bc6hType::sf16));
    // |1| of 10 bits: ((1 << 15) + 0x4000) >> 9 = 96; scaled by 31/32: 93, with the sign bit for -1.
    EXPECT_EQ(halves[0], 0x8000 | 93);
    EXPECT_EQ(halves[15 * 3], 93);
}

std::vector<float> decode_to_floats(const uint8_t block[16]) {
    uint16_t halves[kBlockTexels * 3];
    EXPECT_TRUE(decode_bc6h_block(block, halves, Bc6hType::uf16));
    std::vector<float> out;
    for (uint16_t h : halves) out.push_back(fp16_to_float(h));
    return out;
}

TEST(Bc6h, EncoderKeepsFlatColours) {
    for (const auto& colour : std::vector<std::array<float, 3>>{
             {1.0f, 0.5f, 2.0f}, {1000.0f, 0.001f, 20.0f}, {0, 0, 0}, {65504.0f, 3.0f, 0.25f}}) {
        float rgb[kBlockTexels * 3];
        for (int t = 0; t < kBlockTexels; ++t) std::copy(colour.begin(), colour.end(), rgb + 3 * t);
        uint8_t block[16];
        encode_bc6h_block(rgb, block);
        const auto decoded = decode_to_floats(block);
        for (int i = 0; i < kBlockTexels * 3; ++i)
            EXPECT_EQ(float_to_fp16(decoded[size_t(i)]), float_to_fp16(rgb[i])) << colour[0] << " texel " << i / 3;
    }
}

TEST(Bc6h, EncoderClampsWhatUf16CannotHold) {
    float rgb[kBlockTexels * 3];
    for (int i = 0; i < kBlockTexels * 3; ++i) rgb[i] = i % 3 == 0 ? -5.0f : i % 3 == 1 ? std::nanf("") : 1e9f;
    uint8_t block[16];
    encode_bc6h_block(rgb, block);
    const auto decoded = decode_to_floats(block);
    for (int t = 0; t < kBlockTexels; ++t) {
        EXPECT_EQ(decoded[size_t(3 * t)], 0.0f);
        EXPECT_EQ(decoded[size_t(3 * t + 1)], 0.0f);
        EXPECT_EQ(decoded[size_t(3 * t + 2)], 65504.0f);
    }
}

// Four colours, two in the top half and two in the bottom half (as partition 13 splits a block), lie on no one
// line but on two: a two-region mode keeps each within 2 %, where one region would blend them. (The colours are
// close: two-region modes store the other endpoints as deltas from the first, so far-apart regions lose precision.)
TEST(Bc6h, EncoderSplitsRegions) {
    const float colours[4][3] = {{1.0f, 0.9f, 0.9f}, {1.1f, 0.99f, 0.99f}, {0.9f, 1.0f, 0.9f}, {0.99f, 1.1f, 0.99f}};
    float rgb[kBlockTexels * 3];
    for (int t = 0; t < kBlockTexels; ++t)
        std::copy(colours[(t < 8 ? 0 : 2) + t % 2], colours[(t < 8 ? 0 : 2) + t % 2] + 3, rgb + 3 * t);
    uint8_t block[16];
    encode_bc6h_block(rgb, block);
    const int mode_low_bits = block[0] & 3;
    EXPECT_NE(mode_low_bits, 3) << "a two-region mode: low mode bits 00, 01 or 10";
    const auto decoded = decode_to_floats(block);
    for (int i = 0; i < kBlockTexels * 3; ++i)
        EXPECT_NEAR(decoded[size_t(i)], rgb[i], rgb[i] * 0.02f) << "texel " << i / 3 << " channel " << i % 3;
}

// A synthetic HDR image: a sky-like gradient over four decades, a bright disc, and textured noise, 256 x 256.
// Quality in the log domain (log2 of each channel, floored at 2^-10): PSNR against the 26-stop span
// log2(65504) + 10, and the largest texel error in stops.
TEST(Bc6h, EncoderOnHdrImage) {
    constexpr int kSize = 256;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> noise(0.8f, 1.25f);
    std::vector<float> image(size_t(kSize) * kSize * 3);
    for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x) {
            const float sky = std::pow(10.0f, -3.0f + 4.0f * float(y) / kSize);
            const float dx = float(x - 180), dy = float(y - 200);
            const float sun = dx * dx + dy * dy < 100 ? 10000.0f : 0.0f;
            const float grain = noise(rng);
            float* p = &image[(size_t(y) * kSize + size_t(x)) * 3];
            p[0] = sun + sky * 0.6f * grain, p[1] = sun + sky * 0.8f * grain, p[2] = sun + sky * grain;
        }
    const auto log_of = [](float v) { return std::log2(std::max(v, 1.0f / 1024)); };
    double squared = 0, worst = 0;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::array<uint8_t, 16>> blocks;
    for (int by = 0; by < kSize / 4; ++by)
        for (int bx = 0; bx < kSize / 4; ++bx) {
            float tile[kBlockTexels * 3];
            for (int t = 0; t < kBlockTexels; ++t)
                for (int c = 0; c < 3; ++c)
                    tile[3 * t + c] =
                        image[((size_t(by) * 4 + size_t(t / 4)) * kSize + size_t(bx) * 4 + size_t(t % 4)) * 3 +
                              size_t(c)];
            blocks.emplace_back();
            encode_bc6h_block(tile, blocks.back().data());
        }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    size_t b = 0;
    for (int by = 0; by < kSize / 4; ++by)
        for (int bx = 0; bx < kSize / 4; ++bx, ++b) {
            const auto decoded = decode_to_floats(blocks[b].data());
            for (int t = 0; t < kBlockTexels; ++t)
                for (int c = 0; c < 3; ++c) {
                    const float source =
                        image[((size_t(by) * 4 + size_t(t / 4)) * kSize + size_t(bx) * 4 + size_t(t % 4)) * 3 +
                              size_t(c)];
                    const double d = log_of(decoded[size_t(3 * t + c)]) - log_of(source);
                    squared += d * d, worst = std::max(worst, std::abs(d));
                }
        }
    const double mse = squared / (double(kSize) * kSize * 3);
    const double span = std::log2(65504.0) + 10.0;
    const double psnr = 10.0 * std::log10(span * span / mse);
    std::printf(
        "BC6H on a %dx%d HDR image: log-domain PSNR %.2f dB, largest error %.3f stops, %.2f Mtexel/s (one thread)\n",
        kSize, kSize, psnr, worst, double(kSize) * kSize / seconds / 1e6);
    EXPECT_GT(psnr, 50.0);
    EXPECT_LT(worst, 0.5);
}

}  // namespace
}  // namespace nmc::texture
