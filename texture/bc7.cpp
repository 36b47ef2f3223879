// BC7 (BPTC UNORM) blocks of all eight modes, as the Khronos Data Format Specification ("BC7") and
// ARB_texture_compression_bptc define them. The encoder ranks the partitions of the two- and three-subset
// modes by how well a line through each subset fits its texels, fits endpoints (principal axis, then least
// squares on the chosen indices, every p-bit choice) for each mode, rotation and index selection and the
// best-ranked partitions, and polishes the best few candidates by walking their endpoints a step at a time.
// A block of one colour is solved exactly in mode 6 before any of that.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>

#include "texture/block_codecs.h"
#include "texture/bptc_tables.h"

namespace nmc::texture {
namespace {

// Table.M of the specification: the layout of each mode.
struct ModeInfo {
    int subsets;
    int partition_bits;
    int rotation_bits;
    int index_selection_bits;
    int color_bits;
    int alpha_bits;       // 0: alpha decodes as 255
    bool endpoint_pbits;  // one p-bit per endpoint
    bool shared_pbits;    // one p-bit per subset, below both its endpoints
    int index_bits;
    int index2_bits;  // secondary indices (modes 4 and 5)
};
constexpr ModeInfo kModes[8] = {
    {3, 4, 0, 0, 4, 0, true, false, 3, 0},  {2, 6, 0, 0, 6, 0, false, true, 3, 0},
    {3, 6, 0, 0, 5, 0, false, false, 2, 0}, {2, 6, 0, 0, 7, 0, true, false, 2, 0},
    {1, 0, 2, 1, 5, 6, false, false, 2, 3}, {1, 0, 2, 0, 7, 8, false, false, 2, 2},
    {1, 0, 0, 0, 7, 7, true, false, 4, 0},  {2, 6, 0, 0, 5, 5, true, false, 2, 0},
};

using bptc::kAnchor2;
using bptc::kPartitions2;
using bptc::kWeights3;
using bptc::kWeights4;
using bptc::interpolate;

constexpr int kWeights2[4] = {0, 21, 43, 64};
const int* weights(int index_bits) {
    return index_bits == 2 ? kWeights2 : index_bits == 3 ? kWeights3 : kWeights4;
}

// Table.P3 (bits 2t and 2t+1: texel t's subset); Table.P2 is in texture/bptc_tables.h.
constexpr uint32_t kPartitions3[64] = {
    0xaa685050, 0x6a5a5040, 0x5a5a4200, 0x5450a0a8, 0xa5a50000, 0xa0a05050, 0x5555a0a0, 0x5a5a5050,
    0xaa550000, 0xaa555500, 0xaaaa5500, 0x90909090, 0x94949494, 0xa4a4a4a4, 0xa9a59450, 0x2a0a4250,
    0xa5945040, 0x0a425054, 0xa5a5a500, 0x55a0a0a0, 0xa8a85454, 0x6a6a4040, 0xa4a45000, 0x1a1a0500,
    0x0050a4a4, 0xaaa59090, 0x14696914, 0x69691400, 0xa08585a0, 0xaa821414, 0x50a4a450, 0x6a5a0200,
    0xa9a58000, 0x5090a0a8, 0xa8a09050, 0x24242424, 0x00aa5500, 0x24924924, 0x24499224, 0x50a50a50,
    0x500aa550, 0xaaaa4444, 0x66660000, 0xa5a0a5a0, 0x50a050a0, 0x69286928, 0x44aaaa44, 0x66666600,
    0xaa444444, 0x54a854a8, 0x95809580, 0x96969600, 0xa85454a8, 0x80959580, 0xaa141414, 0x96960000,
    0xaaaa1414, 0xa05050a0, 0xa0a5a5a0, 0x96000000, 0x40804080, 0xa9a8a9a8, 0xaaaaaa44, 0x2a4a5254};
// Table.A3a, A3b: the anchor texels of subsets 1 and 2 of three (Table.A2 is in texture/bptc_tables.h).
constexpr uint8_t kAnchor3a[64] = {3,  3,  15, 15, 8, 3,  15, 15, 8,  8,  6, 6,  6, 5,  3, 3,  3,  3,  8,  15, 3,  3,
                                   6,  10, 5,  8,  8, 6,  8,  5,  15, 15, 8, 15, 3, 5,  6, 10, 8,  15, 15, 3,  15, 5,
                                   15, 15, 15, 15, 3, 15, 5,  5,  5,  8,  5, 10, 5, 10, 8, 13, 15, 12, 3,  3};
constexpr uint8_t kAnchor3b[64] = {15, 8, 8, 3,  15, 15, 3,  8,  15, 15, 15, 15, 15, 15, 15, 8,  15, 8,  15, 3,  15, 8,
                                   15, 8, 3, 15, 6,  10, 15, 15, 10, 8,  15, 3,  15, 10, 10, 8,  9,  10, 6,  15, 8,  15,
                                   3,  6, 6, 8,  15, 3,  15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 3,  15, 15, 8};

int subset_of(int subsets, int partition, int texel) {
    if (subsets == 2) return (kPartitions2[partition] >> texel) & 1;
    if (subsets == 3) return int(kPartitions3[partition] >> (2 * texel)) & 3;
    return 0;
}
int anchor_of(int subsets, int partition, int subset) {
    if (subset == 0) return 0;
    return subsets == 2 ? kAnchor2[partition] : subset == 1 ? kAnchor3a[partition] : kAnchor3b[partition];
}


// An endpoint component as decoded: `bits` stored bits, then the p-bit when there is one, then the top bits
// repeated to fill the byte.
int unquantize(int stored, int pbit, int bits, bool has_pbit) {
    const int n = bits + (has_pbit ? 1 : 0);
    const int v = (has_pbit ? (stored << 1) | pbit : stored) << (8 - n);
    return v | (v >> n);
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

// ---- Encoder ----

// What one endpoint fit encodes: channels [first, first + channels) of the block's texels, stored in `bits`
// bits per component, with p-bits per endpoint, shared or none, and indices of `index_bits`.
struct FitSpec {
    int first = 0, channels = 0;
    int bits = 0;
    bool endpoint_pbits = false, shared_pbits = false;
    int index_bits = 0;
};

// The texels of one subset: their places in the block and their values.
struct Subset {
    int count = 0;
    uint8_t texel[kBlockTexels] = {};
    int value[kBlockTexels][4] = {};  // the fit's channels
};

// A subset's endpoints as stored ([endpoint][channel of the fit]), their p-bits, and the indices they give.
struct Fit {
    int q[2][4] = {};
    int p[2] = {};
    int error = INT_MAX;
    uint8_t index[kBlockTexels] = {};  // per texel of the subset, in Subset order
};

int pbit_choices(const FitSpec& s) {
    return s.endpoint_pbits ? 4 : s.shared_pbits ? 2 : 1;
}
void set_pbits(const FitSpec& s, int choice, Fit& f) {
    f.p[0] = choice & 1;
    f.p[1] = s.endpoint_pbits ? choice >> 1 : f.p[0];
}
bool has_pbit(const FitSpec& s) {
    return s.endpoint_pbits || s.shared_pbits;
}

// The stored value whose decoded component is nearest `target` (0..255) under p-bit `pbit`, from a table per
// component layout (bits and p-bit) of the nearest stored value to each 8-bit value.
int quantize(float target, int pbit, const FitSpec& s) {
    struct Tables {
        uint8_t nearest[9][3][256];  // [bits][0: no p-bit, 1 + p-bit][8-bit value]
        Tables() {
            for (int bits = 1; bits <= 8; ++bits)
                for (int layout = 0; layout < (bits < 8 ? 3 : 1); ++layout)  // a p-bit makes at most 8 bits
                    for (int v = 0; v < 256; ++v) {
                        int best = 0, best_d = INT_MAX;
                        for (int q = 0; q < (1 << bits); ++q) {
                            const int d = std::abs(unquantize(q, layout - 1, bits, layout > 0) - v);
                            if (d < best_d) best_d = d, best = q;
                        }
                        nearest[bits][layout][v] = uint8_t(best);
                    }
        }
    };
    static const Tables tables;
    const int v = std::clamp(int(target + 0.5f), 0, 255);
    return tables.nearest[s.bits][has_pbit(s) ? 1 + pbit : 0][v];
}

// Squared error of the subset with each texel given its nearest palette entry; replaces `best` when lower.
// The palette lies on the segment between the endpoints, so the nearest entry is one next to the texel's
// projection onto it (the rounding of each channel moves entries off the segment by less than a step).
bool evaluate(const Subset& sub, const FitSpec& s, const Fit& candidate, Fit& best) {
    const int entries = 1 << s.index_bits;
    const int* w = weights(s.index_bits);
    int palette[16][4], e0[4], span[4], span2 = 0;
    for (int c = 0; c < s.channels; ++c) {
        e0[c] = unquantize(candidate.q[0][c], candidate.p[0], s.bits, has_pbit(s));
        const int e1 = unquantize(candidate.q[1][c], candidate.p[1], s.bits, has_pbit(s));
        span[c] = e1 - e0[c];
        span2 += span[c] * span[c];
        for (int i = 0; i < entries; ++i) palette[i][c] = interpolate(e0[c], e1, w[i]);
    }
    const float to_entry = span2 ? float(entries - 1) / float(span2) : 0.0f;
    Fit f = candidate;
    f.error = 0;
    for (int k = 0; k < sub.count; ++k) {
        int along = 0;
        for (int c = 0; c < s.channels; ++c) along += (sub.value[k][c] - e0[c]) * span[c];
        const int nearest = std::clamp(int(std::floor(float(along) * to_entry + 0.5f)), 0, entries - 1);
        int best_d = INT_MAX;
        for (int i = std::max(nearest - 1, 0); i <= std::min(nearest + 1, entries - 1); ++i) {
            int d = 0;
            for (int c = 0; c < s.channels; ++c) {
                const int diff = palette[i][c] - sub.value[k][c];
                d += diff * diff;
            }
            if (d < best_d) best_d = d, f.index[k] = uint8_t(i);
        }
        f.error += best_d;
        if (f.error >= best.error) return false;
    }
    best = f;
    return true;
}

// Quantises 8-bit endpoints a, b under p-bit choice `choice`.
Fit quantize_endpoints(const FitSpec& s, const float a[4], const float b[4], int choice) {
    Fit f;
    set_pbits(s, choice, f);
    for (int c = 0; c < s.channels; ++c) f.q[0][c] = quantize(a[c], f.p[0], s), f.q[1][c] = quantize(b[c], f.p[1], s);
    return f;
}

// Quantises 8-bit endpoints a, b under every p-bit choice and evaluates them.
void try_endpoints(const Subset& sub, const FitSpec& s, const float a[4], const float b[4], Fit& best) {
    for (int choice = 0; choice < pbit_choices(s); ++choice)
        evaluate(sub, s, quantize_endpoints(s, a, b, choice), best);
}

// Least-squares 8-bit endpoints for the fit's indices; false when the indices do not determine them.
bool refit(const Subset& sub, const FitSpec& s, const Fit& f, float a[4], float b[4]) {
    const int* w = weights(s.index_bits);
    double aa = 0, ab = 0, bb = 0, ax[4] = {}, bx[4] = {};
    for (int k = 0; k < sub.count; ++k) {
        const double v = w[f.index[k]] / 64.0, u = 1.0 - v;
        aa += u * u, ab += u * v, bb += v * v;
        for (int c = 0; c < s.channels; ++c) ax[c] += u * sub.value[k][c], bx[c] += v * sub.value[k][c];
    }
    const double det = aa * bb - ab * ab;
    if (std::fabs(det) < 1e-9) return false;
    for (int c = 0; c < s.channels; ++c) {
        a[c] = float(std::clamp((ax[c] * bb - bx[c] * ab) / det, 0.0, 255.0));
        b[c] = float(std::clamp((bx[c] * aa - ax[c] * ab) / det, 0.0, 255.0));
    }
    return true;
}

// Endpoints on the subset's principal axis through its mean, spanning its texels' projections.
void principal_endpoints(const Subset& sub, int channels, float a[4], float b[4]) {
    float mean[4] = {};
    for (int k = 0; k < sub.count; ++k)
        for (int c = 0; c < channels; ++c) mean[c] += float(sub.value[k][c]);
    for (int c = 0; c < channels; ++c) mean[c] /= float(sub.count);
    float cov[4][4] = {};
    for (int k = 0; k < sub.count; ++k)
        for (int i = 0; i < channels; ++i)
            for (int j = 0; j < channels; ++j)
                cov[i][j] += (float(sub.value[k][i]) - mean[i]) * (float(sub.value[k][j]) - mean[j]);
    // Power iteration from the row of the largest variance, which is never orthogonal to the axis.
    int widest = 0;
    for (int c = 1; c < channels; ++c)
        if (cov[c][c] > cov[widest][widest]) widest = c;
    float axis[4] = {};
    for (int c = 0; c < channels; ++c) axis[c] = cov[widest][c];
    for (int it = 0; it < 6; ++it) {
        float n[4] = {};
        float len = 0;
        for (int i = 0; i < channels; ++i) {
            for (int j = 0; j < channels; ++j) n[i] += cov[i][j] * axis[j];
            len = std::max(len, std::fabs(n[i]));
        }
        if (len < 1e-6f) break;
        for (int c = 0; c < channels; ++c) axis[c] = n[c] / len;
    }
    float norm2 = 0;
    for (int c = 0; c < channels; ++c) norm2 += axis[c] * axis[c];
    float lo = 0, hi = 0;
    if (norm2 > 1e-12f) {
        lo = 1e30f, hi = -1e30f;
        for (int k = 0; k < sub.count; ++k) {
            float p = 0;
            for (int c = 0; c < channels; ++c) p += (float(sub.value[k][c]) - mean[c]) * axis[c];
            lo = std::min(lo, p), hi = std::max(hi, p);
        }
        lo /= norm2, hi /= norm2;
    }
    for (int c = 0; c < channels; ++c) {
        a[c] = std::clamp(mean[c] + axis[c] * lo, 0.0f, 255.0f);
        b[c] = std::clamp(mean[c] + axis[c] * hi, 0.0f, 255.0f);
    }
}

// Endpoints on the principal axis, then least squares on the indices they give (twice when thorough), each
// quantised under every p-bit choice; the best of them.
Fit fit_subset(const Subset& sub, const FitSpec& s, Bc7Effort effort) {
    const bool thorough = effort == Bc7Effort::thorough;
    Fit best;
    float a[4], b[4];
    principal_endpoints(sub, s.channels, a, b);
    try_endpoints(sub, s, a, b, best);
    for (int pass = 0; pass < (thorough ? 2 : 1) && best.error > 0; ++pass)
        if (refit(sub, s, best, a, b)) try_endpoints(sub, s, a, b, best);
    return best;
}

// Walks the stored endpoints while the error falls: each component a step alone, each channel's two endpoints
// together (in step: the segment shifts; apart: it stretches), which single steps cannot reach when every one of
// them alone makes things worse, every channel of an endpoint or of both up to two steps, and the other p-bit
// choices with the endpoints reached.
void polish(const Subset& sub, const FitSpec& s, Fit& best) {
    const int top = (1 << s.bits) - 1;
    for (int round = 0; round < 8 && best.error > 0; ++round) {
        bool improved = false;
        for (int c = 0; c < s.channels; ++c) {
            for (int e = 0; e < 2; ++e)
                for (int step : {-1, 1}) {
                    Fit f = best;
                    f.q[e][c] += step;
                    if (f.q[e][c] >= 0 && f.q[e][c] <= top) improved |= evaluate(sub, s, f, best);
                }
            for (int step0 : {-1, 1})
                for (int step1 : {-1, 1}) {
                    Fit f = best;
                    f.q[0][c] += step0, f.q[1][c] += step1;
                    if (f.q[0][c] >= 0 && f.q[0][c] <= top && f.q[1][c] >= 0 && f.q[1][c] <= top)
                        improved |= evaluate(sub, s, f, best);
                }
        }
        // Every channel of an endpoint, or of both, at once: the moves along a grey (or any diagonal) segment,
        // where a step of one channel alone leaves the segment.
        for (int step0 = -2; step0 <= 2 && s.channels > 1; ++step0)
            for (int step1 = -2; step1 <= 2; ++step1) {
                if (!step0 && !step1) continue;
                Fit f = best;
                for (int c = 0; c < s.channels; ++c)
                    f.q[0][c] = std::clamp(f.q[0][c] + step0, 0, top),
                    f.q[1][c] = std::clamp(f.q[1][c] + step1, 0, top);
                improved |= evaluate(sub, s, f, best);
            }
        for (int choice = 0; choice < pbit_choices(s); ++choice) {
            Fit f = best;
            set_pbits(s, choice, f);
            improved |= evaluate(sub, s, f, best);
        }
        if (!improved) break;
    }
}

// One way of encoding the block: a mode with its partition, rotation and index selection, and the fits of its
// subsets (modes 4 and 5: fits[0] the colour, fits[1] the alpha, each with its own indices).
struct Candidate {
    int mode = 0, partition = 0, rotation = 0, index_selection = 0;
    Subset subsets[3];
    FitSpec specs[3];
    Fit fits[3];
    int fit_count = 0;
    int fixed_error = 0;  // alpha of the modes without it: 255 against the texels' alpha
    int error = INT_MAX;
};

void total_error(Candidate& c) {
    c.error = c.fixed_error;
    for (int i = 0; i < c.fit_count; ++i) c.error += c.fits[i].error;
}

// The texels of `rgba` after the mode's rotation (alpha swapped with channel rotation - 1).
void rotate(const uint8_t rgba[kBlockTexels * 4], int rotation, int out[kBlockTexels][4]) {
    for (int t = 0; t < kBlockTexels; ++t) {
        for (int c = 0; c < 4; ++c) out[t][c] = rgba[4 * t + c];
        if (rotation) std::swap(out[t][3], out[t][rotation - 1]);
    }
}

Candidate make_candidate(const uint8_t rgba[kBlockTexels * 4], int mode, int partition, int rotation,
                         int index_selection, Bc7Effort effort, bool alpha_held) {
    const ModeInfo& m = kModes[mode];
    Candidate c;
    c.mode = mode, c.partition = partition, c.rotation = rotation, c.index_selection = index_selection;
    int texels[kBlockTexels][4];
    rotate(rgba, rotation, texels);
    if (m.index2_bits) {  // modes 4 and 5: colour and alpha fitted apart, one subset
        c.fit_count = 2;
        c.specs[0] = {0, 3, m.color_bits, false, false, index_selection ? m.index2_bits : m.index_bits};
        c.specs[1] = {3, 1, m.alpha_bits, false, false, index_selection ? m.index_bits : m.index2_bits};
        for (int i = 0; i < 2; ++i) {
            Subset& s = c.subsets[i];
            s.count = kBlockTexels;
            for (int t = 0; t < kBlockTexels; ++t) {
                s.texel[t] = uint8_t(t);
                for (int k = 0; k < c.specs[i].channels; ++k) s.value[t][k] = texels[t][c.specs[i].first + k];
            }
        }
    } else {
        c.fit_count = m.subsets;
        // Mode 6 without alpha to keep fits the colour alone: its alpha endpoints are the largest stored value,
        // which decodes as 254 or 255 under the p-bits the colour chose.
        const int channels = m.alpha_bits && (alpha_held || mode != 6) ? 4 : 3;
        for (int i = 0; i < m.subsets; ++i)
            c.specs[i] = {0, channels, m.color_bits, m.endpoint_pbits, m.shared_pbits, m.index_bits};
        for (int t = 0; t < kBlockTexels; ++t) {
            Subset& s = c.subsets[subset_of(m.subsets, partition, t)];
            s.texel[s.count] = uint8_t(t);
            for (int k = 0; k < channels; ++k) s.value[s.count][k] = texels[t][k];
            ++s.count;
            if (!m.alpha_bits) c.fixed_error += (255 - texels[t][3]) * (255 - texels[t][3]);
        }
    }
    for (int i = 0; i < c.fit_count; ++i) c.fits[i] = fit_subset(c.subsets[i], c.specs[i], effort);
    total_error(c);
    return c;
}

// How well each partition's subsets lie on lines in RGBA: the spread off each subset's principal axis, plus
// the spread along it that `index_bits` indices leave (that of a uniform spread over the palette's steps).
struct PartitionRanking {
    float off_axis[64] = {}, along_axis[64] = {};
    float estimate(int partition, int index_bits) const {
        const float steps = float((1 << index_bits) - 1);
        return off_axis[partition] + along_axis[partition] / (steps * steps);
    }
};

PartitionRanking rank_partitions(const uint8_t rgba[kBlockTexels * 4], int subsets) {
    // Sums of the channels and of their products per texel and over the block: subset 0's are the block's less
    // the other subsets'.
    float texel_sum[kBlockTexels][4], texel_prod[kBlockTexels][10], block_sum[4] = {}, block_prod[10] = {};
    for (int t = 0; t < kBlockTexels; ++t)
        for (int i = 0, n = 0; i < 4; ++i) {
            texel_sum[t][i] = rgba[4 * t + i];
            block_sum[i] += texel_sum[t][i];
            for (int j = i; j < 4; ++j, ++n) {
                texel_prod[t][n] = float(rgba[4 * t + i]) * float(rgba[4 * t + j]);
                block_prod[n] += texel_prod[t][n];
            }
        }
    PartitionRanking r;
    for (int p = 0; p < 64; ++p) {
        float sum[3][4] = {}, prod[3][10] = {};
        int count[3] = {};
        for (int t = 0; t < kBlockTexels; ++t) {
            const int s = subset_of(subsets, p, t);
            ++count[s];
            if (s == 0) continue;
            for (int i = 0; i < 4; ++i) sum[s][i] += texel_sum[t][i];
            for (int n = 0; n < 10; ++n) prod[s][n] += texel_prod[t][n];
        }
        for (int i = 0; i < 4; ++i) sum[0][i] = block_sum[i] - sum[1][i] - sum[2][i];
        for (int n = 0; n < 10; ++n) prod[0][n] = block_prod[n] - prod[1][n] - prod[2][n];
        for (int s = 0; s < subsets; ++s) {
            float cov[4][4];
            for (int i = 0, n = 0; i < 4; ++i)
                for (int j = i; j < 4; ++j, ++n)
                    cov[i][j] = cov[j][i] = prod[s][n] - sum[s][i] * sum[s][j] / float(count[s]);
            const float trace = cov[0][0] + cov[1][1] + cov[2][2] + cov[3][3];
            int widest = 0;
            for (int i = 1; i < 4; ++i)
                if (cov[i][i] > cov[widest][widest]) widest = i;
            float axis[4] = {cov[widest][0], cov[widest][1], cov[widest][2], cov[widest][3]};
            float lambda = 0;
            for (int it = 0; it < 3; ++it) {
                float n[4] = {}, len2 = 0, dot = 0;
                for (int i = 0; i < 4; ++i) {
                    for (int j = 0; j < 4; ++j) n[i] += cov[i][j] * axis[j];
                    len2 += n[i] * n[i], dot += n[i] * axis[i];
                }
                const float alen2 = axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2] + axis[3] * axis[3];
                if (len2 < 1e-12f || alen2 < 1e-12f) break;
                lambda = dot / alen2;  // Rayleigh quotient
                const float inv = 1.0f / std::sqrt(len2);
                for (int i = 0; i < 4; ++i) axis[i] = n[i] * inv;
            }
            lambda = std::clamp(lambda, 0.0f, trace);
            r.off_axis[p] += trace - lambda;
            r.along_axis[p] += lambda;
        }
    }
    return r;
}

// The `count` best-ranked of the first `partitions` partitions.
int best_partitions(const PartitionRanking& r, int partitions, int index_bits, int count, int out[]) {
    std::array<int, 64> order{};
    for (int p = 0; p < partitions; ++p) order[size_t(p)] = p;
    count = std::min(count, partitions);
    std::partial_sort(order.begin(), order.begin() + count, order.begin() + partitions,
                      [&](int x, int y) { return r.estimate(x, index_bits) < r.estimate(y, index_bits); });
    for (int i = 0; i < count; ++i) out[i] = order[size_t(i)];
    return count;
}

// Swaps a fit's endpoints where its anchor texel's index has its top bit set: the block stores that bit as 0.
void fix_anchor(const Subset& sub, const FitSpec& s, int anchor, Fit& f) {
    const int top = (1 << s.index_bits) - 1;
    for (int k = 0; k < sub.count; ++k)
        if (sub.texel[k] == anchor) {
            if (f.index[k] <= top / 2) return;
            break;
        }
    for (int c = 0; c < 4; ++c) std::swap(f.q[0][c], f.q[1][c]);
    std::swap(f.p[0], f.p[1]);
    for (int k = 0; k < sub.count; ++k) f.index[k] = uint8_t(top - f.index[k]);
}

void pack(Candidate c, uint8_t block[16]) {
    const ModeInfo& m = kModes[c.mode];
    for (int i = 0; i < c.fit_count; ++i)
        fix_anchor(c.subsets[i], c.specs[i], m.index2_bits ? 0 : anchor_of(m.subsets, c.partition, i), c.fits[i]);
    std::memset(block, 0, 16);
    int pos = 0;
    put_bits(block, pos, c.mode + 1, 1u << c.mode);
    put_bits(block, pos, m.partition_bits, uint32_t(c.partition));
    put_bits(block, pos, m.rotation_bits, uint32_t(c.rotation));
    put_bits(block, pos, m.index_selection_bits, uint32_t(c.index_selection));
    const int subsets = m.index2_bits ? 1 : m.subsets;
    for (int ch = 0; ch < 3; ++ch)
        for (int s = 0; s < subsets; ++s)
            for (int e = 0; e < 2; ++e) put_bits(block, pos, m.color_bits, uint32_t(c.fits[s].q[e][ch]));
    if (m.alpha_bits)
        for (int s = 0; s < subsets; ++s)
            for (int e = 0; e < 2; ++e)
                put_bits(block, pos, m.alpha_bits,
                         uint32_t(m.index2_bits              ? c.fits[1].q[e][0]
                                  : c.specs[s].channels == 3 ? (1 << m.alpha_bits) - 1
                                                             : c.fits[s].q[e][3]));
    if (m.endpoint_pbits)
        for (int s = 0; s < subsets; ++s)
            for (int e = 0; e < 2; ++e) put_bits(block, pos, 1, uint32_t(c.fits[s].p[e]));
    if (m.shared_pbits)
        for (int s = 0; s < subsets; ++s) put_bits(block, pos, 1, uint32_t(c.fits[s].p[0]));
    // Index of each texel per fit.
    uint8_t index[3][kBlockTexels] = {};
    int subset_of_texel[kBlockTexels] = {};
    for (int i = 0; i < c.fit_count; ++i)
        for (int k = 0; k < c.subsets[i].count; ++k) {
            index[i][c.subsets[i].texel[k]] = c.fits[i].index[k];
            subset_of_texel[c.subsets[i].texel[k]] = i;
        }
    if (m.index2_bits) {
        const int primary = c.index_selection ? 1 : 0;  // the fit whose indices have index_bits
        for (int t = 0; t < kBlockTexels; ++t) put_bits(block, pos, m.index_bits - (t == 0), index[primary][t]);
        for (int t = 0; t < kBlockTexels; ++t) put_bits(block, pos, m.index2_bits - (t == 0), index[1 - primary][t]);
    } else {
        for (int t = 0; t < kBlockTexels; ++t) {
            const int s = subset_of_texel[t];
            put_bits(block, pos, m.index_bits - (t == anchor_of(m.subsets, c.partition, s)), index[s][t]);
        }
    }
}

// A block of one colour in mode 6 without error, where one exists: every p-bit choice and palette entry, with
// each channel's endpoints the pair that puts that entry on the colour (alpha left at the largest stored value
// when not held). Partitions and polishing cannot do better, and seldom as well, so flat blocks end here.
bool encode_flat(const uint8_t rgba[kBlockTexels * 4], bool alpha_held, uint8_t block[16]) {
    for (int t = 1; t < kBlockTexels; ++t)
        if (std::memcmp(rgba, rgba + 4 * t, 4) != 0) return false;
    Candidate c;
    c.mode = 6, c.fit_count = 1;
    const ModeInfo& m = kModes[6];
    const FitSpec& s = c.specs[0] = {0, alpha_held ? 4 : 3, m.color_bits, true, false, m.index_bits};
    Subset& sub = c.subsets[0];
    sub.count = kBlockTexels;
    for (int t = 0; t < kBlockTexels; ++t) {
        sub.texel[t] = uint8_t(t);
        for (int k = 0; k < s.channels; ++k) sub.value[t][k] = rgba[k];
    }
    const int top = (1 << s.bits) - 1;
    for (int choice = 0; choice < 4; ++choice)
        for (int i = 0; i < (1 << s.index_bits); ++i) {
            Fit f;
            set_pbits(s, choice, f);
            bool exact = true;
            for (int k = 0; k < s.channels && exact; ++k) {
                exact = false;
                const int w = kWeights4[i];
                for (int q0 = 0; q0 <= top && !exact; ++q0) {
                    const int e0 = unquantize(q0, f.p[0], s.bits, true);
                    // The endpoint 1 that interpolates to the colour, then its neighbouring stored values.
                    const float e1 = w ? float(64 * rgba[k] - (64 - w) * e0) / float(w) : 0.0f;
                    const int guess = quantize(std::clamp(e1, 0.0f, 255.0f), f.p[1], s);
                    for (int q1 = std::max(guess - 1, 0); q1 <= std::min(guess + 1, top); ++q1)
                        if (interpolate(e0, unquantize(q1, f.p[1], s.bits, true), w) == rgba[k]) {
                            f.q[0][k] = q0, f.q[1][k] = q1, exact = true;
                            break;
                        }
                }
            }
            if (!exact) continue;
            c.fits[0] = f;
            c.fits[0].error = 0;
            std::fill(c.fits[0].index, c.fits[0].index + kBlockTexels, uint8_t(i));
            pack(c, block);
            return true;
        }
    return false;
}

// The encoder over the modes of `modes` (bit m: mode m).
void encode(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16], Bc7Effort effort, bool alpha_held, int modes) {
    const bool thorough = effort == Bc7Effort::thorough;
    const int partition_tries = thorough ? 8 : 1;
    const int keep = thorough ? 6 : 2;  // candidates polished
    Candidate kept[6];                  // the best so far, best first
    int kept_count = 0;
    const auto consider = [&](const Candidate& c) {
        int at = kept_count;
        while (at > 0 && kept[at - 1].error > c.error) --at;
        if (at >= keep) return;
        for (int i = std::min(kept_count, keep - 1); i > at; --i) kept[i] = kept[i - 1];
        kept[at] = c;
        kept_count = std::min(kept_count + 1, keep);
    };
    // One subset: mode 6, modes 4 and 5 under each rotation (and mode 4 under each index selection).
    if (modes & (1 << 6)) consider(make_candidate(rgba, 6, 0, 0, 0, effort, alpha_held));
    for (int rotation = 0; rotation < 4; ++rotation) {
        if (modes & (1 << 5)) consider(make_candidate(rgba, 5, 0, rotation, 0, effort, alpha_held));
        for (int selection = 0; selection < 2 && (modes & (1 << 4)); ++selection)
            consider(make_candidate(rgba, 4, 0, rotation, selection, effort, alpha_held));
    }
    // Two and three subsets: the best-ranked partitions of each mode.
    const PartitionRanking two = modes & 0x8a ? rank_partitions(rgba, 2) : PartitionRanking{},
                           three = modes & 0x05 ? rank_partitions(rgba, 3) : PartitionRanking{};
    for (int mode : {0, 1, 2, 3, 7}) {
        if (!(modes & (1 << mode))) continue;
        const ModeInfo& m = kModes[mode];
        int partitions[64];
        const int n = best_partitions(m.subsets == 2 ? two : three, 1 << m.partition_bits, m.index_bits,
                                      partition_tries, partitions);
        for (int i = 0; i < n; ++i) consider(make_candidate(rgba, mode, partitions[i], 0, 0, effort, alpha_held));
    }
    for (int i = 0; i < kept_count; ++i) {
        for (int f = 0; f < kept[i].fit_count; ++f) polish(kept[i].subsets[f], kept[i].specs[f], kept[i].fits[f]);
        total_error(kept[i]);
    }
    const Candidate* best = &kept[0];
    for (int i = 1; i < kept_count; ++i)
        if (kept[i].error < best->error) best = &kept[i];
    pack(*best, block);
}

}  // namespace

