// The CPU decoder on random valid packs against an independent implementation of spec section 8 written here,
// across ISAs, thread counts, addressing modes, odd sizes, normal maps, constants and channel ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/number_formats.h"
#include "decoder/cpu/cpu_decoder.h"
#include "tests/decoder/binary16_reference.h"
#include "tests/decoder/random_pack.h"

namespace nmc {
namespace {

using test::RandomPackOptions;

// spec 8.1-8.7 for one query, written from the spec without the decoder's code. Each layer's sum is taken in
// double: where every partial sum is exact in float32 (see ExactSums below), that is the float32 result of any
// summation order, so it checks the decoders' sums rather than repeating them. The binary16 arithmetic's roundings
// (spec 2.2) go through binary16_reference.h, not core's.
std::vector<float> spec_decode(const Pack& pack, float u, float v, int mip) {
    using test::independent_f16;
    const bool binary16 = pack.network.arithmetic == Arithmetic::binary16;
    const LatentGrids& grids = pack.latents;
    const int f = grids.feature_count;
    const int k0 = std::min(mip, static_cast<int>(grids.levels.size()) - 2);
    std::vector<float> x(static_cast<size_t>(pack.network.layers[0].input_width), 0.0f);
    float px0 = 0;
    float py0 = 0;
    for (int level = 0; level < 2; ++level) {
        const LatentLevel& l = grids.levels[static_cast<size_t>(k0 + level)];
        const float px = u * static_cast<float>(l.width) - 0.5f;
        const float py = v * static_cast<float>(l.height) - 0.5f;
        if (level == 0) {
            px0 = px;
            py0 = py;
        }
        const int x0 = static_cast<int>(std::floor(px));
        const int y0 = static_cast<int>(std::floor(py));
        const float fx = px - std::floor(px);
        const float fy = py - std::floor(py);
        auto wrap_or_clamp = [&](int c, int n) {
            return pack.material.address_mode == AddressMode::wrap ? ((c % n) + n) % n : std::clamp(c, 0, n - 1);
        };
        const float step = (l.hi - l.lo) / static_cast<float>((1 << l.bits) - 1);
        auto feature = [&](int tx, int ty, int j) {
            const size_t index = (static_cast<size_t>(wrap_or_clamp(ty, l.height)) * static_cast<size_t>(l.width) +
                                  static_cast<size_t>(wrap_or_clamp(tx, l.width))) *
                                     static_cast<size_t>(f) +
                                 static_cast<size_t>(j);
            if (binary16) {  // spec 6: f16(q * f16(step) + f16(lo))
                return independent_f16(static_cast<double>(l.codes[index]) * independent_f16(step) +
                                       independent_f16(l.lo));
            }
            return l.lo + static_cast<float>(l.codes[index]) * step;
        };
        // spec 8.3; binary16: each float32 weight rounded once, then the same sum (its products are exact).
        auto weight = [&](float w) { return binary16 ? independent_f16(w) : w; };
        const float w00 = weight((1.0f - fx) * (1.0f - fy));
        const float w10 = weight(fx * (1.0f - fy));
        const float w01 = weight((1.0f - fx) * fy);
        const float w11 = weight(fx * fy);
        for (int j = 0; j < f; ++j) {
            x[static_cast<size_t>(level * f + j)] =
                ((w00 * feature(x0, y0, j) + w10 * feature(x0 + 1, y0, j)) + w01 * feature(x0, y0 + 1, j)) +
                w11 * feature(x0 + 1, y0 + 1, j);
        }
    }
    auto saw = [](float t) { return 2.0f * (t - std::floor(t)) - 1.0f; };
    for (int o = 0; o < 3; ++o) {
        const float s = std::ldexp(1.0f, o);
        x[static_cast<size_t>(2 * f + 4 * o + 0)] = saw(px0 * s);
        x[static_cast<size_t>(2 * f + 4 * o + 1)] = saw(py0 * s);
        x[static_cast<size_t>(2 * f + 4 * o + 2)] = saw(px0 * s + 0.25f);
        x[static_cast<size_t>(2 * f + 4 * o + 3)] = saw(py0 * s + 0.25f);
    }
    x[static_cast<size_t>(2 * f + 12)] = static_cast<float>(mip) * 0.25f;

    for (size_t li = 0; li < pack.network.layers.size(); ++li) {
        const Layer& layer = pack.network.layers[li];
        std::vector<float> rounded(x.size());
        for (size_t i = 0; i < x.size(); ++i) rounded[i] = round_to_fp8_e4m3(x[i]);
        std::vector<float> y(static_cast<size_t>(layer.output_width));
        for (int n = 0; n < layer.output_width; ++n) {
            double acc = 0;
            for (int i = 0; i < layer.input_width; ++i) {
                const uint8_t code = layer.weights[static_cast<size_t>(n * layer.input_width + i)];
                const float w = layer.weight_type == WeightType::int8 ? static_cast<float>(static_cast<int8_t>(code))
                                                                      : fp8_e4m3_to_float(code);
                acc += static_cast<double>(w) * static_cast<double>(rounded[static_cast<size_t>(i)]);
            }
            float yn = static_cast<float>(acc);
            if (layer.has_scale()) yn = yn * layer.scales[static_cast<size_t>(n)];
            yn = yn + fp16_to_float(layer.biases[static_cast<size_t>(n)]);
            if (li + 1 < pack.network.layers.size()) {
                if (binary16) {
                    yn = test::independent_hgelu_binary16(yn);
                } else {
                const float t = std::min(std::max(yn * 0.333333343f + 0.5f, 0.0f), 1.0f);
                yn = std::min(yn, 3.0f) * t;
            }
            }
            y[static_cast<size_t>(n)] = yn;
        }
        x = y;
    }
    for (size_t c = 0; c < x.size(); ++c) {
        const float lo = pack.channels[c].lo;
        const float hi = pack.channels[c].hi;
        x[c] = lo + (hi - lo) * std::min(std::max(x[c], 0.0f), 1.0f);
    }
    return x;
}

std::vector<CpuIsa> available_isas(const Pack& pack) {
    std::vector<CpuIsa> isas = {CpuIsa::portable};
    for (CpuIsa isa : {CpuIsa::avx2, CpuIsa::avx512bf16, CpuIsa::avx512fp16}) {
        if (CpuDecoder::create(pack, {1, isa}).ok()) isas.push_back(isa);
    }
    return isas;
}

CpuDecoder make_decoder(const Pack& pack, CpuIsa isa, int threads = 2) {
    Result<CpuDecoder> decoder = CpuDecoder::create(pack, {threads, isa});
    EXPECT_TRUE(decoder.ok()) << decoder.status().to_string();
    return std::move(decoder).value();
}

std::vector<std::vector<float>> decode_mip(const CpuDecoder& decoder, int mip) {
    std::vector<std::vector<float>> planes;
    const Status status = decoder.decode_mip_channels(mip, planes);
    EXPECT_TRUE(status.ok()) << status.to_string();
    return planes;
}

// The spec's values of every texel of a mip, planes[c][y * w + x] like decode_mip_channels.
std::vector<std::vector<float>> spec_decode_mip(const Pack& pack, int mip) {
    const int w = pack.material.mip_width(mip);
    const int h = pack.material.mip_height(mip);
    std::vector<std::vector<float>> planes(pack.channels.size(), std::vector<float>(static_cast<size_t>(w * h)));
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            const std::vector<float> texel = spec_decode(pack, (static_cast<float>(x) + 0.5f) / static_cast<float>(w),
                                                         (static_cast<float>(y) + 0.5f) / static_cast<float>(h), mip);
            for (size_t c = 0; c < texel.size(); ++c) planes[c][static_cast<size_t>(y * w + x)] = texel[c];
        }
    }
    return planes;
}

