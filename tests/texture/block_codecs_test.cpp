// The block codecs: hand-built blocks decode to the values the format defines, encoders reproduce what the
// format can hold exactly, stay within error bounds on gradients and noise, BC4 comes close to an exhaustive
// search, and a real material compresses within reach of the strong encoders' figures in ../shared/baselines.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "material/image_io.h"
#include "quality/quality_measurement.h"
#include "texture/block_codecs.h"
#include "texture/block_image.h"

namespace nmc::texture {
namespace {

void set_bits(uint8_t* block, int first, int count, uint32_t value) {
    for (int i = 0; i < count; ++i)
        if ((value >> i) & 1) block[(first + i) >> 3] = uint8_t(block[(first + i) >> 3] | (1 << ((first + i) & 7)));
}

// Squared error of BC4-encoding `values`.
int bc4_error(const uint8_t values[kBlockTexels]) {
    uint8_t block[8], decoded[kBlockTexels];
    encode_bc4_block(values, block);
    decode_bc4_block(block, decoded);
    int e = 0;
    for (int t = 0; t < kBlockTexels; ++t) e += (decoded[t] - values[t]) * (decoded[t] - values[t]);
    return e;
}

TEST(Bc4, DecodesHandBuiltBlocksOfBothModes) {
    // Eight-value mode (e0 > e1): texel t has index t % 8.
    uint8_t block[8] = {255, 0};
    for (int t = 0; t < kBlockTexels; ++t) set_bits(block + 2, 3 * t, 3, uint32_t(t % 8));
    uint8_t values[kBlockTexels];
    decode_bc4_block(block, values);
    const uint8_t eight[8] = {255, 0, 219, 182, 146, 109, 73, 36};  // (7 - i) / 7 of 255 for i = 1..6, rounded
    for (int t = 0; t < kBlockTexels; ++t) EXPECT_EQ(values[t], eight[t % 8]) << t;
    // Six-value mode (e0 <= e1): 0 and 255 as indices 6 and 7.
    block[0] = 0, block[1] = 255;
    decode_bc4_block(block, values);
    const uint8_t six[8] = {0, 255, 51, 102, 153, 204, 0, 255};
    for (int t = 0; t < kBlockTexels; ++t) EXPECT_EQ(values[t], six[t % 8]) << t;
}

TEST(Bc4, EncodesRepresentableBlocksExactly) {
    uint8_t block[8] = {240, 16};
    for (int t = 0; t < kBlockTexels; ++t) set_bits(block + 2, 3 * t, 3, uint32_t((t * 5) % 8));
    uint8_t values[kBlockTexels];
    decode_bc4_block(block, values);
    EXPECT_EQ(bc4_error(values), 0);
    const uint8_t flat[kBlockTexels] = {77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77};
    EXPECT_EQ(bc4_error(flat), 0);
    // Two levels and the extremes: the six-value mode holds all four exactly.
    const uint8_t extremes[kBlockTexels] = {0, 255, 100, 120, 0, 255, 100, 120, 0, 255, 100, 120, 0, 255, 100, 120};
    EXPECT_EQ(bc4_error(extremes), 0);
}

TEST(Bc4, GradientWithinHalfAStep) {
    uint8_t ramp[kBlockTexels];
    for (int t = 0; t < kBlockTexels; ++t) ramp[t] = uint8_t(50 + 10 * t);  // 50..200: 8 levels 150/7 apart
    uint8_t block[8], decoded[kBlockTexels];
    encode_bc4_block(ramp, block);
    decode_bc4_block(block, decoded);
    for (int t = 0; t < kBlockTexels; ++t) EXPECT_LE(std::abs(decoded[t] - ramp[t]), 11) << t;
}

// Against the exhaustive optimum over all 65,536 endpoint pairs on random blocks: the encoder's search must land
// within 3% of the least squared error (measured: it finds the optimum on these blocks).
TEST(Bc4, NoiseCloseToExhaustiveSearch) {
    std::mt19937 rng(7);
    long long ours = 0, optimum = 0;
    for (int b = 0; b < 12; ++b) {
        uint8_t values[kBlockTexels];
        const int base = int(rng() % 128), spread = 32 + int(rng() % 128);
        for (uint8_t& v : values) v = uint8_t(base + int(rng() % uint32_t(spread)));
        ours += bc4_error(values);
        int best = 1 << 30;
        for (int e0 = 0; e0 < 256; ++e0)
            for (int e1 = 0; e1 < 256; ++e1) {
                uint8_t block[8] = {uint8_t(e0), uint8_t(e1)}, palette[kBlockTexels];
                for (int t = 0; t < 8; ++t) set_bits(block + 2, 3 * t, 3, uint32_t(t));
                decode_bc4_block(block, palette);  // texels 0..7 hold the eight palette entries
                int e = 0;
                for (int t = 0; t < kBlockTexels && e < best; ++t) {
                    int d = 1 << 30;
                    for (int i = 0; i < 8; ++i) d = std::min(d, (palette[i] - values[t]) * (palette[i] - values[t]));
                    e += d;
                }
                best = std::min(best, e);
            }
        optimum += best;
    }
    std::printf("BC4 on noise: squared error %lld, exhaustive optimum %lld\n", ours, optimum);
    EXPECT_LE(double(ours), 1.03 * double(optimum));
}

TEST(Bc1, DecodesHandBuiltBlocksOfBothModes) {
    // Four colours: red (0xF800) > blue (0x001F).
    uint8_t block[8] = {0x00, 0xF8, 0x1F, 0x00, 0b11100100, 0, 0, 0};  // texels 0..3: indices 0, 1, 2, 3
    uint8_t rgba[kBlockTexels * 4];
    decode_bc1_block(block, rgba);
    const uint8_t four[4][4] = {{255, 0, 0, 255}, {0, 0, 255, 255}, {170, 0, 85, 255}, {85, 0, 170, 255}};
    for (int t = 0; t < 4; ++t)
        for (int k = 0; k < 4; ++k) EXPECT_EQ(rgba[4 * t + k], four[t][k]) << t << "," << k;
    // Three colours: blue <= red; the midpoint, then transparent black.
    std::swap(block[0], block[2]), std::swap(block[1], block[3]);
    decode_bc1_block(block, rgba);
    const uint8_t three[4][4] = {{0, 0, 255, 255}, {255, 0, 0, 255}, {128, 0, 128, 255}, {0, 0, 0, 0}};
    for (int t = 0; t < 4; ++t)
        for (int k = 0; k < 4; ++k) EXPECT_EQ(rgba[4 * t + k], three[t][k]) << t << "," << k;
}

// Every flat colour is within 2 codes per channel (the single-colour tables reach 0-1 on 5-bit channels), and the
// encoder never writes the transparent black of the three-colour mode.
TEST(Bc1, FlatColoursCloseAndAlwaysOpaque) {
    std::mt19937 rng(3);
    for (int n = 0; n < 300; ++n) {
        uint8_t rgba[kBlockTexels * 4];
        const uint8_t c[3] = {uint8_t(rng()), uint8_t(rng()), uint8_t(rng())};
        for (int t = 0; t < kBlockTexels; ++t) rgba[4 * t] = c[0], rgba[4 * t + 1] = c[1], rgba[4 * t + 2] = c[2], rgba[4 * t + 3] = 255;
        uint8_t block[8], out[kBlockTexels * 4];
        encode_bc1_block(rgba, block);
        decode_bc1_block(block, out);
        for (int t = 0; t < kBlockTexels; ++t) {
            for (int k = 0; k < 3; ++k) ASSERT_LE(std::abs(out[4 * t + k] - c[k]), 2) << int(c[k]);
            ASSERT_EQ(out[4 * t + 3], 255);
        }
    }
}

// 4x4 blocks on colour ramps (up to 7 codes a texel, 105 over the block), then with noise of +-24 codes added:
// the psnr8 over 200 blocks. Four BC1 colours over a 16-step ramp leave about 35 dB, sixteen BC7 ones about 54;
// neither follows the noise. The bounds lie 1-2 dB under the measured figures.
double block_psnr(void (*encode)(const uint8_t*, uint8_t*), bool (*decode)(const uint8_t*, uint8_t*), int noise,
                  uint32_t seed) {
    std::mt19937 rng(seed);
    double sse = 0;
    int count = 0;
    for (int n = 0; n < 200; ++n) {
        uint8_t rgba[kBlockTexels * 4], block[16], out[kBlockTexels * 4];
        const int from[3] = {int(rng() % 128), int(rng() % 128), int(rng() % 128)};
        const int slope[3] = {int(rng() % 8), int(rng() % 8), int(rng() % 8)};
        for (int t = 0; t < kBlockTexels; ++t) {
            for (int k = 0; k < 3; ++k) {
                const int jitter = noise ? int(rng() % uint32_t(2 * noise + 1)) - noise : 0;
                rgba[4 * t + k] = uint8_t(std::clamp(from[k] + slope[k] * t + jitter, 0, 255));
            }
            rgba[4 * t + 3] = 255;
        }
        encode(rgba, block);
        EXPECT_TRUE(decode(block, out));
        for (int t = 0; t < kBlockTexels; ++t)
            for (int k = 0; k < 4; ++k, ++count) sse += double(out[4 * t + k] - rgba[4 * t + k]) * (out[4 * t + k] - rgba[4 * t + k]);
    }
    return psnr_from_mse(sse / count / (255.0 * 255.0));
}
bool decode_bc1(const uint8_t* block, uint8_t* rgba) { return decode_bc1_block(block, rgba), true; }

TEST(Bc1, GradientAndNoiseBounds) {
    const double ramp = block_psnr(encode_bc1_block, decode_bc1, 0, 1), noisy = block_psnr(encode_bc1_block, decode_bc1, 24, 2);
    std::printf("BC1 psnr8: ramps %.2f dB, ramps with noise %.2f dB\n", ramp, noisy);
    EXPECT_GE(ramp, 34.0);
    EXPECT_GE(noisy, 26.5);
}

TEST(Bc7, DecodesHandBuiltMode6Block) {
    uint8_t block[16] = {0x40};  // mode 6
    set_bits(block, 14, 7, 127);  // R1 = 127
    set_bits(block, 64, 1, 1);    // p-bit of endpoint 1: R1 decodes as 255
    for (int t = 1; t < kBlockTexels; ++t) set_bits(block, 65 + 3 + 4 * (t - 1), 4, uint32_t(t));  // texel 0: index 0
    uint8_t rgba[kBlockTexels * 4];
    ASSERT_TRUE(decode_bc7_block(block, rgba));
    const int weights[16] = {0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64};
    for (int t = 0; t < kBlockTexels; ++t) {
        EXPECT_EQ(rgba[4 * t], (255 * weights[t] + 32) >> 6) << t;
        // G, B and A endpoint 1 are 0 << 1 | p-bit 1 = 1.
        for (int k = 1; k < 4; ++k) EXPECT_EQ(rgba[4 * t + k], (weights[t] + 32) >> 6) << t;
    }
    const uint8_t reserved[16] = {};  // first byte 0: no mode
    EXPECT_FALSE(decode_bc7_block(reserved, rgba));
}

// Writes a block's fields in order, from bit 0 up.
struct FieldWriter {
    uint8_t block[16] = {};
    int pos = 0;
    FieldWriter& put(int count, uint32_t value) {
        set_bits(block, pos, count, value);
        pos += count;
        return *this;
    }
    FieldWriter& repeat(int times, int count, uint32_t value) {
        for (int i = 0; i < times; ++i) put(count, value);
        return *this;
    }
};

int lerp6(int e0, int e1, int w) {
    return ((64 - w) * e0 + w * e1 + 32) >> 6;
}
constexpr int kW2[4] = {0, 21, 43, 64}, kW3[8] = {0, 9, 18, 27, 37, 46, 55, 64};

// Blocks of modes 0-5 and 7 laid out field by field from the specification's Table.M, decoded against the values
// the specification gives them: endpoints expanded by p-bit and bit replication, the partitions, anchors with one
// index bit less, rotation and index selection. (Mode 6 has its own test above.)
TEST(Bc7, DecodesHandBuiltBlocksOfEveryMode) {
    uint8_t out[kBlockTexels * 4];
    const auto expect = [&](const FieldWriter& w, int mode, auto texel) {
        ASSERT_EQ(w.pos, 128) << "mode " << mode;
        ASSERT_TRUE(decode_bc7_block(w.block, out)) << mode;
        for (int t = 0; t < kBlockTexels; ++t) {
            const std::array<int, 4> want = texel(t);
            for (int c = 0; c < 4; ++c)
                EXPECT_EQ(out[4 * t + c], want[size_t(c)]) << "mode " << mode << " texel " << t << " channel " << c;
        }
    };
    {  // Mode 0, partition 8 (rows 0-1: subset 0, row 2: subset 1, row 3: subset 2): subset s holds channel s at
       // 15 with p-bits 1 (31 of 5 bits: 255), the others at 0 with p-bits 1 (1 of 5 bits: 8); indices 0.
        FieldWriter w;
        w.put(1, 1).put(4, 8);
        for (int c = 0; c < 3; ++c)
            for (int s = 0; s < 3; ++s) w.repeat(2, 4, s == c ? 15 : 0);
        w.repeat(6, 1, 1).repeat(45, 1, 0);
        expect(w, 0, [](int t) {
            const int s = t < 8 ? 0 : t < 12 ? 1 : 2;
            return std::array<int, 4>{s == 0 ? 255 : 8, s == 1 ? 255 : 8, s == 2 ? 255 : 8, 255};
        });
    }
    {  // Mode 1, partition 13 (rows 0-1: subset 0, rows 2-3: subset 1; anchor 15): subset 0 red from 0 to 63 under
       // shared p-bit 1 (2 to 255), G and B 0 (2); subset 1 flat at 32 under p-bit 0 (129). Texel t of subset 0
       // has index t, of subset 1 index 15 - t (the anchor, 15, gets 0).
        FieldWriter w;
        w.put(2, 2).put(6, 13).put(6, 0).put(6, 63).repeat(2, 6, 32);
        for (int c = 1; c < 3; ++c) w.repeat(2, 6, 0).repeat(2, 6, 32);
        w.put(1, 1).put(1, 0);
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 || t == 15 ? 2 : 3, uint32_t(t < 8 ? t : 15 - t));
        expect(w, 1, [](int t) {
            return t < 8 ? std::array<int, 4>{lerp6(2, 255, kW3[t]), 2, 2, 255}
                         : std::array<int, 4>{129, 129, 129, 255};
        });
    }
    {  // Mode 2, partition 8 (anchors 8 and 15): subset 0 red from 0 to 31 (255), index t % 4; subset 1 green and
       // subset 2 blue flat at 31, indices t % 2.
        FieldWriter w;
        w.put(3, 4).put(6, 8);
        for (int c = 0; c < 3; ++c)
            for (int s = 0; s < 3; ++s) w.put(5, s == c ? (s == 0 ? 0 : 31) : 0).put(5, s == c ? 31 : 0);
        for (int t = 0; t < kBlockTexels; ++t)
            w.put(t == 0 || t == 8 || t == 15 ? 1 : 2, uint32_t(t < 8 ? t % 4 : t % 2));
        expect(w, 2, [](int t) {
            if (t < 8) return std::array<int, 4>{lerp6(0, 255, kW2[t % 4]), 0, 0, 255};
            return t < 12 ? std::array<int, 4>{0, 255, 0, 255} : std::array<int, 4>{0, 0, 255, 255};
        });
    }
    {  // Mode 3, partition 13: subset 0 from (0, 0, 0) p-bit 0 to (127, 0, 0) p-bit 1, so R 0..255 and G, B 0..1;
       // subset 1 flat at 64 under p-bits 0 (128). Indices t % 4 in subset 0, 0 in subset 1.
        FieldWriter w;
        w.put(4, 8).put(6, 13).put(7, 0).put(7, 127).repeat(2, 7, 64);
        for (int c = 1; c < 3; ++c) w.repeat(2, 7, 0).repeat(2, 7, 64);
        w.put(1, 0).put(1, 1).put(1, 0).put(1, 0);
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 || t == 15 ? 1 : 2, uint32_t(t < 8 ? t % 4 : 0));
        expect(w, 3, [](int t) {
            if (t >= 8) return std::array<int, 4>{128, 128, 128, 255};
            const int w2 = kW2[t % 4];
            return std::array<int, 4>{lerp6(0, 255, w2), lerp6(0, 1, w2), lerp6(0, 1, w2), 255};
        });
    }
    {  // Mode 4, rotation 0, index selection 1: colour on the 3-bit secondary indices (t % 8), alpha on the 2-bit
       // primary ones (t / 4). R from 0 to 31 (255), G and B 0; alpha from 0 to 63 (255).
        FieldWriter w;
        w.put(5, 16).put(2, 0).put(1, 1).put(5, 0).put(5, 31).repeat(4, 5, 0).put(6, 0).put(6, 63);
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 ? 1 : 2, uint32_t(t / 4));
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 ? 2 : 3, uint32_t(t % 8));
        expect(w, 4, [](int t) {
            return std::array<int, 4>{lerp6(0, 255, kW3[t % 8]), 0, 0, lerp6(0, 255, kW2[t / 4])};
        });
    }
    {  // Mode 5, rotation 1 (alpha and red swapped after interpolation): R from 0 to 127 (255) on indices t % 4,
       // G flat at 64 (129), B 0, alpha from 10 to 200 on indices t / 4.
        FieldWriter w;
        w.put(6, 32).put(2, 1).put(7, 0).put(7, 127).repeat(2, 7, 64).repeat(2, 7, 0).put(8, 10).put(8, 200);
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 ? 1 : 2, uint32_t(t % 4));
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 ? 1 : 2, uint32_t(t / 4));
        expect(w, 5, [](int t) {
            return std::array<int, 4>{lerp6(10, 200, kW2[t / 4]), 129, 0, lerp6(0, 255, kW2[t % 4])};
        });
    }
    {  // Mode 7, partition 13: subset 0 from all 0 under p-bit 0 to (0, 0, 0, 31) under p-bit 1, so RGB 0..4 and
       // alpha 0..255; subset 1 flat at 16 under p-bits 0 (130). Indices t % 4 in subset 0, 0 in subset 1.
        FieldWriter w;
        w.put(8, 128).put(6, 13);
        for (int c = 0; c < 3; ++c) w.repeat(2, 5, 0).repeat(2, 5, 16);
        w.put(5, 0).put(5, 31).repeat(2, 5, 16).put(1, 0).put(1, 1).put(1, 0).put(1, 0);
        for (int t = 0; t < kBlockTexels; ++t) w.put(t == 0 || t == 15 ? 1 : 2, uint32_t(t < 8 ? t % 4 : 0));
        expect(w, 7, [](int t) {
            if (t >= 8) return std::array<int, 4>{130, 130, 130, 130};
            const int w2 = kW2[t % 4];
            return std::array<int, 4>{lerp6(0, 4, w2), lerp6(0, 4, w2), lerp6(0, 4, w2), lerp6(0, 255, w2)};
        });
    }
}

