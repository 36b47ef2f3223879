// Box-filtered mip levels (see mip_chain.h for the footprint rule at odd sizes).
#include "material/mip_chain.h"

#include <algorithm>
#include <cmath>

#include "core/hlg.h"

namespace nmc {
namespace {

// Output texel i of a side shrinking from n to m covers input [i * n / m, (i + 1) * n / m): the weights of the
// input texels it overlaps, by overlap length, normalised to sum 1.
struct Tap {
    int index;
    float weight;
};

std::vector<std::vector<Tap>> footprints(int n, int m) {
    std::vector<std::vector<Tap>> taps(static_cast<size_t>(m));
    const double scale = static_cast<double>(n) / m;
    for (int i = 0; i < m; ++i) {
        const double lo = i * scale, hi = (i + 1) * scale;
        for (int j = static_cast<int>(std::floor(lo)); j < n && j < hi; ++j) {
            const double overlap = std::min<double>(j + 1, hi) - std::max<double>(j, lo);
            if (overlap > 0) taps[static_cast<size_t>(i)].push_back({j, static_cast<float>(overlap / scale)});
        }
    }
    return taps;
}

}  // namespace

float srgb_to_linear(float encoded) {
    const float v = std::min(std::max(encoded, 0.0f), 1.0f);
    return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
}

float linear_to_srgb(float linear) {
    const float v = std::min(std::max(linear, 0.0f), 1.0f);
    return v <= 0.0031308f ? v * 12.92f : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
}

std::vector<float> downsample_box(const std::vector<float>& plane, int width, int height) {
    const int w2 = std::max(1, width / 2), h2 = std::max(1, height / 2);
    const auto tx = footprints(width, w2), ty = footprints(height, h2);
    // Horizontal pass into rows of w2, then vertical pass.
    std::vector<float> rows(static_cast<size_t>(w2) * height);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < w2; ++x) {
            float sum = 0;
            for (const Tap& t : tx[static_cast<size_t>(x)])
                sum += t.weight * plane[static_cast<size_t>(y) * width + t.index];
            rows[static_cast<size_t>(y) * w2 + x] = sum;
        }
    std::vector<float> out(static_cast<size_t>(w2) * h2);
    for (int y = 0; y < h2; ++y)
        for (int x = 0; x < w2; ++x) {
            float sum = 0;
            for (const Tap& t : ty[static_cast<size_t>(y)]) sum += t.weight * rows[static_cast<size_t>(t.index) * w2 + x];
            out[static_cast<size_t>(y) * w2 + x] = sum;
        }
    return out;
}

std::vector<float> downsample_srgb(const std::vector<float>& plane, int width, int height) {
    std::vector<float> linear(plane.size());
    std::transform(plane.begin(), plane.end(), linear.begin(), srgb_to_linear);
    std::vector<float> out = downsample_box(linear, width, height);
    std::transform(out.begin(), out.end(), out.begin(), linear_to_srgb);
    return out;
}

std::vector<float> downsample_hlg(const std::vector<float>& plane, int width, int height) {
    std::vector<float> linear(plane.size());
    std::transform(plane.begin(), plane.end(), linear.begin(), hlg_decode);
    std::vector<float> out = downsample_box(linear, width, height);
    std::transform(out.begin(), out.end(), out.begin(), hlg_encode);
    return out;
}

void downsample_normals(std::vector<float>* x, std::vector<float>* y, std::vector<float>* z, int width, int height) {
    *x = downsample_box(*x, width, height);
    *y = downsample_box(*y, width, height);
    *z = downsample_box(*z, width, height);
    for (size_t i = 0; i < x->size(); ++i) {
        float& a = (*x)[i];
        float& b = (*y)[i];
        float& c = (*z)[i];
        const float len2 = a * a + b * b + c * c;
        if (len2 > 0) {
            const float r = 1.0f / std::sqrt(len2);
            a *= r;
            b *= r;
            c *= r;
        } else {
            a = 0;
            b = 0;
            c = 1;
        }
    }
}

}  // namespace nmc
