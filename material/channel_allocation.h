// Allocation of a material's source channels to at most 16 pack channels (format spec 5.3, 5.4): RGB for
// colour, X and Y (or X, Y, Z) for normals, one channel per scalar map; grey stored as RGB shares one pack
// channel and a constant channel costs none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/texture_layout.h"

namespace nmc {

constexpr int kMaxPackChannels = 16;

// One network output (format spec 5.3).
struct PackChannel {
    std::string name;  // "albedo.r", "normal.x", "roughness", ...; unique within the material
    float lo = 0, hi = 1;   // value range (spec 8.7); [0, 1] for 8-bit and 16-bit sources
    float loss_weight = 1;  // relative weight in the training loss (manifest "loss_weight"), > 0
    Semantic semantic = Semantic::other;          // what the channel holds (roughness for stored gloss)
    ColorSpace color_space = ColorSpace::linear;  // srgb for colour channels of sRGB textures
};

// What the pixels of one source channel look like (material.cpp measures them).
struct ChannelStats {
    std::optional<float> constant;  // every texel holds exactly this value
    int same_as = -1;               // an earlier channel of the same file with identical texels, else -1
    float min = 0, max = 1;         // value range of the channel
};

// One texture to allocate: its layout with file metadata and ChannelSource::semantic filled in (one entry per
// file channel), normal_mode set for normal maps, and the stats and loss weight of every channel.
struct AllocationInput {
    TextureLayout layout;
    std::vector<ChannelStats> stats;
    std::vector<float> loss_weights;
};

// Fills every ChannelSource (kind, pack_channel, invert, constant_value) of `textures`, in order, and returns
// the pack channels. Constants and identical channels are detected only outside normal maps (a normal map
// keeps X and Y in the pack, spec 5.4). Glossiness is stored as roughness (1 - gloss, invert set) when
// `gloss_to_roughness`. A pack channel fed by several identical source channels takes the sum of their loss
// weights, so the loss counts every source channel once, as the comparison metric does. Fails with limit_exceeded when more than kMaxPackChannels are needed (the message
// lists what each map costs and which maps to drop), invalid_argument when nothing is left to compress.
Result<std::vector<PackChannel>> allocate_channels(std::vector<AllocationInput>& textures, bool gloss_to_roughness);

}  // namespace nmc