TEST(CpuDecoder, ExactSumsMatchSpecBitForBitOnEveryIsaAndMip) {
    for (const test::ExactCase& c : test::exact_sum_cases()) {
        SCOPED_TRACE(c.name);
        const Pack pack = test::make_random_pack(c.options);
        std::vector<CpuDecoder> decoders;
        for (CpuIsa isa : available_isas(pack)) decoders.push_back(make_decoder(pack, isa));
        for (int mip = 0; mip < pack.material.mip_count; ++mip) {
            const std::vector<std::vector<float>> expected = spec_decode_mip(pack, mip);
            for (const CpuDecoder& decoder : decoders) {
                // == on floats: exact, and -0.0 == +0.0 (the spec's std::min/max here may keep a -0.0 that
                // minps/maxps turn into +0.0; both are the same value).
                EXPECT_EQ(decode_mip(decoder, mip), expected) << decoder.isa_name() << " mip " << mip;
            }
        }
    }
}

// spec 2.2, 6, 8.3, 8.6 with network.arithmetic binary16, on the exact-sum packs: every ISA bit for bit with the
// spec, on whole mips and on random queries (inside the unit square: the AVX-512 sampler; outside: the scalar one).
// The same packs decode differently under float32, so the arithmetic really switched.
TEST(CpuDecoder, Binary16ArithmeticMatchesSpecBitForBitOnEveryIsa) {
    for (const test::ExactCase& c : test::exact_sum_cases()) {
        SCOPED_TRACE(c.name);
        Pack pack = test::make_random_pack(c.options);
        const CpuDecoder float32_decoder = make_decoder(pack, CpuIsa::portable);
        pack.network.arithmetic = Arithmetic::binary16;
        std::vector<CpuDecoder> decoders;
        for (CpuIsa isa : available_isas(pack)) decoders.push_back(make_decoder(pack, isa));
        size_t differ_from_float32 = 0;
        for (int mip = 0; mip < pack.material.mip_count; ++mip) {
            const std::vector<std::vector<float>> expected = spec_decode_mip(pack, mip);
            for (const CpuDecoder& decoder : decoders) {
                EXPECT_EQ(decode_mip(decoder, mip), expected) << decoder.isa_name() << " mip " << mip;
            }
            const std::vector<std::vector<float>> float32 = decode_mip(float32_decoder, mip);
            for (size_t ch = 0; ch < float32.size(); ++ch) {
                for (size_t i = 0; i < float32[ch].size(); ++i)
                    differ_from_float32 += float32[ch][i] != expected[ch][i];
            }
        }
        EXPECT_GT(differ_from_float32, 0u);
        std::mt19937 rng(c.options.seed);
        std::vector<TexelQuery> queries;
        for (int i = 0; i < 160; ++i) {
            const float range = i < 96 ? 1.0f : 3.0f;  // 96 inside the unit square (whole tiles), 64 around it
            const float offset = i < 96 ? 0.0f : -1.0f;
            queries.push_back({std::uniform_real_distribution<float>(0.0f, range)(rng) + offset,
                               std::uniform_real_distribution<float>(0.0f, range)(rng) + offset,
                               i < 96 ? (i / 16) % pack.material.mip_count
                                      : std::uniform_int_distribution<int>(0, pack.material.mip_count - 1)(rng)});
        }
        for (const CpuDecoder& decoder : decoders) {
            std::vector<float> values;
            ASSERT_TRUE(decoder.decode_queries(queries, values).ok());
            const size_t channels = pack.channels.size();
            for (size_t i = 0; i < queries.size(); ++i) {
                const std::vector<float> expected = spec_decode(pack, queries[i].u, queries[i].v, queries[i].mip);
                for (size_t ch = 0; ch < channels; ++ch) {
                    ASSERT_EQ(values[i * channels + ch], expected[ch]) << decoder.isa_name() << " query " << i;
                }
            }
        }
    }
}

