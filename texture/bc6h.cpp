// BC6H (BPTC float) blocks, as the Khronos Data Format Specification ("BC6H") and the Direct3D 11 BC6H format
// define them: the decoder reads all fourteen modes, signed or unsigned; the encoder writes UF16 in all of them.
// It fits endpoints to the texels' half-float bit patterns, which grow about as the logarithm of the value, so
// error is spent evenly across the dynamic range, as a viewer sees it after exposure: a principal axis through
// each region, then least squares on the chosen indices, in every mode (the two-region ones on the partitions
// whose regions a line fits best), keeping the mode and endpoints of least squared error in those bit patterns.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/number_formats.h"
#include "texture/block_codecs.h"
#include "texture/bptc_tables.h"

namespace nmc::texture {
namespace {

// Endpoint components, as the specification names them: endpoint e (0, 1: region 0; 2, 3: region 1) and
// channel c at e * 3 + c.
enum Field : uint8_t { R0, G0, B0, R1, G1, B1, R2, G2, B2, R3, G3, B3, kEndOfLayout };

// One element of a mode's block description, v^{a..b}: the next |a - b| + 1 block bits go to bits b, b +- 1, ...,
// a of field v (upward when a >= b, else downward).
struct Step {
    Field field = kEndOfLayout;
    uint8_t a = 0;
    uint8_t b = 0;
};

struct Mode {
    uint8_t number;     // the mode bits' value: 2 bits below 2, else 5
    int regions;        // 1 or 2
    bool transformed;   // endpoints after the first stored as deltas from it
    int endpoint_bits;  // of the first endpoint
    int delta_bits[3];  // of the other endpoints per channel (endpoint_bits where not transformed)
    Step layout[23];    // ends at the first kEndOfLayout
};

// Table "Block descriptions for BC6H block modes" of the specification, after the mode bits (and before the
// five partition bits of two-region modes, bits 77..81).
// clang-format off
constexpr Mode kModes[14] = {
    {0, 2, true, 10, {5, 5, 5}, {{G2, 4, 4}, {B2, 4, 4}, {B3, 4, 4}, {R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 4, 0},
        {G3, 4, 4}, {G2, 3, 0}, {G1, 4, 0}, {B3, 0, 0}, {G3, 3, 0}, {B1, 4, 0}, {B3, 1, 1}, {B2, 3, 0}, {R2, 4, 0},
        {B3, 2, 2}, {R3, 4, 0}, {B3, 3, 3}}},
    {1, 2, true, 7, {6, 6, 6}, {{G2, 5, 5}, {G3, 4, 4}, {G3, 5, 5}, {R0, 6, 0}, {B3, 0, 0}, {B3, 1, 1}, {B2, 4, 4},
        {G0, 6, 0}, {B2, 5, 5}, {B3, 2, 2}, {G2, 4, 4}, {B0, 6, 0}, {B3, 3, 3}, {B3, 5, 5}, {B3, 4, 4}, {R1, 5, 0},
        {G2, 3, 0}, {G1, 5, 0}, {G3, 3, 0}, {B1, 5, 0}, {B2, 3, 0}, {R2, 5, 0}, {R3, 5, 0}}},
    {2, 2, true, 11, {5, 4, 4}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 4, 0}, {R0, 10, 10}, {G2, 3, 0},
        {G1, 3, 0}, {G0, 10, 10}, {B3, 0, 0}, {G3, 3, 0}, {B1, 3, 0}, {B0, 10, 10}, {B3, 1, 1}, {B2, 3, 0},
        {R2, 4, 0}, {B3, 2, 2}, {R3, 4, 0}, {B3, 3, 3}}},
    {6, 2, true, 11, {4, 5, 4}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 3, 0}, {R0, 10, 10}, {G3, 4, 4},
        {G2, 3, 0}, {G1, 4, 0}, {G0, 10, 10}, {G3, 3, 0}, {B1, 3, 0}, {B0, 10, 10}, {B3, 1, 1}, {B2, 3, 0},
        {R2, 3, 0}, {B3, 0, 0}, {B3, 2, 2}, {R3, 3, 0}, {G2, 4, 4}, {B3, 3, 3}}},
    {10, 2, true, 11, {4, 4, 5}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 3, 0}, {R0, 10, 10}, {B2, 4, 4},
        {G2, 3, 0}, {G1, 3, 0}, {G0, 10, 10}, {B3, 0, 0}, {G3, 3, 0}, {B1, 4, 0}, {B0, 10, 10}, {B2, 3, 0},
        {R2, 3, 0}, {B3, 1, 1}, {B3, 2, 2}, {R3, 3, 0}, {B3, 4, 4}, {B3, 3, 3}}},
    {14, 2, true, 9, {5, 5, 5}, {{R0, 8, 0}, {B2, 4, 4}, {G0, 8, 0}, {G2, 4, 4}, {B0, 8, 0}, {B3, 4, 4}, {R1, 4, 0},
        {G3, 4, 4}, {G2, 3, 0}, {G1, 4, 0}, {B3, 0, 0}, {G3, 3, 0}, {B1, 4, 0}, {B3, 1, 1}, {B2, 3, 0}, {R2, 4, 0},
        {B3, 2, 2}, {R3, 4, 0}, {B3, 3, 3}}},
    {18, 2, true, 8, {6, 5, 5}, {{R0, 7, 0}, {G3, 4, 4}, {B2, 4, 4}, {G0, 7, 0}, {B3, 2, 2}, {G2, 4, 4}, {B0, 7, 0},
        {B3, 3, 3}, {B3, 4, 4}, {R1, 5, 0}, {G2, 3, 0}, {G1, 4, 0}, {B3, 0, 0}, {G3, 3, 0}, {B1, 4, 0}, {B3, 1, 1},
        {B2, 3, 0}, {R2, 5, 0}, {R3, 5, 0}}},
    {22, 2, true, 8, {5, 6, 5}, {{R0, 7, 0}, {B3, 0, 0}, {B2, 4, 4}, {G0, 7, 0}, {G2, 5, 5}, {G2, 4, 4}, {B0, 7, 0},
        {G3, 5, 5}, {B3, 4, 4}, {R1, 4, 0}, {G3, 4, 4}, {G2, 3, 0}, {G1, 5, 0}, {G3, 3, 0}, {B1, 4, 0}, {B3, 1, 1},
        {B2, 3, 0}, {R2, 4, 0}, {B3, 2, 2}, {R3, 4, 0}, {B3, 3, 3}}},
    {26, 2, true, 8, {5, 5, 6}, {{R0, 7, 0}, {B3, 1, 1}, {B2, 4, 4}, {G0, 7, 0}, {B2, 5, 5}, {G2, 4, 4}, {B0, 7, 0},
        {B3, 5, 5}, {B3, 4, 4}, {R1, 4, 0}, {G3, 4, 4}, {G2, 3, 0}, {G1, 4, 0}, {B3, 0, 0}, {G3, 3, 0}, {B1, 5, 0},
        {B2, 3, 0}, {R2, 4, 0}, {B3, 2, 2}, {R3, 4, 0}, {B3, 3, 3}}},
    {30, 2, false, 6, {6, 6, 6}, {{R0, 5, 0}, {G3, 4, 4}, {B3, 0, 0}, {B3, 1, 1}, {B2, 4, 4}, {G0, 5, 0}, {G2, 5, 5},
        {B2, 5, 5}, {B3, 2, 2}, {G2, 4, 4}, {B0, 5, 0}, {G3, 5, 5}, {B3, 3, 3}, {B3, 5, 5}, {B3, 4, 4}, {R1, 5, 0},
        {G2, 3, 0}, {G1, 5, 0}, {G3, 3, 0}, {B1, 5, 0}, {B2, 3, 0}, {R2, 5, 0}, {R3, 5, 0}}},
    {3, 1, false, 10, {10, 10, 10}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 9, 0}, {G1, 9, 0}, {B1, 9, 0}}},
    {7, 1, true, 11, {9, 9, 9}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 8, 0}, {R0, 10, 10}, {G1, 8, 0},
        {G0, 10, 10}, {B1, 8, 0}, {B0, 10, 10}}},
    {11, 1, true, 12, {8, 8, 8}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 7, 0}, {R0, 10, 11}, {G1, 7, 0},
        {G0, 10, 11}, {B1, 7, 0}, {B0, 10, 11}}},
    {15, 1, true, 16, {4, 4, 4}, {{R0, 9, 0}, {G0, 9, 0}, {B0, 9, 0}, {R1, 3, 0}, {R0, 10, 15}, {G1, 3, 0},
        {G0, 10, 15}, {B1, 3, 0}, {B0, 10, 15}}},
};
// clang-format on