// Each mode's encoding of smooth blocks (ramps in every channel, with a little noise; alpha opaque for modes 0-3,
// which do not hold it) decodes in that mode and close to the input: each bound lies under the measured psnr8.
TEST(Bc7, EveryModeRoundTrips) {
    const double at_least[8] = {40, 44.5, 39.5, 40, 37, 32.5, 43, 37};
    for (int mode = 0; mode < 8; ++mode) {
        std::mt19937 rng(uint32_t(17 + mode));
        double sse = 0;
        int count = 0;
        for (int n = 0; n < 100; ++n) {
            uint8_t rgba[kBlockTexels * 4], block[16], out[kBlockTexels * 4];
            int from[4], slope[4];
            for (int c = 0; c < 4; ++c) from[c] = int(rng() % 160), slope[c] = int(rng() % 11) - 2;
            for (int t = 0; t < kBlockTexels; ++t)
                for (int c = 0; c < 4; ++c)
                    rgba[4 * t + c] = c == 3 && mode < 4
                                          ? 255
                                          : uint8_t(std::clamp(from[c] + slope[c] * t + int(rng() % 5) - 2, 0, 255));
            encode_bc7_block_in_mode(rgba, block, mode);
            ASSERT_EQ(block[0] & ((2 << mode) - 1), 1 << mode) << "asked for mode " << mode;
            ASSERT_TRUE(decode_bc7_block(block, out));
            for (int i = 0; i < kBlockTexels * 4; ++i, ++count) sse += double(out[i] - rgba[i]) * (out[i] - rgba[i]);
        }
        const double psnr = psnr_from_mse(sse / count / (255.0 * 255.0));
        std::printf("BC7 mode %d psnr8 on RGBA ramps: %.2f dB\n", mode, psnr);
        EXPECT_GE(psnr, at_least[mode]) << "mode " << mode;
    }
}

