// Warm start between latent shapes (compressor/warm_start.h): latent levels resampled, features kept or
// added with zero weight, first-layer columns moved with their inputs.
#include "compressor/warm_start.h"

#include <torch/nn/functional/upsampling.h>
#include <torch/types.h>

#include <algorithm>
#include <string>
#include <vector>

namespace nmc::detail {
namespace {

// Level k of a model's latent tensor as [1, F, h, w].
torch::Tensor level_image(const Model& model, int k) {
    const int64_t offset = model.tables.level_offset[k].item<int64_t>();
    const int64_t w = model.tables.level_width_index[k].item<int64_t>();
    const int64_t h = model.tables.level_height_index[k].item<int64_t>();
    return model.latents.detach().narrow(0, offset, w * h).t().reshape({1, -1, h, w});
}

// The features of `from` that `to` keeps, in their original order: all of them when `to` has at least as many,
// else the ones whose first-layer weight columns (both latent levels) carry the most weight.
std::vector<int64_t> kept_features(const Model& from, int to_features) {
    const int64_t f = from.shape.feature_count;
    std::vector<int64_t> kept(static_cast<size_t>(f));
    for (int64_t i = 0; i < f; ++i) kept[static_cast<size_t>(i)] = i;
    if (to_features >= f) return kept;
    const torch::Tensor w = from.weights.front().detach().to(torch::kCPU);
    const torch::Tensor norm_tensor = (w.narrow(1, 0, f).square() + w.narrow(1, f, f).square()).sum(0).contiguous();
    const std::vector<float> norm(norm_tensor.data_ptr<float>(), norm_tensor.data_ptr<float>() + f);
    std::sort(kept.begin(), kept.end(), [&](int64_t a, int64_t b) {
        const float na = norm[static_cast<size_t>(a)], nb = norm[static_cast<size_t>(b)];
        return na != nb ? na > nb : a < b;
    });
    kept.resize(static_cast<size_t>(to_features));
    std::sort(kept.begin(), kept.end());
    return kept;
}

}  // namespace

Status warm_start_model(const Model& from, Model& to) {
    const auto& wf = from.network.widths;
    const auto& wt = to.network.widths;
    if (wf.size() != wt.size() || !std::equal(wf.begin() + 1, wf.end(), wt.begin() + 1))
        return Status(StatusCode::invalid_argument,
                      "warm start needs the same hidden layer widths and channel count in both networks");
    torch::NoGradGuard no_grad;
    const std::vector<int64_t> kept = kept_features(from, to.shape.feature_count);
    const auto kept_count = static_cast<int64_t>(kept.size());
    const torch::Tensor kept_index = torch::tensor(kept, torch::kLong);

    // Latents, level by level; features beyond the kept ones keep `to`'s fresh initialisation.
    for (int k = 0; k < to.shape.level_count; ++k) {
        const int64_t offset = to.tables.level_offset[k].item<int64_t>();
        const int64_t w = to.tables.level_width_index[k].item<int64_t>();
        const int64_t h = to.tables.level_height_index[k].item<int64_t>();
        torch::Tensor source = level_image(from, std::min(k, from.shape.level_count - 1)).to(torch::kCPU);
        source = source.index_select(1, kept_index);
        const torch::Tensor resized =
            source.size(2) == h && source.size(3) == w
                ? source
                : torch::nn::functional::interpolate(source, torch::nn::functional::InterpolateFuncOptions()
                                                                 .size(std::vector<int64_t>{h, w})
                                                                 .mode(torch::kBilinear)
                                                                 .align_corners(false));
        const torch::Tensor texels = resized.reshape({kept_count, h * w}).t().clamp(to.latent_lo, to.latent_hi);
        to.latents.narrow(0, offset, h * w).narrow(1, 0, kept_count).copy_(texels.to(to.latents.device()));
    }

    // First layer: columns follow their inputs; new features' columns are zero. Padding columns stay zero.
    const int64_t f_from = from.shape.feature_count;
    const int64_t f_to = to.shape.feature_count;
    const torch::Tensor old_first = from.weights.front().detach().to(torch::kCPU);
    torch::Tensor first = torch::zeros({old_first.size(0), wt.front()}, torch::kFloat);
    for (int64_t i = 0; i < kept_count; ++i) {
        first.select(1, i).copy_(old_first.select(1, kept[static_cast<size_t>(i)]));
        first.select(1, f_to + i).copy_(old_first.select(1, f_from + kept[static_cast<size_t>(i)]));
    }
    first.narrow(1, 2 * f_to, 13).copy_(old_first.narrow(1, 2 * f_from, 13));  // 12 encoding values, LOD
    to.weights.front().copy_(first.to(to.weights.front().device()));
    for (size_t l = 0; l < to.weights.size(); ++l) {
        if (l > 0) to.weights[l].copy_(from.weights[l].detach().to(to.weights[l].device()));
        to.biases[l].copy_(from.biases[l].detach().to(to.biases[l].device()));
    }
    return Status::success();
}

}  // namespace nmc::detail
