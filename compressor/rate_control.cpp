// Rate control: byte counts of spec 6 and 7 and the latent-shape heuristic documented in docs/compressor.md.
#include "compressor/rate_control.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "format/section_sizes.h"

namespace nmc {
namespace {

constexpr int kMaxHiddenLayers = kMaxLayers - 1;  // and the output layer
// The grid scales rate control tries (spec 9 allows up to kMaxGridScale).
constexpr int kMaxChosenGridScale = 8;
// Fewer than 4 features (NTC's minimum too) measured far worse at equal bytes: S=1 F=2 b=4 gave 32.3 dB where
// S=2 F=8 b=4 gave 34.4 at 10 bpp (512^2 demo, fast preset).
constexpr int kMinFeatures = 4;
constexpr int kBitCounts[] = {1, 2, 4, 8};
// Shapes within this fraction of the largest fitting latent byte count count as equally good (see header).
constexpr double kNearBestFraction = 0.90;

}  // namespace

Status check_network_choice(const NetworkChoice& choice) {
    const auto fail = [](const std::string& m) { return Status(StatusCode::invalid_argument, m); };
    if (choice.hidden_widths.empty() || choice.hidden_widths.size() > kMaxHiddenLayers)
        return fail("the network needs 1 to " + std::to_string(kMaxHiddenLayers) + " hidden layers, got " +
                    std::to_string(choice.hidden_widths.size()));
    for (int w : choice.hidden_widths)
        if (w < 1 || w > kMaxLayerWidth)
            return fail("hidden layer widths must be 1.." + std::to_string(kMaxLayerWidth) + ", got " +
                        std::to_string(w));
    if (choice.output.weight_type == WeightType::int8 && !choice.output.has_scale)
        return fail("an int8 output layer needs per-output scales (spec 5.6)");
    return Status::success();
}

NetworkShape network_shape(int feature_count, int channel_count, const NetworkChoice& choice) {
    const OutputLayerFormat& output = choice.output;
    NetworkShape network;
    network.widths.push_back(padded_network_input_count(feature_count));
    for (int w : choice.hidden_widths) network.widths.push_back(w);
    network.widths.push_back(channel_count);
    network.output_weight_type = output.weight_type;
    network.output_has_scale = output.weight_type == WeightType::int8 || output.has_scale;
    return network;
}

int latent_level_count(int width, int height, int mip_count, int grid_scale) {
    int count = 2;
    while (count < mip_count + 1 && count < kMaxLevels &&
           (latent_level_size(width, grid_scale, count - 1) > 1 || latent_level_size(height, grid_scale, count - 1) > 1))
        ++count;
    return count;
}

uint64_t latent_section_bytes(int width, int height, const LatentShape& shape) {
    LatentGrids latents;
    latents.feature_count = shape.feature_count;
    latents.grid_scale = shape.grid_scale;
    for (int k = 0; k < shape.level_count; ++k) {
        LatentLevel level;
        level.width = latent_level_size(width, shape.grid_scale, k);
        level.height = latent_level_size(height, shape.grid_scale, k);
        level.bits = shape.bits;
        latents.levels.push_back(level);
    }
    return latent_section_size(latents);
}

uint64_t weight_section_bytes(const NetworkShape& network) {
    Network layers;
    std::vector<bool> has_scale;
    for (size_t l = 0; l + 1 < network.widths.size(); ++l) {
        Layer layer;
        layer.input_width = network.widths[l];
        layer.output_width = network.widths[l + 1];
        layers.layers.push_back(layer);
        has_scale.push_back(l + 2 == network.widths.size() && network.output_has_scale);
    }
    return weight_section_size(layers, has_scale);
}

uint64_t metadata_bytes_estimate(int texture_count, int channel_count) {
    // The container around the three sections, and the JSON as written (uncompressed bound; zstd makes it smaller):
    // a fixed part with the encoder and quality objects and up to 16 per-mip values, plus per texture and per pack
    // channel.
    const uint64_t json = 2048 + 700 * static_cast<uint64_t>(texture_count) + 160 * static_cast<uint64_t>(channel_count);
    return container_overhead_bound(3) + json;
}

ShapePreference shape_preference_for_steps(int64_t steps) {
    return steps >= kMostFeaturesMinSteps ? ShapePreference::most_features : ShapePreference::finest_grid;
}

Result<RateChoice> choose_latent_shape(int width, int height, int channel_count, int texture_count,
                                       double target_bpp, const NetworkChoice& network,
                                       ShapePreference preference) {
    if (!(target_bpp > 0) || !std::isfinite(target_bpp))
        return Status(StatusCode::invalid_argument, "bits per texel must be a positive number");
    const auto budget = static_cast<uint64_t>(target_bpp * width * height / 8.0);
    const uint64_t fixed = metadata_bytes_estimate(texture_count, channel_count);

    std::vector<RateChoice> fitting;
    uint64_t smallest = UINT64_MAX;
    for (int scale = 1; scale <= kMaxChosenGridScale; ++scale)
        for (int features = kMinFeatures; features <= kMaxFeatures; ++features)
            for (int bits : kBitCounts) {
                RateChoice choice;
                choice.shape = {scale, features, bits, kDefaultLatentLevelCount};
                choice.network = network_shape(features, channel_count, network);
                choice.estimated_file_bytes = latent_section_bytes(width, height, choice.shape) +
                                              weight_section_bytes(choice.network) + fixed;
                choice.budget_bytes = budget;
                smallest = std::min(smallest, choice.estimated_file_bytes);
                if (choice.estimated_file_bytes <= budget) fitting.push_back(choice);
            }
    if (fitting.empty()) {
        const double min_bpp = 8.0 * static_cast<double>(smallest) / (static_cast<double>(width) * height);
        char message[256];
        std::snprintf(message, sizeof message,
                      "a %.3g bpp budget (%llu bytes) is too small for this %dx%d material: the smallest latent "
                      "shape needs about %llu bytes (%.3g bpp)",
                      target_bpp, static_cast<unsigned long long>(budget), width, height,
                      static_cast<unsigned long long>(smallest), min_bpp);
        return Status(StatusCode::invalid_argument, message);
    }
    uint64_t best_latent = 0;
    for (const auto& c : fitting) best_latent = std::max(best_latent, latent_section_bytes(width, height, c.shape));
    const auto near_best = [&](const RateChoice& c) {
        return static_cast<double>(latent_section_bytes(width, height, c.shape)) >=
               kNearBestFraction * static_cast<double>(best_latent);
    };
    const auto better = [&](const RateChoice& a, const RateChoice& b) {
        if (near_best(a) != near_best(b)) return near_best(a);
        if ((a.shape.bits == 4) != (b.shape.bits == 4)) return a.shape.bits == 4;
        if (preference == ShapePreference::most_features) {
            // Fewer, richer latent texels, but only among the grid scales measured (up to 4); coarser grids keep
            // the finest-grid order below.
            const bool a_measured = a.shape.grid_scale <= kMostFeaturesMaxScale;
            const bool b_measured = b.shape.grid_scale <= kMostFeaturesMaxScale;
            if (a_measured != b_measured) return a_measured;
            if (a_measured && a.shape.feature_count != b.shape.feature_count)
                return a.shape.feature_count > b.shape.feature_count;
        }
        if (a.shape.grid_scale != b.shape.grid_scale) return a.shape.grid_scale < b.shape.grid_scale;
        return a.estimated_file_bytes > b.estimated_file_bytes;
    };
    return *std::min_element(fitting.begin(), fitting.end(), better);
}

}  // namespace nmc
