// What the compressor learns from: a material's pack-channel planes and layout, independent of how they were
// loaded (material/material.h loads them from image files; tests build them in memory).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/texture_layout.h"
#include "format/pack.h"
#include "material/material.h"

namespace nmc {

// One pack channel to train: its name, its output range (spec 5.3) and its weight in the loss.
struct TrainingChannel {
    std::string name;
    float lo = 0.0f;
    float hi = 1.0f;
    float loss_weight = 1.0f;
};

// What the compressor learns: every mip of every pack channel as a float plane normalised to [0, 1]
// (the value v stands for lo + (hi - lo) * v of the channel's range).
struct TrainingTarget {
    std::string name;
    std::string source_folder;  // recorded as encoder.source_folder: relative to the pack's folder (spec 5.7)
    int width = 0;
    int height = 0;
    int mip_count = 1;
    AddressMode address_mode = AddressMode::wrap;
    std::vector<TrainingChannel> channels;
    std::vector<TextureLayout> textures;
    // The source file of every texture (Material::source_paths); empty for in-memory materials. Quality is
    // measured against these files when present, else against source images rebuilt from the planes.
    std::vector<std::string> source_paths;
    // planes[m][c]: mip m of pack channel c, w_m * h_m values row-major (w_m = max(1, W >> m)).
    std::vector<std::vector<std::vector<float>>> planes;
};

// Checks sizes, ranges and plane sizes. Fails with invalid_argument naming what is wrong.
Status check_training_target(const TrainingTarget& target);

// Moves a loaded material's planes and layout into a TrainingTarget (address mode: wrap).
TrainingTarget training_target_from_material(Material&& material);

}  // namespace nmc
