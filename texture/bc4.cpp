// BC4: two 8-bit endpoints and 16 3-bit indices. The encoder searches endpoint pairs that put the block's extremes
// on any two palette entries (and around least-squares fits of the best pair's indices) and keeps the pair of
// least squared error, which on a single channel comes within a few percent of the exhaustive optimum at a small
// fraction of its cost.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "texture/block_codecs.h"

namespace nmc::texture {
namespace {

// The eight decoded values of a block's endpoints, indexed as the block's indices are. Interpolants are rounded
// to the nearest code (the specification's exact values lie between codes; GPUs round within its tolerance).
void bc4_palette(int e0, int e1, int palette[8]) {
    palette[0] = e0;
    palette[1] = e1;
    if (e0 > e1) {
        for (int i = 1; i <= 6; ++i) palette[i + 1] = ((7 - i) * e0 + i * e1 + 3) / 7;
    } else {
        for (int i = 1; i <= 4; ++i) palette[i + 1] = ((5 - i) * e0 + i * e1 + 2) / 5;
        palette[6] = 0;
        palette[7] = 255;
    }
}

struct Bc4Candidate {
    int e0 = 0;
    int e1 = 0;
    int error = 1 << 30;
    uint8_t indices[kBlockTexels] = {};
};

// Squared error of endpoints (e0, e1) with each texel given its nearest palette entry. The entries are walked
// in value order (`order`: palette indices from the low endpoint up), so the nearest is found from the texel's
// position between the endpoints with one or two comparisons instead of eight.
void evaluate(const uint8_t values[kBlockTexels], int e0, int e1, Bc4Candidate& best) {
    static constexpr uint8_t kEightValueOrder[8] = {1, 7, 6, 5, 4, 3, 2, 0};
    static constexpr uint8_t kSixValueOrder[6] = {0, 2, 3, 4, 5, 1};
    int palette[8];
    bc4_palette(e0, e1, palette);
    const bool eight = e0 > e1;
    const uint8_t* order = eight ? kEightValueOrder : kSixValueOrder;
    const int last = eight ? 7 : 5;
    const int lo = eight ? e1 : e0, hi = eight ? e0 : e1;
    int sorted[8];
    for (int j = 0; j <= last; ++j) sorted[j] = palette[order[j]];
    Bc4Candidate c;
    c.e0 = e0;
    c.e1 = e1;
    c.error = 0;
    for (int t = 0; t < kBlockTexels; ++t) {
        const int v = values[t];
        int j = hi > lo ? std::clamp((v - lo) * last / (hi - lo), 0, last) : 0;
        while (j > 0 && sorted[j] > v) --j;
        while (j < last && sorted[j + 1] <= v) ++j;
        int index = order[j];
        int d = (sorted[j] - v) * (sorted[j] - v);
        if (j < last && (sorted[j + 1] - v) * (sorted[j + 1] - v) < d)
            index = order[j + 1], d = (sorted[j + 1] - v) * (sorted[j + 1] - v);
        if (!eight) {  // the six-value mode's exact 0 and 255
            if (v * v < d) index = 6, d = v * v;
            if ((255 - v) * (255 - v) < d) index = 7, d = (255 - v) * (255 - v);
        }
        c.indices[t] = uint8_t(index);
        c.error += d;
        if (c.error >= best.error) return;
    }
    best = c;
}

// Every pair (hi, lo) with hi within `radius` of `high` and lo within `radius` of `low`, in the eight-value mode
// (e0 > e1) or the six-value mode (e0 <= e1, with 0 and 255 exact).
void search_around(const uint8_t values[kBlockTexels], int low, int high, int radius, bool six_value,
                   Bc4Candidate& best) {
    for (int hi = std::max(0, high - radius); hi <= std::min(255, high + radius); ++hi)
        for (int lo = std::max(0, low - radius); lo <= std::min(255, low + radius); ++lo) {
            if (six_value ? lo > hi : lo >= hi) continue;
            if (six_value) evaluate(values, lo, hi, best);
            else evaluate(values, hi, lo, best);
        }
}

// The best endpoints often lie outside the block's range: its lowest and highest values sit on inner palette
// entries. So every placement of `low` on entry s and `high` on entry e > s of the `last` + 1 evenly spaced
// entries is tried (the endpoints it implies, and their neighbours), 28 placements in the eight-value mode.
void search_spans(const uint8_t values[kBlockTexels], int low, int high, int last, bool six_value,
                  Bc4Candidate& best) {
    for (int s = 0; s < last; ++s)
        for (int e = s + 1; e <= last; ++e) {
            const double step = double(high - low) / (e - s);
            const double lo = low - s * step, hi = lo + last * step;
            if (lo < -step || hi > 255 + step) continue;  // clamped far off: another placement covers it
            search_around(values, int(std::lround(lo)), int(std::lround(hi)), s == 0 && e == last ? 2 : 1,
                          six_value, best);
        }
}

// Values this close to 0 or 255 are left to the six-value mode's exact 0 and 255 when its endpoints are sought.
constexpr int kNearExtreme = 16;

// Position of palette index `i` along the segment from the low to the high endpoint, in 1/7ths (eight-value mode).
constexpr int kEightValuePosition[8] = {7, 0, 6, 5, 4, 3, 2, 1};

}  // namespace

void encode_bc4_block(const uint8_t values[kBlockTexels], uint8_t block[8]) {
    int low = 255, high = 0, inner_low = 255, inner_high = 0;
    for (int t = 0; t < kBlockTexels; ++t) {
        low = std::min<int>(low, values[t]);
        high = std::max<int>(high, values[t]);
        if (values[t] >= kNearExtreme && values[t] <= 255 - kNearExtreme) {
            inner_low = std::min<int>(inner_low, values[t]);
            inner_high = std::max<int>(inner_high, values[t]);
        }
    }
    Bc4Candidate best;
    if (low == high) {
        evaluate(values, low, low, best);  // every index 0: exact
    } else {
        search_spans(values, low, high, 7, false, best);
        // Refit the endpoints to the best pair's indices by least squares and search around the fit, while that
        // helps: on noisy blocks the best pair often lies well inside the extremes.
        for (int pass = 0; pass < 3 && best.error > 0 && best.e0 > best.e1; ++pass) {
            double sww = 0, sw = 0, swv = 0, sv = 0;
            for (int t = 0; t < kBlockTexels; ++t) {
                const double w = kEightValuePosition[best.indices[t]] / 7.0;
                sww += w * w, sw += w, swv += w * values[t], sv += values[t];
            }
            // Minimise sum((lo + w d - v)^2) over lo and d = hi - lo: the 2x2 normal equations.
            const double det = kBlockTexels * sww - sw * sw;
            if (det < 1e-9) break;
            const double d = (kBlockTexels * swv - sw * sv) / det;
            const double lo = (sv - sw * d) / kBlockTexels;
            const int before = best.error;
            search_around(values, int(std::lround(lo)), int(std::lround(lo + d)), 2, false, best);
            if (best.error == before) break;
        }
        // Blocks near 0 or 255 may do better with those exact and six values spread over the rest.
        if (best.error > 0 && (low < kNearExtreme || high > 255 - kNearExtreme)) {
            if (inner_low > inner_high) inner_low = inner_high = low < kNearExtreme ? low : high;
            search_spans(values, inner_low, inner_high, 5, true, best);
        }
    }
    block[0] = static_cast<uint8_t>(best.e0);
    block[1] = static_cast<uint8_t>(best.e1);
    uint64_t bits = 0;
    for (int t = 0; t < kBlockTexels; ++t) bits |= static_cast<uint64_t>(best.indices[t]) << (3 * t);
    for (int b = 0; b < 6; ++b) block[2 + b] = static_cast<uint8_t>(bits >> (8 * b));
}

void decode_bc4_block(const uint8_t block[8], uint8_t values[kBlockTexels]) {
    int palette[8];
    bc4_palette(block[0], block[1], palette);
    uint64_t bits = 0;
    for (int b = 0; b < 6; ++b) bits |= static_cast<uint64_t>(block[2 + b]) << (8 * b);
    for (int t = 0; t < kBlockTexels; ++t) values[t] = static_cast<uint8_t>(palette[(bits >> (3 * t)) & 7]);
}

}  // namespace nmc::texture