TEST(CpuDecoder, RandomQueriesMatchSpecIncludingOutsideTheUnitSquare) {
    for (const test::ExactCase& c : test::exact_sum_cases()) {
        SCOPED_TRACE(c.name);
        const Pack pack = test::make_random_pack(c.options);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> coordinate(-1.5f, 2.5f);
        std::uniform_int_distribution<int> mip(0, pack.material.mip_count - 1);
        std::vector<TexelQuery> queries(500);
        for (TexelQuery& q : queries) q = {coordinate(rng), coordinate(rng), mip(rng)};
        for (CpuIsa isa : available_isas(pack)) {
            SCOPED_TRACE(to_string(isa));
            std::vector<float> out;
            ASSERT_TRUE(make_decoder(pack, isa).decode_queries(queries, out).ok());
            const size_t channels = pack.channels.size();
            for (size_t i = 0; i < queries.size(); ++i) {
                const std::vector<float> expected = spec_decode(pack, queries[i].u, queries[i].v, queries[i].mip);
                for (size_t ch = 0; ch < channels; ++ch) ASSERT_EQ(out[i * channels + ch], expected[ch]) << i;
            }
        }
    }
}

RandomPackOptions inexact_options() {
    return test::general_pack_options();
}

// Tolerance when only the summation order differs. A float32 sum of I products in any order is within
// (I - 1) * 2^-24 * sum|p| of the exact sum (and so is the reference's double sum rounded once), so two orders
// differ by at most twice that. In the last layer (I = 64, |W| <= 448, |x'| <= 3, scale <= 2 / (448 * 8)):
// 2 * 63 * 2^-24 * (64 * 448 * 3) * 2 / (448 * 8) = 3.6e-4 in o, times a channel range of at most 8.25: 3e-3.
// Hidden layers' differences are erased by the E4M3 rounding of the next layer's input, except where a value
// lies within its sum-order error (~1e-6 relative) of an E4M3 rounding midpoint and rounds the other way; that
// moves the output by a weight times an E4M3 step. It takes ~1e-6 / 2^-4 odds per activation, so a few texels
// in 10^3 at most. A wrong kernel differs on nearly every texel.
constexpr float kSumOrderTolerance = 3e-3f;
constexpr double kMaxFractionBeyondTolerance = 0.005;

