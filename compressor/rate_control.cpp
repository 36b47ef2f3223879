// Rate control: byte counts of spec 6 and 7 and the latent-shape heuristic documented in docs/compressor.md.
#include "compressor/rate_control.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace nmc {
namespace {

constexpr uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

constexpr int kMaxHiddenLayers = 7;  // spec 5.6: at most 8 layers with the output layer
constexpr int kMaxLayerWidth = 256;
constexpr int kMaxGridScale = 8;
// Fewer than 4 features (NTC's minimum too) measured far worse at equal bytes: S=1 F=2 b=4 gave 32.3 dB where
// S=2 F=8 b=4 gave 34.4 at 10 bpp (512^2 demo, fast preset).
constexpr int kMinFeatures = 4;
constexpr int kMaxFeatures = 16;
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
    network.widths.push_back(static_cast<int>(align_up(static_cast<uint64_t>(2 * feature_count + 13), 16)));
    for (int w : choice.hidden_widths) network.widths.push_back(w);
    network.widths.push_back(channel_count);
    network.output_weight_type = output.weight_type;
    network.output_has_scale = output.weight_type == WeightType::int8 || output.has_scale;
    return network;
}

int latent_level_count(int width, int height, int mip_count, int grid_scale) {
    int count = 2;
    while (count < mip_count + 1 && count < 16 &&
           (latent_level_size(width, grid_scale, count - 1) > 1 || latent_level_size(height, grid_scale, count - 1) > 1))
        ++count;
    return count;
}

// spec 6: o_{k+1} = align16(o_k + n_k), n_k = ceil(w_k * h_k * F * b_k / 8); size = o_{K-1} + n_{K-1}.
uint64_t latent_section_bytes(int width, int height, const LatentShape& shape) {
    uint64_t offset = 0;
    for (int k = 0; k < shape.level_count; ++k) {
        const uint64_t texels = static_cast<uint64_t>(latent_level_size(width, shape.grid_scale, k)) *
                                static_cast<uint64_t>(latent_level_size(height, shape.grid_scale, k));
        const uint64_t bytes = (texels * static_cast<uint64_t>(shape.feature_count * shape.bits) + 7) / 8;
        offset = (k == 0 ? 0 : align_up(offset, 16)) + bytes;
    }
    return offset;
}

// spec 7: weights, pad to 4, scales, biases, pad to 16, per layer.
uint64_t weight_section_bytes(const NetworkShape& network) {
    uint64_t size = 0;
    const size_t layers = network.widths.size() - 1;
    for (size_t l = 0; l < layers; ++l) {
        const auto inputs = static_cast<uint64_t>(network.widths[l]);
        const auto outputs = static_cast<uint64_t>(network.widths[l + 1]);
        size = align_up(size + inputs * outputs, 4);
        if (l + 1 == layers && network.output_has_scale) size += 4 * outputs;
        size = align_up(size + 2 * outputs, 16);
    }
    return size;
}

uint64_t metadata_bytes_estimate(int texture_count, int channel_count) {
    // Header and a three-entry table (64 + 3 * 48), up to 63 bytes of alignment before each of the three
    // sections, and the JSON as written (uncompressed bound; zstd makes it smaller): a fixed part with the
    // encoder and quality objects and up to 16 per-mip values, plus per texture and per pack channel.
    const uint64_t container = 64 + 3 * 48 + 3 * 63;
    const uint64_t json = 2048 + 700 * static_cast<uint64_t>(texture_count) + 160 * static_cast<uint64_t>(channel_count);
    return container + json;
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
    for (int scale = 1; scale <= kMaxGridScale; ++scale)
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