void encode_bc7_block(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16], Bc7Effort effort, bool alpha_held) {
    if (encode_flat(rgba, alpha_held, block)) return;
    encode(rgba, block, effort, alpha_held, 0xff);
}

void encode_bc7_block_in_mode(const uint8_t rgba[kBlockTexels * 4], uint8_t block[16], int mode) {
    encode(rgba, block, Bc7Effort::fast, true, 1 << mode);
}

bool decode_bc7_block(const uint8_t block[16], uint8_t rgba[kBlockTexels * 4]) {
    if (block[0] == 0) {  // reserved: no mode
        std::memset(rgba, 0, kBlockTexels * 4);
        return false;
    }
    int mode = 0;
    while (!((block[0] >> mode) & 1)) ++mode;
    const ModeInfo& m = kModes[mode];
    int pos = mode + 1;
    const int partition = int(get_bits(block, pos, m.partition_bits));
    const int rotation = int(get_bits(block, pos, m.rotation_bits));
    const int selection = int(get_bits(block, pos, m.index_selection_bits));
    int stored[3][2][4] = {}, pbit[3][2] = {};
    for (int c = 0; c < 3; ++c)
        for (int s = 0; s < m.subsets; ++s)
            for (int e = 0; e < 2; ++e) stored[s][e][c] = int(get_bits(block, pos, m.color_bits));
    if (m.alpha_bits)
        for (int s = 0; s < m.subsets; ++s)
            for (int e = 0; e < 2; ++e) stored[s][e][3] = int(get_bits(block, pos, m.alpha_bits));
    if (m.endpoint_pbits)
        for (int s = 0; s < m.subsets; ++s)
            for (int e = 0; e < 2; ++e) pbit[s][e] = int(get_bits(block, pos, 1));
    if (m.shared_pbits)
        for (int s = 0; s < m.subsets; ++s) pbit[s][0] = pbit[s][1] = int(get_bits(block, pos, 1));
    const bool pbits = m.endpoint_pbits || m.shared_pbits;
    int endpoint[3][2][4];
    for (int s = 0; s < m.subsets; ++s)
        for (int e = 0; e < 2; ++e) {
            for (int c = 0; c < 3; ++c)
                endpoint[s][e][c] = unquantize(stored[s][e][c], pbit[s][e], m.color_bits, pbits);
            endpoint[s][e][3] = m.alpha_bits ? unquantize(stored[s][e][3], pbit[s][e], m.alpha_bits, pbits) : 255;
        }
    int primary[kBlockTexels], secondary[kBlockTexels] = {};
    for (int t = 0; t < kBlockTexels; ++t) {
        const int s = subset_of(m.subsets, partition, t);
        primary[t] = int(get_bits(block, pos, m.index_bits - (t == anchor_of(m.subsets, partition, s))));
    }
    if (m.index2_bits)
        for (int t = 0; t < kBlockTexels; ++t) secondary[t] = int(get_bits(block, pos, m.index2_bits - (t == 0)));
    // The colour takes the secondary indices under index selection 1, the alpha the secondary ones otherwise.
    const bool color_secondary = selection == 1, alpha_secondary = m.index2_bits && selection == 0;
    const int* color_w = weights(color_secondary ? m.index2_bits : m.index_bits);
    const int* alpha_w = weights(alpha_secondary ? m.index2_bits : m.index_bits);
    for (int t = 0; t < kBlockTexels; ++t) {
        const int s = subset_of(m.subsets, partition, t);
        const int ci = color_secondary ? secondary[t] : primary[t], ai = alpha_secondary ? secondary[t] : primary[t];
        uint8_t* out = rgba + 4 * t;
        for (int c = 0; c < 3; ++c) out[c] = uint8_t(interpolate(endpoint[s][0][c], endpoint[s][1][c], color_w[ci]));
        out[3] = uint8_t(interpolate(endpoint[s][0][3], endpoint[s][1][3], alpha_w[ai]));
        if (rotation) std::swap(out[3], out[rotation - 1]);
    }
    return true;
}

}  // namespace nmc::texture