void expect_close_but_for_rare_rounding_flips(const std::vector<std::vector<float>>& a,
                                              const std::vector<std::vector<float>>& b) {
    ASSERT_EQ(a.size(), b.size());
    size_t beyond = 0;
    size_t total = 0;
    for (size_t c = 0; c < a.size(); ++c) {
        ASSERT_EQ(a[c].size(), b[c].size());
        for (size_t i = 0; i < a[c].size(); ++i) beyond += std::fabs(a[c][i] - b[c][i]) > kSumOrderTolerance;
        total += a[c].size();
    }
    EXPECT_LE(static_cast<double>(beyond), kMaxFractionBeyondTolerance * static_cast<double>(total))
        << beyond << " of " << total << " values differ by more than " << kSumOrderTolerance;
}

TEST(CpuDecoder, InexactSumsAgreeWithinSummationOrderTolerance) {
    const Pack pack = test::make_random_pack(inexact_options());
    const std::vector<std::vector<float>> spec = spec_decode_mip(pack, 0);
    const std::vector<std::vector<float>> portable = decode_mip(make_decoder(pack, CpuIsa::portable), 0);
    expect_close_but_for_rare_rounding_flips(portable, spec);
    for (CpuIsa isa : available_isas(pack)) {
        if (isa == CpuIsa::portable) continue;
        SCOPED_TRACE(to_string(isa));
        const std::vector<std::vector<float>> fast = decode_mip(make_decoder(pack, isa), 0);
        expect_close_but_for_rare_rounding_flips(fast, portable);
        expect_close_but_for_rare_rounding_flips(fast, spec);
    }
}

TEST(CpuDecoder, WholeMipEqualsQueriesAndThreadCountDoesNotMatter) {
    const Pack pack = test::make_random_pack(inexact_options());
    for (CpuIsa isa : available_isas(pack)) {
        SCOPED_TRACE(to_string(isa));
        const CpuDecoder one_thread = make_decoder(pack, isa, 1);
        const CpuDecoder three_threads = make_decoder(pack, isa, 3);
        for (int mip = 0; mip < pack.material.mip_count; ++mip) {
            const std::vector<std::vector<float>> planes = decode_mip(three_threads, mip);
            EXPECT_EQ(decode_mip(one_thread, mip), planes) << "mip " << mip;
            const int w = pack.material.mip_width(mip);
            const int h = pack.material.mip_height(mip);
            std::vector<TexelQuery> queries;
            for (int y = 0; y < h; ++y) {
                for (int x = 0; x < w; ++x) {
                    queries.push_back({(static_cast<float>(x) + 0.5f) / static_cast<float>(w),
                                       (static_cast<float>(y) + 0.5f) / static_cast<float>(h), mip});
                }
            }
            std::reverse(queries.begin(), queries.end());  // tiles group other texels than the whole-mip decode
            std::vector<float> out;
            ASSERT_TRUE(three_threads.decode_queries(queries, out).ok());
            const size_t channels = planes.size();
            for (size_t i = 0; i < queries.size(); ++i) {
                const size_t texel = queries.size() - 1 - i;
                for (size_t c = 0; c < channels; ++c) ASSERT_EQ(out[i * channels + c], planes[c][texel]) << i;
            }
        }
    }
}

TEST(CpuDecoder, WrapAndClampDifferOnlyAtEdges) {
    RandomPackOptions o;
    o.width = 32;
    o.height = 32;
    o.grid_scale = 4;  // level 0 is 8x8, level 1 4x4
    Pack wrap = test::make_random_pack(o);
    Pack clamp = wrap;
    clamp.material.address_mode = AddressMode::clamp;
    const std::vector<std::vector<float>> a = decode_mip(make_decoder(wrap, CpuIsa::automatic), 0);
    const std::vector<std::vector<float>> b = decode_mip(make_decoder(clamp, CpuIsa::automatic), 0);
    // Level 1 (4x4, 8 texels per latent texel) reaches past the edge for texels within 4 of it.
    int edge_differences = 0;
    for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x) {
            const bool interior = x >= 4 && x < 28 && y >= 4 && y < 28;
            bool same = true;
            const size_t t = static_cast<size_t>(y * 32 + x);
            for (size_t c = 0; c < a.size(); ++c) same = same && a[c][t] == b[c][t];
            if (interior) {
                EXPECT_TRUE(same) << "interior texel (" << x << ", " << y << ")";
            }
            edge_differences += !same;
        }
    }
    EXPECT_GT(edge_differences, 32 * 4);  // nearly every edge texel changes
}

