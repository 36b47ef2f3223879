// Builds the synthetic test material: analytic planes at mip 0, 2x2 box-filtered mips.
#include "synthetic_material.h"

#include <algorithm>
#include <cmath>

namespace nmc::test {
namespace {

constexpr float kTwoPi = 6.28318530718f;

std::vector<float> halve(const std::vector<float>& plane, int w, int h) {
    const int hw = std::max(1, w / 2);
    const int hh = std::max(1, h / 2);
    std::vector<float> out(static_cast<size_t>(hw * hh));
    for (int y = 0; y < hh; ++y)
        for (int x = 0; x < hw; ++x) {
            float sum = 0;
            for (int dy = 0; dy < 2; ++dy)
                for (int dx = 0; dx < 2; ++dx)
                    sum += plane[static_cast<size_t>(std::min(h - 1, 2 * y + dy) * w + std::min(w - 1, 2 * x + dx))];
            out[static_cast<size_t>(y * hw + x)] = sum * 0.25f;
        }
    return out;
}

ChannelSource pack_source(int channel, Semantic semantic) {
    ChannelSource s;
    s.kind = ChannelSource::Kind::pack;
    s.pack_channel = channel;
    s.semantic = semantic;
    return s;
}

}  // namespace

TrainingTarget synthetic_material(int size) {
    TrainingTarget t;
    t.name = "synthetic";
    t.source_folder = "memory";
    t.width = size;
    t.height = size;
    t.mip_count = 1;
    while ((size >> t.mip_count) > 0) ++t.mip_count;
    for (const char* name : {"albedo.r", "albedo.g", "albedo.b", "normal.x", "normal.y", "roughness"})
        t.channels.push_back({name, 0.0f, 1.0f, 1.0f});

    TextureLayout albedo;
    albedo.name = "albedo";
    albedo.file_name = "albedo.png";
    albedo.file_format = "png";
    albedo.color_space = ColorSpace::srgb;
    for (int c = 0; c < 3; ++c) albedo.channels.push_back(pack_source(c, Semantic::albedo));
    TextureLayout normal;
    normal.name = "normal";
    normal.file_name = "normal.png";
    normal.file_format = "png";
    normal.normal_mode = NormalMode::xy;
    normal.channels = {pack_source(3, Semantic::normal), pack_source(4, Semantic::normal), ChannelSource{}};
    normal.channels[2].kind = ChannelSource::Kind::normal_z;
    normal.channels[2].semantic = Semantic::normal;
    TextureLayout roughness;
    roughness.name = "roughness";
    roughness.file_name = "roughness.png";
    roughness.file_format = "png";
    roughness.channels.push_back(pack_source(5, Semantic::roughness));
    t.textures = {albedo, normal, roughness};

    std::vector<std::vector<float>> mip0(t.channels.size(), std::vector<float>(static_cast<size_t>(size * size)));
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const float u = (static_cast<float>(x) + 0.5f) / static_cast<float>(size);
            const float v = (static_cast<float>(y) + 0.5f) / static_cast<float>(size);
            const auto i = static_cast<size_t>(y * size + x);
            const float pattern = 0.5f + 0.5f * std::sin(kTwoPi * 3.0f * u) * std::sin(kTwoPi * 2.0f * v);
            mip0[0][i] = 0.2f + 0.6f * u;
            mip0[1][i] = 0.3f + 0.4f * pattern;
            mip0[2][i] = 0.8f - 0.5f * v;
            // A gentle bump field: normal (x, y) components stored as n * 0.5 + 0.5.
            mip0[3][i] = 0.5f + 0.2f * std::cos(kTwoPi * 2.0f * u);
            mip0[4][i] = 0.5f + 0.2f * std::sin(kTwoPi * v);
            const float r = std::sqrt((u - 0.5f) * (u - 0.5f) + (v - 0.5f) * (v - 0.5f));
            mip0[5][i] = 0.5f + 0.3f * std::cos(kTwoPi * 2.0f * r);
        }
    t.planes.push_back(mip0);
    for (int m = 1; m < t.mip_count; ++m) {
        const int w = std::max(1, size >> (m - 1));
        std::vector<std::vector<float>> planes;
        for (const auto& p : t.planes.back()) planes.push_back(halve(p, w, w));
        t.planes.push_back(std::move(planes));
    }
    return t;
}

}  // namespace nmc::test