constexpr int mode_bit_count(const Mode& m) {
    return m.number < 2 ? 2 : 5;
}
constexpr int kPartitionBitsAt = 77;
constexpr int kOneRegionIndicesAt = 65;
constexpr int kTwoRegionIndicesAt = 82;

// Each layout fills the block up to the partition bits (two regions) or the indices (one region).
constexpr bool layouts_complete() {
    for (const Mode& m : kModes) {
        int bits = mode_bit_count(m);
        for (const Step& s : m.layout)
            if (s.field != kEndOfLayout) bits += (s.a >= s.b ? s.a - s.b : s.b - s.a) + 1;
        if (bits != (m.regions == 2 ? kPartitionBitsAt : kOneRegionIndicesAt)) return false;
    }
    return true;
}
static_assert(layouts_complete(), "a BC6H mode's layout does not fill its endpoint bits");

uint32_t get_bit(const uint8_t block[16], int pos) {
    return (block[pos >> 3] >> (pos & 7)) & 1u;
}
void set_bit(uint8_t block[16], int pos, uint32_t bit) {
    if (bit) block[pos >> 3] = uint8_t(block[pos >> 3] | (1 << (pos & 7)));
}

// Calls visit(field, bit of field) for each block bit of the mode's endpoints, in block order from the first bit
// after the mode bits: the one walk both reading and writing follow.
template <typename Visit>
void walk_layout(const Mode& m, Visit&& visit) {
    const auto walk = [&](const Step& s) {
        const int n = std::abs(int(s.a) - int(s.b)) + 1, direction = s.a >= s.b ? 1 : -1;
        for (int i = 0; i < n; ++i) visit(s.field, int(s.b) + direction * i);
    };
    for (const Step& s : m.layout)
        if (s.field != kEndOfLayout) walk(s);
}