// spec 8.8-8.9 on decode_texture: normal xy with a DirectX (inverted) Y, normal xyz, constants and inverts,
// against the same steps written here from the pack-channel planes.
TEST(CpuDecoder, TexturesRebuildNormalsConstantsAndInverts) {
    using Kind = ChannelSource::Kind;
    RandomPackOptions o;
    o.width = 24;
    o.height = 20;
    o.channel_count = 6;
    o.seed = 21;
    Pack pack = test::make_random_pack(o);
    TextureLayout xy;
    xy.name = "normal_xy";
    xy.file_name = "normal_xy.png";
    xy.normal_mode = NormalMode::xy;
    xy.sample_type = SampleType::uint16;
    xy.channels = {{Kind::pack, 0, false, 0, Semantic::normal},
                   {Kind::pack, 1, true, 0, Semantic::normal},
                   {Kind::normal_z, -1, false, 0, Semantic::normal}};
    TextureLayout xyz;
    xyz.name = "normal_xyz";
    xyz.file_name = "normal_xyz.png";
    xyz.normal_mode = NormalMode::xyz;
    xyz.channels = {{Kind::pack, 2, false, 0, Semantic::normal},
                    {Kind::pack, 3, false, 0, Semantic::normal},
                    {Kind::pack, 4, false, 0, Semantic::normal}};
    TextureLayout orm;
    orm.name = "orm";
    orm.file_name = "orm.png";
    orm.channels = {{Kind::constant, -1, false, 0.75f, Semantic::ambient_occlusion},
                    {Kind::pack, 5, true, 0, Semantic::glossiness},
                    {Kind::pack, 5, false, 0, Semantic::roughness},
                    {Kind::constant, -1, false, 0.0f, Semantic::metalness}};
    pack.textures = {xy, xyz, orm};

    for (CpuIsa isa : available_isas(pack)) {
        SCOPED_TRACE(to_string(isa));
        const CpuDecoder decoder = make_decoder(pack, isa);
        for (int mip = 0; mip < 3; ++mip) {
            const std::vector<std::vector<float>> v = decode_mip(decoder, mip);
            Result<Image> n1 = decoder.decode_texture(0, mip);
            Result<Image> n2 = decoder.decode_texture(1, mip);
            Result<Image> n3 = decoder.decode_texture(2, mip);
            ASSERT_TRUE(n1.ok() && n2.ok() && n3.ok());
            EXPECT_EQ(n1->sample_type, SampleType::uint16);
            EXPECT_EQ(n3->channels, 4);
            for (size_t t = 0; t < v[0].size(); ++t) {
                const int x = static_cast<int>(t) % n1->width;
                const int y = static_cast<int>(t) / n1->width;
                // xy: x = 2a - 1, y = 2b - 1, z = sqrt(max((1 - x*x) - y*y, 0)), renormalised.
                float nx = 2.0f * v[0][t] - 1.0f;
                float ny = 2.0f * v[1][t] - 1.0f;
                float nz = std::sqrt(std::max((1.0f - nx * nx) - ny * ny, 0.0f));
                float len2 = (nx * nx + ny * ny) + nz * nz;
                float r = 1.0f / std::sqrt(len2);
                EXPECT_EQ(n1->at(x, y, 0), nx * r * 0.5f + 0.5f);
                EXPECT_EQ(n1->at(x, y, 1), 1.0f - (ny * r * 0.5f + 0.5f));
                EXPECT_EQ(n1->at(x, y, 2), nz * r * 0.5f + 0.5f);
                // xyz: renormalised, or (0, 0, 1) for a zero vector.
                nx = 2.0f * v[2][t] - 1.0f;
                ny = 2.0f * v[3][t] - 1.0f;
                nz = 2.0f * v[4][t] - 1.0f;
                len2 = (nx * nx + ny * ny) + nz * nz;
                r = len2 > 0.0f ? 1.0f / std::sqrt(len2) : 0.0f;
                EXPECT_EQ(n2->at(x, y, 0), len2 > 0.0f ? nx * r * 0.5f + 0.5f : 0.5f);
                EXPECT_EQ(n2->at(x, y, 2), len2 > 0.0f ? nz * r * 0.5f + 0.5f : 1.0f);
                EXPECT_EQ(n3->at(x, y, 0), 0.75f);
                EXPECT_EQ(n3->at(x, y, 1), 1.0f - v[5][t]);
                EXPECT_EQ(n3->at(x, y, 2), v[5][t]);
                EXPECT_EQ(n3->at(x, y, 3), 0.0f);
            }
        }
    }
}

}  // namespace
}  // namespace nmc