void encode_bc7_fast(const uint8_t* rgba, uint8_t* block) {
    encode_bc7_block(rgba, block, Bc7Effort::fast, true);
}
void encode_bc7_thorough(const uint8_t* rgba, uint8_t* block) {
    encode_bc7_block(rgba, block, Bc7Effort::thorough, true);
}

// Flat colours are held exactly, alpha too; without alpha held, alpha decodes as 254 or 255.
TEST(Bc7, FlatColoursExact) {
    std::mt19937 rng(5);
    for (int n = 0; n < 200; ++n) {
        uint8_t rgba[kBlockTexels * 4], block[16], out[kBlockTexels * 4];
        const uint8_t c[4] = {uint8_t(rng()), uint8_t(rng()), uint8_t(rng()), uint8_t(n % 2 ? rng() : 255)};
        for (int t = 0; t < kBlockTexels; ++t) std::copy(c, c + 4, rgba + 4 * t);
        for (Bc7Effort effort : {Bc7Effort::fast, Bc7Effort::thorough}) {
            encode_bc7_block(rgba, block, effort, true);
            ASSERT_TRUE(decode_bc7_block(block, out));
            for (int i = 0; i < kBlockTexels * 4; ++i) ASSERT_EQ(out[i], rgba[i]) << i;
        }
        if (c[3] != 255) continue;
        encode_bc7_block(rgba, block, Bc7Effort::fast, false);
        ASSERT_TRUE(decode_bc7_block(block, out));
        for (int t = 0; t < kBlockTexels; ++t) {
            for (int k = 0; k < 3; ++k) ASSERT_EQ(out[4 * t + k], c[k]);
            ASSERT_GE(out[4 * t + 3], 254);
        }
    }
}