const Mode* find_mode(uint32_t number) {
    for (const Mode& m : kModes)
        if (m.number == number) return &m;
    return nullptr;  // 19, 23, 27, 31: reserved
}

int sign_extend(int v, int bits) {
    return (v ^ (1 << (bits - 1))) - (1 << (bits - 1));
}

// "Unquantization of color endpoints": a component of `bits` to the 16-bit interpolation domain.
int unquantize(int comp, int bits, bool is_signed) {
    if (!is_signed) {
        if (bits >= 15 || comp == 0) return comp;
        if (comp == (1 << bits) - 1) return 0xFFFF;
        return ((comp << 16) + 0x8000) >> bits;
    }
    if (bits >= 16) return comp;
    const bool negative = comp < 0;
    const int magnitude = negative ? -comp : comp;
    int u;
    if (magnitude == 0)
        u = 0;
    else if (magnitude >= (1 << (bits - 1)) - 1)
        u = 0x7FFF;
    else
        u = ((magnitude << 15) + 0x4000) >> (bits - 1);
    return negative ? -u : u;
}

// The interpolated value's half-float bits ("finish unquantize"): scaled by 31/64 (unsigned) or 31/32 (signed),
// which maps the largest endpoint to 0x7BFF (65504) and never to infinity.
uint16_t finish_unquantize(int c, bool is_signed) {
    if (!is_signed) return uint16_t((c * 31) >> 6);
    return c < 0 ? uint16_t((((-c) * 31) >> 5) | 0x8000) : uint16_t((c * 31) >> 5);
}

