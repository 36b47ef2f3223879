// Rate control: the exact byte cost of a latent shape and a network (spec 6 and 7), and the choice of the
// latent shape that fills a bits-per-texel budget. Pure arithmetic, no LibTorch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "format/pack.h"

namespace nmc {

// The latent pyramid's shape: every level has `feature_count` features of `bits` bits (spec 5.5).
struct LatentShape {
    int grid_scale = 4;     // S, 1..16: level 0 has one latent texel per S x S mip-0 texels
    int feature_count = 16; // F, 1..16
    int bits = 4;           // b, 1, 2, 4 or 8
    int level_count = 2;    // K, 2..16
};

// The layer widths and weight types of the network, without weights (spec 5.6).
struct NetworkShape {
    std::vector<int> widths;                // input width, hidden widths..., output width (channel count)
    WeightType output_weight_type = WeightType::int8;
    bool output_has_scale = true;           // must be true for int8
};

// How the last layer's weights are stored: int8 + per-output scale (the default), or E4M3 with or without
// a per-output scale (kept for measuring the choice).
struct OutputLayerFormat {
    WeightType weight_type = WeightType::int8;
    bool has_scale = true;  // must be true for int8
};

// The network a user picks (spec 5.6): the hidden layers' widths and the last layer's format. Layer 0's input
// width follows F and the last layer's output width the channel count. The default is NTC v0.8's 64-64-64.
struct NetworkChoice {
    std::vector<int> hidden_widths{64, 64, 64};  // 1..7 layers of 1..256 outputs (spec 5.6: 2..8 layers in all)
    OutputLayerFormat output;
};

// invalid_argument naming the problem when `choice` breaks spec 5.6's limits.
Status check_network_choice(const NetworkChoice& choice);

// The network for `feature_count` features and `channel_count` outputs: round_up(2F + 13, 16) -> hidden widths
// -> C (spec 5.6).
NetworkShape network_shape(int feature_count, int channel_count, const NetworkChoice& choice = {});

// The full pyramid's level count for a material, the most levels it can use: one level pair per mip (K = M + 1)
// until level K-1 is 1 x 1 texel, at least 2, at most 16 (spec 9).
int latent_level_count(int width, int height, int mip_count, int grid_scale);

// The level count nmc writes unless told otherwise: two, so that every mip reads levels 0 and 1 (spec 8.1) and no
// level serves as the coarse level of one mip and the fine level of the next. Measured on the H200 at 100k steps and
// NTC's file sizes against the full pyramid (bench/results/notes-compressor.txt, "Two latent levels"): +0.45 to
// +1.62 dB psnr8_mip0 on all 11 shared materials at 5 bpp, with about 6% fewer latent bytes.
constexpr int kDefaultLatentLevelCount = 2;

// Exact raw byte count of the LATN section of this shape (format's latent_section_size).
uint64_t latent_section_bytes(int width, int height, const LatentShape& shape);

// Exact raw byte count of the WGHT section of this network (format's weight_section_size).
uint64_t weight_section_bytes(const NetworkShape& network);

// Estimate of everything else in the file: the container (format's container_overhead_bound) and the JSON
// metadata for `texture_count` textures with `channel_count` pack channels in total. Errs on the large side.
uint64_t metadata_bytes_estimate(int texture_count, int channel_count);

struct RateChoice {
    LatentShape shape;
    NetworkShape network;
    uint64_t estimated_file_bytes = 0;
    uint64_t budget_bytes = 0;
};

// What rate control ranks first among shapes of about the same latent bytes (docs/compressor.md, "Rate control"; the
// sweeps: bench/results/notes-compressor.txt). Measured on the H200 at 5 bpp: 3000-step runs do best with the finest
// grid (S=2 F=4), 100k-step runs with the most features per latent texel (S=4 F=16: +0.6 dB over 6 materials, up to
// +1.8).
enum class ShapePreference {
    finest_grid,   // the smaller grid scale S first
    most_features  // grid scales up to kMostFeaturesMaxScale (the measured ones) first, and among them the
                   // larger F first; coarser grids as finest_grid
};
constexpr int64_t kMostFeaturesMinSteps = 50000;
constexpr int kMostFeaturesMaxScale = 4;

// most_features from kMostFeaturesMinSteps training steps on, else finest_grid.
ShapePreference shape_preference_for_steps(int64_t steps);

// Picks the latent shape (S 1..8, F 4..16, b in {1, 2, 4, 8}) for a file of at most
// target_bpp * W * H / 8 bytes. Heuristic (docs/compressor.md): among the shapes that fit, those within 10%
// of the largest latent byte count compete; among them b = 4 is preferred, then what `preference` says, then
// the more bytes. Fails with invalid_argument when even the smallest shape does not fit or target_bpp is not
// positive.
Result<RateChoice> choose_latent_shape(int width, int height, int channel_count, int texture_count,
                                       double target_bpp, const NetworkChoice& network = {},
                                       ShapePreference preference = ShapePreference::finest_grid);

}  // namespace nmc
