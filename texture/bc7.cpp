// BC7 mode 6: one subset, RGBA endpoints of 7 bits plus a p-bit each, 4-bit indices. The encoder fits the
// endpoints to the block's principal axis in RGBA, refits them to their indices by least squares, tries every
// p-bit pair, then walks the 7-bit components (alone and in pairs) and p-bits while the squared error falls.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "texture/block_codecs.h"

namespace nmc::texture {
namespace {

constexpr int kWeights4[16] = {0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64};

// Interpolation of the specification: ((64 - w) e0 + w e1 + 32) >> 6.
int interpolate(int e0, int e1, int w) { return ((64 - w) * e0 + w * e1 + 32) >> 6; }

// Mode 6 endpoints: 7-bit RGBA components of endpoint 0 and 1, and the p-bit of each.
struct Mode6Endpoints {
    std::array<int, 8> c{};  // r0 g0 b0 a0 r1 g1 b1 a1
    int p0 = 0, p1 = 0;
};

struct Mode6Candidate {
    Mode6Endpoints e;
    int error = 1 << 30;
    uint8_t indices[kBlockTexels] = {};
};

// Squared RGBA error with each texel given its nearest palette entry; replaces `best` when lower.
bool evaluate(const uint8_t rgba[kBlockTexels * 4], const Mode6Endpoints& e, Mode6Candidate& best) {
    int palette[16][4];
    for (int k = 0; k < 4; ++k) {
        const int e0 = (e.c[k] << 1) | e.p0, e1 = (e.c[4 + k] << 1) | e.p1;
        for (int i = 0; i < 16; ++i) palette[i][k] = interpolate(e0, e1, kWeights4[i]);
    }
    Mode6Candidate c;
    c.e = e;
    c.error = 0;
    for (int t = 0; t < kBlockTexels; ++t) {
        const uint8_t* x = rgba + 4 * t;
        int best_d = 1 << 30;
        for (int i = 0; i < 16; ++i) {
            const int d0 = palette[i][0] - x[0], d1 = palette[i][1] - x[1], d2 = palette[i][2] - x[2],
                      d3 = palette[i][3] - x[3];
            const int d = d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3;
            if (d < best_d) best_d = d, c.indices[t] = uint8_t(i);
        }
        c.error += best_d;
        if (c.error >= best.error) return false;
    }
    best = c;
    return true;
}

// Quantises 8-bit endpoints a, b under p-bits p0, p1: the 7-bit value whose (c << 1 | p) is nearest.
Mode6Endpoints quantize(const float a[4], const float b[4], int p0, int p1) {
    Mode6Endpoints e;
    e.p0 = p0, e.p1 = p1;
    for (int k = 0; k < 4; ++k) {
        e.c[k] = std::clamp(int(std::lround((a[k] - p0) / 2.0f)), 0, 127);
        e.c[4 + k] = std::clamp(int(std::lround((b[k] - p1) / 2.0f)), 0, 127);
    }
    return e;
}

// Tries the four p-bit pairs for 8-bit endpoints a, b.
void try_endpoints(const uint8_t rgba[kBlockTexels * 4], const float a[4], const float b[4], Mode6Candidate& best) {
    for (int p = 0; p < 4; ++p) evaluate(rgba, quantize(a, b, p & 1, p >> 1), best);
}

// Least-squares 8-bit endpoints for the candidate's indices.
bool refit(const uint8_t rgba[kBlockTexels * 4], const Mode6Candidate& c, float a[4], float b[4]) {
    double aa = 0, ab = 0, bb = 0, ax[4] = {}, bx[4] = {};
    for (int t = 0; t < kBlockTexels; ++t) {
        const double w = kWeights4[c.indices[t]] / 64.0, u = 1.0 - w;
        aa += u * u, ab += u * w, bb += w * w;
        for (int k = 0; k < 4; ++k) ax[k] += u * rgba[4 * t + k], bx[k] += w * rgba[4 * t + k];
    }
    const double det = aa * bb - ab * ab;
    if (std::fabs(det) < 1e-9) return false;
    for (int k = 0; k < 4; ++k) {
        a[k] = float(std::clamp((ax[k] * bb - bx[k] * ab) / det, 0.0, 255.0));
        b[k] = float(std::clamp((bx[k] * aa - ax[k] * ab) / det, 0.0, 255.0));
    }
    return true;
}

// Appends `count` bits of `value` at bit `pos` of a 128-bit little-endian block.
void put_bits(uint8_t block[16], int& pos, int count, uint32_t value) {
    for (int i = 0; i < count; ++i, ++pos)
        if ((value >> i) & 1) block[pos >> 3] = uint8_t(block[pos >> 3] | (1 << (pos & 7)));
}
uint32_t get_bits(const uint8_t block[16], int& pos, int count) {
    uint32_t v = 0;
    for (int i = 0; i < count; ++i, ++pos) v |= uint32_t((block[pos >> 3] >> (pos & 7)) & 1) << i;
    return v;
}

}  // namespace

void encode_bc7_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16]) {
    float mean[4] = {};
    for (int t = 0; t < kBlockTexels; ++t)
        for (int k = 0; k < 4; ++k) mean[k] += rgba[4 * t + k] / 16.0f;
    float cov[4][4] = {};
    for (int t = 0; t < kBlockTexels; ++t)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) cov[i][j] += (rgba[4 * t + i] - mean[i]) * (rgba[4 * t + j] - mean[j]);
    // Principal axis by power iteration.
    float axis[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    for (int it = 0; it < 8; ++it) {
        float n[4] = {};
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) n[i] += cov[i][j] * axis[j];
        const float len = std::max({std::fabs(n[0]), std::fabs(n[1]), std::fabs(n[2]), std::fabs(n[3])});
        if (len < 1e-6f) break;
        for (int k = 0; k < 4; ++k) axis[k] = n[k] / len;
    }
    float lo = 1e30f, hi = -1e30f;
    for (int t = 0; t < kBlockTexels; ++t) {
        float p = 0;
        for (int k = 0; k < 4; ++k) p += (rgba[4 * t + k] - mean[k]) * axis[k];
        lo = std::min(lo, p), hi = std::max(hi, p);
    }
    const float norm2 = axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2] + axis[3] * axis[3];
    float a[4], b[4];
    for (int k = 0; k < 4; ++k) {
        a[k] = std::clamp(mean[k] + axis[k] * lo / norm2, 0.0f, 255.0f);
        b[k] = std::clamp(mean[k] + axis[k] * hi / norm2, 0.0f, 255.0f);
    }
    Mode6Candidate best;
    try_endpoints(rgba, a, b, best);
    for (int pass = 0; pass < 2 && best.error > 0; ++pass)
        if (refit(rgba, best, a, b)) try_endpoints(rgba, a, b, best);
    // Walk the endpoints one step at a time while the error falls: each 7-bit component alone, and each channel's
    // two endpoints together (in step: the segment shifts; apart: it stretches), which single steps cannot reach
    // when every one of them alone makes things worse; then the other p-bit pairs with the endpoints reached.
    for (int round = 0; round < 8 && best.error > 0; ++round) {
        bool improved = false;
        for (int k = 0; k < 8; ++k)
            for (int step : {-1, 1}) {
                Mode6Endpoints e = best.e;
                e.c[k] += step;
                if (e.c[k] >= 0 && e.c[k] <= 127) improved |= evaluate(rgba, e, best);
            }
        for (int k = 0; k < 4; ++k)
            for (int step0 : {-1, 1})
                for (int step1 : {-1, 1}) {
                    Mode6Endpoints e = best.e;
                    e.c[k] += step0, e.c[4 + k] += step1;
                    if (e.c[k] >= 0 && e.c[k] <= 127 && e.c[4 + k] >= 0 && e.c[4 + k] <= 127)
                        improved |= evaluate(rgba, e, best);
                }
        for (int p = 0; p < 4; ++p) {
            Mode6Endpoints e = best.e;
            e.p0 = p & 1, e.p1 = p >> 1;
            improved |= evaluate(rgba, e, best);
        }
        if (!improved) break;
    }

    // The anchor texel 0 stores its index's top bit implicitly as 0: swap the endpoints when it is set.
    Mode6Endpoints e = best.e;
    uint8_t indices[kBlockTexels];
    std::memcpy(indices, best.indices, sizeof indices);
    if (indices[0] & 8) {
        for (int k = 0; k < 4; ++k) std::swap(e.c[k], e.c[4 + k]);
        std::swap(e.p0, e.p1);
        for (uint8_t& i : indices) i = uint8_t(15 - i);
    }
    std::memset(block, 0, 16);
    int pos = 0;
    put_bits(block, pos, 7, 1u << 6);  // mode 6: six 0 bits, then a 1
    for (int k = 0; k < 4; ++k) {
        put_bits(block, pos, 7, uint32_t(e.c[k]));
        put_bits(block, pos, 7, uint32_t(e.c[4 + k]));
    }
    put_bits(block, pos, 1, uint32_t(e.p0));
    put_bits(block, pos, 1, uint32_t(e.p1));
    put_bits(block, pos, 3, indices[0]);
    for (int t = 1; t < kBlockTexels; ++t) put_bits(block, pos, 4, indices[t]);
}

bool decode_bc7_block(const uint8_t block[16], uint8_t rgba[kBlockTexels * 4]) {
    if ((block[0] & 0x7f) != 0x40) {  // not mode 6
        std::memset(rgba, 0, kBlockTexels * 4);
        return false;
    }
    int pos = 7;
    int c[8];
    for (int k = 0; k < 4; ++k) {
        c[k] = int(get_bits(block, pos, 7));
        c[4 + k] = int(get_bits(block, pos, 7));
    }
    const int p0 = int(get_bits(block, pos, 1)), p1 = int(get_bits(block, pos, 1));
    for (int t = 0; t < kBlockTexels; ++t) {
        const int index = int(get_bits(block, pos, t == 0 ? 3 : 4));
        for (int k = 0; k < 4; ++k)
            rgba[4 * t + k] = uint8_t(interpolate((c[k] << 1) | p0, (c[4 + k] << 1) | p1, kWeights4[index]));
    }
    return true;
}

}  // namespace nmc::texture