int index_bits(const Mode& m) {
    return m.regions == 1 ? 4 : 3;
}
const int* weights(const Mode& m) {
    return m.regions == 1 ? bptc::kWeights4 : bptc::kWeights3;
}
int region_of(const Mode& m, int partition, int texel) {
    return m.regions == 1 ? 0 : (bptc::kPartitions2[partition] >> texel) & 1;
}
bool is_anchor(const Mode& m, int partition, int texel) {
    return texel == 0 || (m.regions == 2 && texel == bptc::kAnchor2[partition]);
}

// ---- Encoder ----

constexpr int kUnsignedMax = 0xFFFF;  // the interpolation domain of UF16
constexpr int kPartitions = 32;       // BC6H uses the first 32 two-subset partitions
constexpr int kPartitionsTried = 3;   // the best-ranked partitions each two-region mode is fitted on
// A one-region fit whose squared error (in half-float steps, over the block's 48 values) is at most this, about
// 2 steps per value, ends the search.
constexpr int64_t kGoodEnoughError = kBlockTexels * 3 * 4;

// The texels' targets in the interpolation domain and their half-float bit patterns, the encoder's error unit.
struct Texels {
    uint16_t halves[kBlockTexels * 3];
    float targets[kBlockTexels][3];
};

// Stored endpoint components of `bits` nearest an interpolation-domain value `u`.
int quantize(float u, int bits) {
    const int top = (1 << bits) - 1;
    const int guess = std::clamp(int(u * float(1 << bits) / 65536.0f), 0, top);
    int best = guess;
    for (int c = std::max(guess - 1, 0); c <= std::min(guess + 1, top); ++c)
        if (std::abs(float(unquantize(c, bits, false)) - u) < std::abs(float(unquantize(best, bits, false)) - u))
            best = c;
    return best;
}

struct Candidate {
    const Mode* mode = nullptr;
    int partition = 0;
    int stored[4][3] = {};  // endpoints (region r: 2r, 2r + 1) at endpoint_bits, before the delta transform
    uint8_t indices[kBlockTexels] = {};
    int64_t error = std::numeric_limits<int64_t>::max();
};

int endpoint_count(const Mode& m) { return 2 * m.regions; }

bool deltas_fit(const Mode& m, const int stored[4][3]) {
    if (!m.transformed) return true;
    for (int k = 1; k < endpoint_count(m); ++k)
        for (int c = 0; c < 3; ++c) {
            const int d = stored[k][c] - stored[0][c], reach = 1 << (m.delta_bits[c] - 1);
            if (d < -reach || d >= reach) return false;
        }
    return true;
}

// The stored endpoints nearest `ends` (interpolation domain) that mode `m` can hold: the others within reach of
// the first's delta bits.
void quantize_endpoints(const Mode& m, const float ends[4][3], int stored[4][3]) {
    for (int c = 0; c < 3; ++c) {
        stored[0][c] = quantize(ends[0][c], m.endpoint_bits);
        for (int k = 1; k < endpoint_count(m); ++k) {
            stored[k][c] = quantize(ends[k][c], m.endpoint_bits);
            if (m.transformed) {
                const int reach = 1 << (m.delta_bits[c] - 1);
                stored[k][c] = std::clamp(stored[k][c], std::max(stored[0][c] - reach, 0),
                                          std::min(stored[0][c] + reach - 1, (1 << m.endpoint_bits) - 1));
            }
        }
    }
}

int64_t texel_error(const int palette_entry[3], const Texels& x, int t) {
    int64_t e = 0;
    for (int ch = 0; ch < 3; ++ch) {
        const int64_t d = int64_t(palette_entry[ch]) - int64_t(x.halves[t * 3 + ch]);
        e += d * d;
    }
    return e;
}