TEST(Bc7, GradientAndNoiseBounds) {
    for (auto encode : {encode_bc7_fast, encode_bc7_thorough}) {
        const double ramp = block_psnr(encode, decode_bc7_block, 0, 1),
                     noisy = block_psnr(encode, decode_bc7_block, 24, 2);
        std::printf("BC7 %s psnr8: ramps %.2f dB, ramps with noise %.2f dB\n",
                    encode == encode_bc7_fast ? "fast" : "thorough", ramp, noisy);
        EXPECT_GE(ramp, 52.0);
        EXPECT_GE(noisy, 28.0);
    }
}

// Whole images: edge tiles of sizes that are not multiples of 4, and any thread count gives the same bytes.
TEST(BlockImage, OddSizesAndThreadsAgree) {
    Image image(13, 7, 3);
    std::mt19937 rng(11);
    for (float& v : image.pixels) v = float(rng() % 256) / 255.0f;
    const Rgba8Image rgba = to_rgba8(image);
    for (BlockFormat f : {BlockFormat::bc1, BlockFormat::bc4, BlockFormat::bc5, BlockFormat::bc7}) {
        const std::vector<uint8_t> one = encode_blocks(f, rgba, 1), three = encode_blocks(f, rgba, 3);
        ASSERT_EQ(one.size(), size_t(4 * 2) * size_t(block_bytes(f)));
        EXPECT_EQ(one, three) << to_string(f);
        auto decoded = decode_blocks(f, 13, 7, one);
        ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
        EXPECT_EQ(decoded->texels.size(), size_t(13 * 7 * 4));
    }
    EXPECT_FALSE(decode_blocks(BlockFormat::bc7, 13, 7, std::vector<uint8_t>(10)).ok());
}

