// An in-memory image: interleaved float32 channels, values normalised so 8-bit and 16-bit sources map to
// [0, 1] (code / 255, code / 65535) and float sources keep their values. The unit every library exchanges.
#pragma once

#include <cstddef>
#include <vector>

#include "core/texture_layout.h"

namespace nmc {

struct Image {
    int width = 0;
    int height = 0;
    int channels = 0;                           // 1..4
    SampleType sample_type = SampleType::uint8;  // what the pixels came from / will be written as
    std::vector<float> pixels;                   // (y * width + x) * channels + c

    Image() = default;
    Image(int w, int h, int c, SampleType t = SampleType::uint8)
        : width(w), height(h), channels(c), sample_type(t),
          pixels(static_cast<size_t>(w) * static_cast<size_t>(h) * static_cast<size_t>(c), 0.0f) {}

    float& at(int x, int y, int c) {
        return pixels[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
                          static_cast<size_t>(channels) + static_cast<size_t>(c)];
    }
    float at(int x, int y, int c) const {
        return pixels[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
                          static_cast<size_t>(channels) + static_cast<size_t>(c)];
    }
    size_t texel_count() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};

}  // namespace nmc