// Chooses each texel's index for the candidate's endpoints (nearest palette entry in half-float bits) and the
// error. Each region's anchor texel must take an index in the palette's lower half: when its nearest is not, the
// region's endpoints swap (its palette reverses exactly, the weights being symmetric) if the deltas still fit,
// else the anchor takes its best index in the lower half.
void choose_indices(const Texels& x, Candidate& c) {
    const Mode& m = *c.mode;
    const int entries = 1 << index_bits(m);
    int palette[2][16][3];
    const auto fill_palette = [&](int r) {
        for (int i = 0; i < entries; ++i)
            for (int ch = 0; ch < 3; ++ch)
                palette[r][i][ch] = finish_unquantize(
                    bptc::interpolate(unquantize(c.stored[2 * r][ch], m.endpoint_bits, false),
                                      unquantize(c.stored[2 * r + 1][ch], m.endpoint_bits, false), weights(m)[i]),
                    false);
    };
    const auto nearest = [&](int r, int t, int limit) {
        int best = 0;
        int64_t best_error = texel_error(palette[r][0], x, t);
        for (int i = 1; i < limit; ++i) {
            const int64_t e = texel_error(palette[r][i], x, t);
            if (e < best_error) best = i, best_error = e;
        }
        return best;
    };
    bool anchor_limited[2] = {false, false};
    for (int r = 0; r < m.regions; ++r) {
        fill_palette(r);
        const int anchor = r == 0 ? 0 : bptc::kAnchor2[c.partition];
        if (nearest(r, anchor, entries) < entries / 2) continue;
        int swapped[4][3];
        std::memcpy(swapped, c.stored, sizeof swapped);
        std::swap(swapped[2 * r], swapped[2 * r + 1]);
        if (deltas_fit(m, swapped)) {
            std::memcpy(c.stored, swapped, sizeof swapped);
            fill_palette(r);
        } else {
            anchor_limited[r] = true;
        }
    }
    c.error = 0;
    for (int t = 0; t < kBlockTexels; ++t) {
        const int r = region_of(m, c.partition, t);
        const bool limited = anchor_limited[r] && is_anchor(m, c.partition, t);
        const int i = nearest(r, t, limited ? entries / 2 : entries);
        c.indices[t] = uint8_t(i);
        c.error += texel_error(palette[r][i], x, t);
    }
}

// Least-squares endpoints (interpolation domain) of region r for the candidate's indices; false when its indices
// are all one.
bool refit(const Texels& x, const Candidate& c, int r, float a[3], float b[3]) {
    const Mode& m = *c.mode;
    double aa = 0, ab = 0, bb = 0, ax[3] = {}, bx[3] = {};
    for (int t = 0; t < kBlockTexels; ++t) {
        if (region_of(m, c.partition, t) != r) continue;
        const double w = weights(m)[c.indices[t]] / 64.0, v = 1.0 - w;
        aa += v * v, ab += v * w, bb += w * w;
        for (int ch = 0; ch < 3; ++ch) ax[ch] += v * x.targets[t][ch], bx[ch] += w * x.targets[t][ch];
    }
    const double det = aa * bb - ab * ab;
    if (std::abs(det) < 1e-9) return false;
    for (int ch = 0; ch < 3; ++ch) {
        a[ch] = float(std::clamp((ax[ch] * bb - bx[ch] * ab) / det, 0.0, double(kUnsignedMax)));
        b[ch] = float(std::clamp((bx[ch] * aa - ax[ch] * ab) / det, 0.0, double(kUnsignedMax)));
    }
    return true;
}

// The extent along the principal axis (power iteration on the covariance) of the texels `in` selects, in the
// interpolation domain; returns the squared distance of those texels from that axis, how badly a line fits them.
double principal_endpoints(const Texels& x, const bool in[kBlockTexels], float a[3], float b[3]) {
    double mean[3] = {};
    int n = 0;
    for (int t = 0; t < kBlockTexels; ++t)
        if (in[t]) {
            ++n;
            for (int ch = 0; ch < 3; ++ch) mean[ch] += x.targets[t][ch];
        }
    for (double& v : mean) v /= std::max(n, 1);
    double cov[3][3] = {}, total = 0;
    for (int t = 0; t < kBlockTexels; ++t)
        if (in[t])
            for (int i = 0; i < 3; ++i) {
                total += (x.targets[t][i] - mean[i]) * (x.targets[t][i] - mean[i]);
                for (int j = 0; j < 3; ++j) cov[i][j] += (x.targets[t][i] - mean[i]) * (x.targets[t][j] - mean[j]);
            }
    double axis[3] = {1, 1, 1};
    for (int iteration = 0; iteration < 8; ++iteration) {
        double next[3] = {};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) next[i] += cov[i][j] * axis[j];
        const double norm = std::sqrt(next[0] * next[0] + next[1] * next[1] + next[2] * next[2]);
        if (norm < 1e-12) break;
        for (int i = 0; i < 3; ++i) axis[i] = next[i] / norm;
    }
    double low = 0, high = 0, along = 0;
    for (int t = 0; t < kBlockTexels; ++t) {
        if (!in[t]) continue;
        double p = 0;
        for (int ch = 0; ch < 3; ++ch) p += (x.targets[t][ch] - mean[ch]) * axis[ch];
        low = std::min(low, p), high = std::max(high, p), along += p * p;
    }
    for (int ch = 0; ch < 3; ++ch) {
        a[ch] = float(std::clamp(mean[ch] + low * axis[ch], 0.0, double(kUnsignedMax)));
        b[ch] = float(std::clamp(mean[ch] + high * axis[ch], 0.0, double(kUnsignedMax)));
    }
    return std::max(total - along, 0.0);
}