// One real material, polyhaven_metal_plate_02_1k, against the strong encoders of
// ../shared/baselines/classic-codecs-maps.csv (rgbcx for BC1/BC4/BC5, bc7e's slowest level for BC7, all modes).
// Each bound is our measured figure less 0.3 dB, so a regression fails; the test prints how close we are.
struct MaterialCase {
    const char* file;
    BlockFormat format;
    int channels;      // compared channels: the format's (a normal map's X and Y for BC5)
    double baseline;   // psnr8 of the baseline encoder
    double at_least;   // our bound
};

TEST(BlockImage, RealMaterialAgainstBaselines) {
    const std::string dir = std::string(NMC_SHARED_DIR) + "/materials/polyhaven_metal_plate_02_1k/";
    const MaterialCase cases[] = {
        {"metal_plate_02_rough_1k.jpg", BlockFormat::bc4, 1, 41.056, 40.85},
        {"metal_plate_02_nor_gl_1k.jpg", BlockFormat::bc5, 2, 58.910, 58.7},
        {"metal_plate_02_diff_1k.jpg", BlockFormat::bc1, 3, 42.580, 41.98},
        {"metal_plate_02_diff_1k.jpg", BlockFormat::bc7, 3, 51.561, 51.38},
    };
    for (const MaterialCase& c : cases) {
        auto image = read_image(dir + c.file);
        if (!image.ok()) GTEST_SKIP() << "shared material missing: " << image.status().to_string();
        const Rgba8Image source = to_rgba8(*image);
        auto decoded = decode_blocks(c.format, source.width, source.height, encode_blocks(c.format, source));
        ASSERT_TRUE(decoded.ok());
        const double psnr = psnr_from_mse(mean_squared_error8(source, *decoded, c.channels));
        std::printf("%s %s: psnr8 %.3f dB, baseline %.3f dB (%+.3f)\n", c.file, to_string(c.format), psnr, c.baseline,
                    psnr - c.baseline);
        EXPECT_GE(psnr, c.at_least) << c.file << " " << to_string(c.format);
    }
}

}  // namespace
}  // namespace nmc::texture
