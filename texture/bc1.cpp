// BC1: two RGB565 endpoints and 16 2-bit indices. The encoder starts from the block's principal axis and the best
// cluster fit along it, refits the endpoints to their indices by least squares, then walks each endpoint component one 565 step at a time while the
// squared error falls; flat blocks also try the endpoint pair whose interpolant hits their colour best. Blocks are
// always opaque: the three-colour mode's transparent black is never written.
#include <algorithm>
#include <array>
#include <cmath>

#include "texture/block_codecs.h"

namespace nmc::texture {
namespace {

int expand5(int v) { return (v << 3) | (v >> 2); }
int expand6(int v) { return (v << 2) | (v >> 4); }
int pack565(const int c[3]) { return (c[0] << 11) | (c[1] << 5) | c[2]; }
void unpack565(int p, int c[3]) {
    c[0] = (p >> 11) & 31;
    c[1] = (p >> 5) & 63;
    c[2] = p & 31;
}

// The four decoded colours of packed endpoints p0, p1, indexed as the block's indices are. Four-colour mode when
// p0 > p1, else three colours and black. Interpolants are rounded to the nearest code.
void bc1_palette(int p0, int p1, int palette[4][4]) {
    int a[3], b[3];
    unpack565(p0, a);
    unpack565(p1, b);
    const int c0[3] = {expand5(a[0]), expand6(a[1]), expand5(a[2])};
    const int c1[3] = {expand5(b[0]), expand6(b[1]), expand5(b[2])};
    for (int k = 0; k < 3; ++k) {
        palette[0][k] = c0[k];
        palette[1][k] = c1[k];
        if (p0 > p1) {
            palette[2][k] = (2 * c0[k] + c1[k] + 1) / 3;
            palette[3][k] = (c0[k] + 2 * c1[k] + 1) / 3;
        } else {
            palette[2][k] = (c0[k] + c1[k] + 1) / 2;
            palette[3][k] = 0;
        }
    }
    palette[0][3] = palette[1][3] = palette[2][3] = 255;
    palette[3][3] = p0 > p1 ? 255 : 0;
}

// Endpoints in 565 component units: {r, g, b} of each.
using Endpoints = std::array<int, 6>;
constexpr int kComponentMax[6] = {31, 63, 31, 31, 63, 31};

struct Bc1Candidate {
    int p0 = 0, p1 = 0;
    int error = 1 << 30;
    uint8_t indices[kBlockTexels] = {};
};

// Squared RGB error of `e` in four-colour (three_colour false) or three-colour mode, each texel given its nearest
// palette colour; replaces `best` when lower.
bool evaluate(const uint8_t rgba[kBlockTexels * 4], const Endpoints& e, bool three_colour, Bc1Candidate& best) {
    int p0 = pack565(&e[0]), p1 = pack565(&e[3]);
    if (three_colour ? p0 > p1 : p0 < p1) std::swap(p0, p1);
    int palette[4][4];
    bc1_palette(p0, p1, palette);
    Bc1Candidate c;
    c.p0 = p0, c.p1 = p1, c.error = 0;
    // Index 3 of the three-colour mode decodes as transparent black under DXGI's BC1 formats: never used, so an
    // engine's alpha test cannot cut holes into an opaque texture.
    const int colours = p0 > p1 ? 4 : 3;
    for (int t = 0; t < kBlockTexels; ++t) {
        const uint8_t* x = rgba + 4 * t;
        int best_d = 1 << 30;
        for (int i = 0; i < colours; ++i) {
            const int dr = palette[i][0] - x[0], dg = palette[i][1] - x[1], db = palette[i][2] - x[2];
            const int d = dr * dr + dg * dg + db * db;
            if (d < best_d) best_d = d, c.indices[t] = static_cast<uint8_t>(i);
        }
        c.error += best_d;
        if (c.error >= best.error) return false;
    }
    best = c;
    return true;
}

Endpoints quantize(const float a[3], const float b[3]) {
    const auto q = [](float v, int max) { return std::clamp(static_cast<int>(std::lround(v * max / 255.0f)), 0, max); };
    return {q(a[0], 31), q(a[1], 63), q(a[2], 31), q(b[0], 31), q(b[1], 63), q(b[2], 31)};
}

// Least-squares endpoints for the candidate's indices: each texel is (1 - w) c0 + w c1 with w its index's position.
bool refit(const uint8_t rgba[kBlockTexels * 4], const Bc1Candidate& c, Endpoints& out) {
    const bool four = c.p0 > c.p1;
    const float position[4] = {0.0f, 1.0f, four ? 1.0f / 3.0f : 0.5f, 2.0f / 3.0f};
    double aa = 0, ab = 0, bb = 0, ax[3] = {}, bx[3] = {};
    for (int t = 0; t < kBlockTexels; ++t) {
        const float w = position[c.indices[t]];
        const double u = 1.0 - w;
        aa += u * u, ab += u * w, bb += double(w) * w;
        for (int k = 0; k < 3; ++k) ax[k] += u * rgba[4 * t + k], bx[k] += w * rgba[4 * t + k];
    }
    const double det = aa * bb - ab * ab;
    if (std::fabs(det) < 1e-9) return false;
    float a[3], b[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = static_cast<float>(std::clamp((ax[k] * bb - bx[k] * ab) / det, 0.0, 255.0));
        b[k] = static_cast<float>(std::clamp((bx[k] * aa - ax[k] * ab) / det, 0.0, 255.0));
    }
    out = quantize(a, b);
    return true;
}

// For each 8-bit value, the 5- and 6-bit endpoint pairs whose 1/3 interpolant comes closest to it: a flat block
// of that colour then decodes with the least error the format allows.
struct SingleColourTable {
    uint8_t pair[256][2];
};
SingleColourTable make_single_colour_table(int bits) {
    SingleColourTable table{};
    const int max = (1 << bits) - 1;
    for (int v = 0; v < 256; ++v) {
        int best = 1 << 30;
        for (int e0 = 0; e0 <= max; ++e0)
            for (int e1 = 0; e1 <= max; ++e1) {
                const int x0 = bits == 5 ? expand5(e0) : expand6(e0), x1 = bits == 5 ? expand5(e1) : expand6(e1);
                const int d = std::abs((2 * x0 + x1 + 1) / 3 - v) * 1024 + std::abs(x0 - x1);  // prefer close pairs
                if (d < best) best = d, table.pair[v][0] = uint8_t(e0), table.pair[v][1] = uint8_t(e1);
            }
    }
    return table;
}

// Cluster fit (four-colour mode): with the texels ordered along the principal axis, every split of that order
// into four runs (969 of them) assigns the runs to the palette's four entries; the least-squares endpoints of each
// assignment come in closed form from running sums, and the assignment of least squared error wins. Unquantised
// endpoints in [0, 255]; false when no split has a solvable system (a flat block).
bool cluster_fit(const uint8_t rgba[kBlockTexels * 4], const float axis[3], float a[3], float b[3]) {
    int order[kBlockTexels];
    float key[kBlockTexels];
    for (int t = 0; t < kBlockTexels; ++t) {
        order[t] = t;
        key[t] = rgba[4 * t] * axis[0] + rgba[4 * t + 1] * axis[1] + rgba[4 * t + 2] * axis[2];
    }
    std::sort(order, order + kBlockTexels, [&](int x, int y) { return key[x] < key[y]; });
    float prefix[kBlockTexels + 1][3] = {};  // sums of the first n ordered texels
    for (int n = 0; n < kBlockTexels; ++n)
        for (int k = 0; k < 3; ++k) prefix[n + 1][k] = prefix[n][k] + rgba[4 * order[n] + k];
    float best = 1e30f;
    bool found = false;
    for (int i = 0; i <= kBlockTexels; ++i)
        for (int j = i; j <= kBlockTexels; ++j)
            for (int k = j; k <= kBlockTexels; ++k) {
                const float n1 = float(j - i), n2 = float(k - j);
                const float aa = float(i) + (4.0f * n1 + n2) / 9.0f;
                const float bb = float(kBlockTexels - k) + (n1 + 4.0f * n2) / 9.0f;
                const float ab = 2.0f * (n1 + n2) / 9.0f;
                const float det = aa * bb - ab * ab;
                if (det < 1e-6f) continue;
                float ea[3], eb[3], error = 0;
                for (int c = 0; c < 3; ++c) {
                    const float s0 = prefix[i][c], s1 = prefix[j][c] - prefix[i][c], s2 = prefix[k][c] - prefix[j][c],
                                s3 = prefix[kBlockTexels][c] - prefix[k][c];
                    const float ax = s0 + (2.0f * s1 + s2) / 3.0f, bx = s3 + (s1 + 2.0f * s2) / 3.0f;
                    ea[c] = (ax * bb - bx * ab) / det;
                    eb[c] = (bx * aa - ax * ab) / det;
                    // The squared error less the constant sum of x^2.
                    error += ea[c] * ea[c] * aa + eb[c] * eb[c] * bb + 2.0f * ab * ea[c] * eb[c] - 2.0f * (ea[c] * ax + eb[c] * bx);
                }
                if (error < best) {
                    best = error, found = true;
                    for (int c = 0; c < 3; ++c) a[c] = std::clamp(ea[c], 0.0f, 255.0f), b[c] = std::clamp(eb[c], 0.0f, 255.0f);
                }
            }
    return found;
}

}  // namespace

void encode_bc1_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[8]) {
    static const SingleColourTable table5 = make_single_colour_table(5);
    static const SingleColourTable table6 = make_single_colour_table(6);

    float mean[3] = {};
    for (int t = 0; t < kBlockTexels; ++t)
        for (int k = 0; k < 3; ++k) mean[k] += rgba[4 * t + k] / 16.0f;
    float cov[6] = {};  // rr rg rb gg gb bb
    for (int t = 0; t < kBlockTexels; ++t) {
        const float d[3] = {rgba[4 * t] - mean[0], rgba[4 * t + 1] - mean[1], rgba[4 * t + 2] - mean[2]};
        cov[0] += d[0] * d[0], cov[1] += d[0] * d[1], cov[2] += d[0] * d[2];
        cov[3] += d[1] * d[1], cov[4] += d[1] * d[2], cov[5] += d[2] * d[2];
    }
    // Principal axis by power iteration (a few steps suffice for 16 points).
    float axis[3] = {1.0f, 1.0f, 1.0f};
    for (int it = 0; it < 8; ++it) {
        const float n[3] = {cov[0] * axis[0] + cov[1] * axis[1] + cov[2] * axis[2],
                            cov[1] * axis[0] + cov[3] * axis[1] + cov[4] * axis[2],
                            cov[2] * axis[0] + cov[4] * axis[1] + cov[5] * axis[2]};
        const float len = std::max({std::fabs(n[0]), std::fabs(n[1]), std::fabs(n[2])});
        if (len < 1e-6f) break;
        for (int k = 0; k < 3; ++k) axis[k] = n[k] / len;
    }
    float lo = 1e30f, hi = -1e30f;
    for (int t = 0; t < kBlockTexels; ++t) {
        const float p = (rgba[4 * t] - mean[0]) * axis[0] + (rgba[4 * t + 1] - mean[1]) * axis[1] +
                        (rgba[4 * t + 2] - mean[2]) * axis[2];
        lo = std::min(lo, p), hi = std::max(hi, p);
    }
    const float norm2 = axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2];
    float a[3], b[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = std::clamp(mean[k] + axis[k] * lo / norm2, 0.0f, 255.0f);
        b[k] = std::clamp(mean[k] + axis[k] * hi / norm2, 0.0f, 255.0f);
    }

    Bc1Candidate best;
    Endpoints current = quantize(a, b);
    evaluate(rgba, current, false, best);
    float ca[3], cb[3];
    if (best.error > 0 && cluster_fit(rgba, axis, ca, cb)) {
        const Endpoints clustered = quantize(ca, cb);
        if (evaluate(rgba, clustered, false, best)) current = clustered;
    }
    // The mean colour from the single-colour tables, every texel on the 1/3 interpolant.
    const int m[3] = {int(std::lround(mean[0])), int(std::lround(mean[1])), int(std::lround(mean[2]))};
    const Endpoints flat = {table5.pair[m[0]][0], table6.pair[m[1]][0], table5.pair[m[2]][0],
                            table5.pair[m[0]][1], table6.pair[m[1]][1], table5.pair[m[2]][1]};
    if (evaluate(rgba, flat, false, best)) current = flat;

    for (int pass = 0; pass < 2 && best.error > 0; ++pass) {
        Endpoints fit;
        if (refit(rgba, best, fit) && evaluate(rgba, fit, false, best)) current = fit;
    }
    // Walk each component one step while it helps.
    for (int round = 0; round < 4 && best.error > 0; ++round) {
        bool improved = false;
        for (int k = 0; k < 6; ++k)
            for (int step : {-1, 1}) {
                Endpoints e = current;
                e[k] += step;
                if (e[k] < 0 || e[k] > kComponentMax[k]) continue;
                if (evaluate(rgba, e, false, best)) current = e, improved = true;
            }
        if (!improved) break;
    }
    // The three-colour mode: its midpoint can beat four colours on blocks of two clusters.
    if (best.error > 0) {
        Bc1Candidate three;
        if (evaluate(rgba, current, true, three)) {
            Endpoints fit;
            if (refit(rgba, three, fit)) evaluate(rgba, fit, true, three);
            if (three.error < best.error) best = three;
        }
    }

    block[0] = uint8_t(best.p0), block[1] = uint8_t(best.p0 >> 8);
    block[2] = uint8_t(best.p1), block[3] = uint8_t(best.p1 >> 8);
    uint32_t bits = 0;
    for (int t = 0; t < kBlockTexels; ++t) bits |= uint32_t(best.indices[t]) << (2 * t);
    for (int i = 0; i < 4; ++i) block[4 + i] = uint8_t(bits >> (8 * i));
}

void decode_bc1_block(const uint8_t block[8], uint8_t rgba[kBlockTexels * 4]) {
    int palette[4][4];
    bc1_palette(block[0] | (block[1] << 8), block[2] | (block[3] << 8), palette);
    const uint32_t bits = uint32_t(block[4]) | uint32_t(block[5]) << 8 | uint32_t(block[6]) << 16 |
                          uint32_t(block[7]) << 24;
    for (int t = 0; t < kBlockTexels; ++t)
        for (int k = 0; k < 4; ++k) rgba[4 * t + k] = uint8_t(palette[(bits >> (2 * t)) & 3][k]);
}

}  // namespace nmc::texture