// Principal-axis endpoints of each region of `partition` (regions 1 or 2); the sum of the regions' line-fit errors.
double initial_endpoints(const Texels& x, int regions, int partition, float ends[4][3]) {
    double misfit = 0;
    for (int r = 0; r < regions; ++r) {
        bool in[kBlockTexels];
        for (int t = 0; t < kBlockTexels; ++t)
            in[t] = (regions == 1 ? 0 : (bptc::kPartitions2[partition] >> t) & 1) == r;
        misfit += principal_endpoints(x, in, ends[2 * r], ends[2 * r + 1]);
    }
    return misfit;
}

// The best fit of mode m on `partition` from endpoints `ends`: quantized, indices chosen, refitted by least
// squares, a few rounds.
Candidate fit(const Texels& x, const Mode& m, int partition, float ends[4][3]) {
    Candidate best;
    for (int round = 0; round < 3; ++round) {
        Candidate c;
        c.mode = &m;
        c.partition = partition;
        quantize_endpoints(m, ends, c.stored);
        choose_indices(x, c);
        if (c.error < best.error) best = c;
        bool refitted = false;
        for (int r = 0; r < m.regions; ++r) refitted |= refit(x, best, r, ends[2 * r], ends[2 * r + 1]);
        if (!refitted) break;
    }
    return best;
}

void pack(const Candidate& c, uint8_t block[16]) {
    const Mode& m = *c.mode;
    std::memset(block, 0, 16);
    for (int i = 0; i < mode_bit_count(m); ++i) set_bit(block, i, (m.number >> i) & 1u);
    int fields[12] = {};
    for (int ch = 0; ch < 3; ++ch) {
        fields[ch] = c.stored[0][ch];
        for (int k = 1; k < endpoint_count(m); ++k) {
            const int d = m.transformed ? c.stored[k][ch] - c.stored[0][ch] : c.stored[k][ch];
            fields[3 * k + ch] = d & ((1 << m.delta_bits[ch]) - 1);
        }
    }
    int pos = mode_bit_count(m);
    walk_layout(m, [&](Field f, int bit) { set_bit(block, pos++, uint32_t(fields[f] >> bit) & 1u); });
    if (m.regions == 2)
        for (int i = 0; i < 5; ++i) set_bit(block, kPartitionBitsAt + i, uint32_t(c.partition >> i) & 1u);
    pos = m.regions == 1 ? kOneRegionIndicesAt : kTwoRegionIndicesAt;
    for (int t = 0; t < kBlockTexels; ++t)
        for (int i = 0; i < index_bits(m) - (is_anchor(m, c.partition, t) ? 1 : 0); ++i)
            set_bit(block, pos++, (c.indices[t] >> i) & 1u);
}

}  // namespace

bool decode_bc6h_block(const uint8_t block[16], uint16_t rgb[kBlockTexels * 3], Bc6hType type) {
    const bool is_signed = type == Bc6hType::sf16;
    uint32_t number = get_bit(block, 0) | get_bit(block, 1) << 1;
    if (number >= 2)
        for (int i = 2; i < 5; ++i) number |= get_bit(block, i) << i;
    const Mode* found = find_mode(number);
    if (!found) {
        std::fill(rgb, rgb + kBlockTexels * 3, uint16_t(0));
        return false;
    }
    const Mode& m = *found;
    int e[12] = {};
    int pos = mode_bit_count(m);
    walk_layout(m, [&](Field f, int bit) { e[f] |= int(get_bit(block, pos++)) << bit; });
    int partition = 0;
    for (int i = 0; i < 5 && m.regions == 2; ++i) partition |= int(get_bit(block, kPartitionBitsAt + i)) << i;

    // Sign extension, then the inverse transform: the other endpoints are deltas from the first, wrapped to
    // endpoint_bits.
    const int endpoints = 2 * m.regions;
    for (int ch = 0; ch < 3; ++ch) {
        if (is_signed) e[ch] = sign_extend(e[ch], m.endpoint_bits);
        for (int k = 1; k < endpoints; ++k) {
            int& v = e[k * 3 + ch];
            if (is_signed || m.transformed) v = sign_extend(v, m.delta_bits[ch]);
            if (m.transformed) {
                v = (e[ch] + v) & ((1 << m.endpoint_bits) - 1);
                if (is_signed) v = sign_extend(v, m.endpoint_bits);
            }
        }
    }
    for (int k = 0; k < endpoints * 3; ++k) e[k] = unquantize(e[k], m.endpoint_bits, is_signed);

    pos = m.regions == 1 ? kOneRegionIndicesAt : kTwoRegionIndicesAt;
    for (int t = 0; t < kBlockTexels; ++t) {
        int index = 0;
        const int bits = index_bits(m) - (is_anchor(m, partition, t) ? 1 : 0);
        for (int i = 0; i < bits; ++i) index |= int(get_bit(block, pos++)) << i;
        const int region = region_of(m, partition, t), w = weights(m)[index];
        for (int ch = 0; ch < 3; ++ch)
            rgb[t * 3 + ch] =
                finish_unquantize(bptc::interpolate(e[region * 6 + ch], e[region * 6 + 3 + ch], w), is_signed);
    }
    return true;
}

void encode_bc6h_block(const float rgb[kBlockTexels * 3], uint8_t block[16]) {
    Texels x;
    for (int i = 0; i < kBlockTexels * 3; ++i) {
        const float v = rgb[i] > 0 ? std::min(rgb[i], kFp16Max) : 0.0f;  // NaN and negatives to 0
        x.halves[i] = float_to_fp16(v);
        // The middle of the interpolated values finish_unquantize() maps to this half.
        x.targets[i / 3][i % 3] = (float(x.halves[i]) + 0.5f) * 64.0f / 31.0f;
    }
    // The one-region modes first: a block they fit to within a couple of half-float steps per channel needs no
    // partition search (most blocks of smooth maps), which keeps the encoder several times faster.
    Candidate best;
    float ends[4][3];
    initial_endpoints(x, 1, 0, ends);
    for (const Mode& m : kModes)
        if (m.regions == 1) {
            float start[4][3];
            std::memcpy(start, ends, sizeof start);
            const Candidate c = fit(x, m, 0, start);
            if (c.error < best.error) best = c;
        }
    if (best.error <= kGoodEnoughError) {
        pack(best, block);
        return;
    }
    // Two-region partitions ranked by how well a line through each region fits its texels.
    float partition_ends[kPartitions][4][3];
    std::pair<double, int> ranked[kPartitions];
    for (int p = 0; p < kPartitions; ++p) ranked[p] = {initial_endpoints(x, 2, p, partition_ends[p]), p};
    std::partial_sort(ranked, ranked + kPartitionsTried, ranked + kPartitions);
    for (const Mode& m : kModes)
        for (int i = 0; i < kPartitionsTried && m.regions == 2; ++i) {
            const int p = ranked[i].second;
            float start[4][3];
            std::memcpy(start, partition_ends[p], sizeof start);
            const Candidate c = fit(x, m, p, start);
            if (c.error < best.error) best = c;
        }
    pack(best, block);
}

}  // namespace nmc::texture
