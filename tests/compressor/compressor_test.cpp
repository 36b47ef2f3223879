// The compressor end to end on small synthetic materials: its forward pass against the CPU decoder, a quality
// band, the stored quality against an independent decode, determinism, rate control, bad input, cancel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "compressor/compressor.h"
#include "decoder/cpu/cpu_decoder.h"
#include "synthetic_material.h"

namespace nmc {
namespace {

constexpr int kSize = 32;

CompressOptions small_options(int64_t steps) {
    CompressOptions o;
    o.shape = LatentShape{2, 8, 4, latent_level_count(kSize, kSize, 6, 2)};
    o.steps = steps;
    o.batch_size = 2048;
    o.seed = 7;
    return o;
}

// The 64x64 smooth synthetic material's run: S=2 F=8 4-bit latents, 300 steps of `batch_size` texels, seed 1.
CompressOptions smooth_options(int batch_size) {
    CompressOptions o;
    o.shape = LatentShape{2, 8, 4, latent_level_count(64, 64, 7, 2)};
    o.steps = 300;
    o.batch_size = batch_size;
    o.seed = 1;
    return o;
}

Pack read_back(const std::vector<uint8_t>& file) {
    auto pack = read_pack(file.data(), file.size());
    EXPECT_TRUE(pack.ok()) << pack.status().to_string();
    return pack.ok() ? *pack : Pack{};
}

// The trainer's forward pass of the final quantised model against the CPU decoder on the exported pack.
// The spec leaves only the order of each layer's float32 sum free (8.6); a different order changes acc by a
// few ulps, which changes the output only where it moves the next layer's FP8-rounded input across a
// rounding midpoint. So nearly every value must agree to float32 noise (1e-5), and the rare flipped E4M3
// input (one of 64, a relative step of 1/16 of it, times a weight below 1) moves an output by well under 0.05.
// (When written, all 8190 values were identical: LibTorch's CPU matmul and the decoder summed alike here.)
void expect_forward_pass_matches_cpu_decoder(const NetworkChoice& network,
                                             Arithmetic arithmetic = Arithmetic::float32) {
    const TrainingTarget target = test::synthetic_material(kSize);
    CompressOptions options = small_options(150);
    options.network = network;
    options.arithmetic = arithmetic;
    auto compressor = Compressor::create(target, options);
    ASSERT_TRUE(compressor.ok()) << compressor.status().to_string();
    ASSERT_TRUE((*compressor)->train().ok());
    auto pack = (*compressor)->export_pack();
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    auto file = write_pack(*pack);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto decoder = CpuDecoder::create(read_back(*file));
    ASSERT_TRUE(decoder.ok()) << decoder.status().to_string();

    size_t values = 0, close = 0;
    double worst = 0;
    for (int m = 0; m < target.mip_count; ++m) {
        auto trained = (*compressor)->evaluate_mip(m);
        ASSERT_TRUE(trained.ok()) << trained.status().to_string();
        std::vector<std::vector<float>> decoded;
        ASSERT_TRUE(decoder->decode_mip_channels(m, decoded).ok());
        ASSERT_EQ(decoded.size(), trained->size());
        for (size_t c = 0; c < decoded.size(); ++c) {
            ASSERT_EQ(decoded[c].size(), (*trained)[c].size());
            for (size_t i = 0; i < decoded[c].size(); ++i) {
                const double d = std::fabs(static_cast<double>(decoded[c][i]) - (*trained)[c][i]);
                worst = std::max(worst, d);
                close += d <= 1e-5 ? 1 : 0;
                ++values;
            }
        }
    }
    EXPECT_LT(worst, 0.05);
    EXPECT_GE(static_cast<double>(close), 0.99 * static_cast<double>(values)) << close << " of " << values;
    // The pack holds the chosen network: layer 0 from F, the hidden widths, then the channels.
    const Pack written = read_back(*file);
    ASSERT_EQ(written.network.layers.size(), network.hidden_widths.size() + 1);
    for (size_t l = 0; l < network.hidden_widths.size(); ++l)
        EXPECT_EQ(written.network.layers[l].output_width, network.hidden_widths[l]) << l;
    EXPECT_EQ(written.network.layers.back().weight_type, network.output.weight_type);
    EXPECT_EQ(written.network.arithmetic, arithmetic);
}

TEST(Compressor, ForwardPassMatchesCpuDecoder) { expect_forward_pass_matches_cpu_decoder(NetworkChoice{}); }

// spec 5.6's binary16 arithmetic: the trainer's forward pass (binary16 latent values, bilinear weights and
// activations) is the CPU decoder's on the exported 2.0 pack. The float32 and binary16 activations differ in about
// half their values (Binary16Arithmetic tests), so a trainer that kept the float32 arithmetic would fail the 99%.
TEST(Compressor, Binary16ArithmeticForwardPassMatchesCpuDecoder) {
    expect_forward_pass_matches_cpu_decoder(NetworkChoice{}, Arithmetic::binary16);
}

// Layer widths are selectable (NTC v0.9's 64-48-32, and a two-layer 32-16 with an E4M3 + scale last layer):
// the trainer, the export and the decoder follow the pack's widths.
TEST(Compressor, OtherNetworksMatchCpuDecoder) {
    expect_forward_pass_matches_cpu_decoder(NetworkChoice{{64, 48, 32}, {}});
    expect_forward_pass_matches_cpu_decoder(NetworkChoice{{32, 16}, {WeightType::e4m3, true}});
}

// 64x64 synthetic material, 300 steps of 2048 texels, 8 features of 4 bits at grid scale 2 (about 10 bpp of
// latents): smooth gradients and low-frequency patterns that such a model reconstructs well. Seed 1 gave
// 36.2 dB and a 1.6 degree mean normal angle when written; the band (30 dB, 5 degrees) leaves room for float
// differences between LibTorch versions and CPUs while failing on a broken model or export (a model that
// outputs each channel's mean scores about 17 dB).
TEST(Compressor, QualityBandOnSmoothMaterial) {
    const TrainingTarget target = test::synthetic_material(64);
    auto result = compress(target, smooth_options(2048));
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    EXPECT_GE(result->pack.quality.psnr_db, 30.0);
    ASSERT_EQ(result->pack.quality.textures.size(), 3u);
    EXPECT_GE(result->pack.quality.textures[1].mean_angle_deg, 0.0);
    EXPECT_LT(result->pack.quality.textures[1].mean_angle_deg, 5.0);
}

// spec 8.10 computed here from an independent decode of the written file.
double overall_psnr(const Pack& pack, const TrainingTarget& target) {
    auto decoder = CpuDecoder::create(pack);
    EXPECT_TRUE(decoder.ok());
    std::vector<double> sse(target.channels.size(), 0.0);
    double texels = 0;
    for (int m = 0; m < target.mip_count; ++m) {
        std::vector<std::vector<float>> decoded;
        EXPECT_TRUE(decoder->decode_mip_channels(m, decoded).ok());
        texels += static_cast<double>(decoded[0].size());
        for (size_t c = 0; c < decoded.size(); ++c)
            for (size_t i = 0; i < decoded[c].size(); ++i) {
                const double d = decoded[c][i] - target.planes[static_cast<size_t>(m)][c][i];
                sse[c] += d * d;
            }
    }
    double mse = 0;
    for (double s : sse) mse += s / texels;
    return -10.0 * std::log10(mse / static_cast<double>(sse.size()));
}

TEST(Compressor, StoredPsnrMatchesIndependentDecode) {
    const TrainingTarget target = test::synthetic_material(kSize);
    auto result = compress(target, small_options(120));
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    const Pack pack = read_back(result->file);
    ASSERT_TRUE(pack.quality.present);
    EXPECT_NEAR(pack.quality.psnr_db, overall_psnr(pack, target), 0.01);
    EXPECT_NEAR(pack.quality.bits_per_texel, 8.0 * static_cast<double>(result->file.size()) / (kSize * kSize), 1e-6);
    EXPECT_EQ(pack.quality.channels.size(), target.channels.size());
    EXPECT_EQ(pack.quality.mips.size(), static_cast<size_t>(target.mip_count));
}

// The quantisation trace: every point of the schedule is measured, and on a material smaller than the trace's texel
// set (every texel once) its last point is the PSNR the pack reports, from the trainer's own forward pass (which the
// CPU decoder matches to float32 noise, ForwardPassMatchesCpuDecoder). Rounding the latents loses quality.
TEST(Compressor, QuantisationTraceCoversEveryPhase) {
    const TrainingTarget target = test::synthetic_material(kSize);
    auto result = compress(target, small_options(120));
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    const QuantisationTrace& trace = result->quantisation;
    int64_t texels = 0;
    for (const auto& mip : target.planes) texels += static_cast<int64_t>(mip[0].size());
    EXPECT_EQ(trace.evaluation_texels, texels);
    for (double db : {trace.float_model_db, trace.rounded_latents_db, trace.before_weight_rounding_db,
                      trace.rounded_weights_db, trace.final_db}) {
        EXPECT_TRUE(std::isfinite(db));
        EXPECT_GT(db, 15.0);
    }
    EXPECT_LT(trace.rounded_latents_db, trace.float_model_db);
    EXPECT_NEAR(trace.final_db, result->pack.quality.psnr_db, 0.01);
}

// Straight-through latent rounding: after the switch the forward pass samples code values, so the trace's last
// point is still the pack's PSNR (the export's rounding changes nothing it saw), and the model differs from a freeze.
TEST(Compressor, StraightThroughLatentRoundingKeepsTrainingTheLatents) {
    const TrainingTarget target = test::synthetic_material(kSize);
    CompressOptions o = small_options(120);
    o.latent_rounding_fraction = 0.5;
    o.latent_rounding = LatentRounding::freeze;
    auto frozen = compress(target, o);
    o.latent_rounding = LatentRounding::straight_through;
    auto through = compress(target, o);
    ASSERT_TRUE(frozen.ok()) << frozen.status().to_string();
    ASSERT_TRUE(through.ok()) << through.status().to_string();
    EXPECT_NEAR(through->quantisation.final_db, through->pack.quality.psnr_db, 0.01);
    EXPECT_LT(through->quantisation.rounded_latents_db, through->quantisation.float_model_db);
    EXPECT_NE(through->pack.latents.levels[0].codes, frozen->pack.latents.levels[0].codes);
    EXPECT_GE(through->pack.quality.psnr_db, frozen->pack.quality.psnr_db - 1.0);
}

// Sparse latent Adam (LatentAdam::sparse) is wired through: with small batches that touch few latents per step it
// trains to the same quality band as dense Adam, but to another model (dense Adam keeps moving the latents a batch
// did not touch on their momentum; sparse leaves them).
TEST(Compressor, SparseLatentAdamTrainsAnotherModel) {
    const TrainingTarget target = test::synthetic_material(64);
    CompressOptions o = smooth_options(256);
    auto dense = compress(target, o);
    o.latent_adam = LatentAdam::sparse;
    auto sparse = compress(target, o);
    ASSERT_TRUE(dense.ok()) << dense.status().to_string();
    ASSERT_TRUE(sparse.ok()) << sparse.status().to_string();
    EXPECT_GE(sparse->pack.quality.psnr_db, 25.0);
    EXPECT_NEAR(sparse->pack.quality.psnr_db, dense->pack.quality.psnr_db, 2.0);
    EXPECT_NE(sparse->pack.latents.levels[0].codes, dense->pack.latents.levels[0].codes);
}

// The training loss weights pack channel c by w_c / sum(w) (the manifest's loss_weight): on the same model and texels,
// the loss with weights w is that combination of the per-channel MSEs (each measured with a one-hot weight). The
// model's initial values do not depend on the weights (same seed).
TEST(Compressor, LossWeightsWeighTheChannelsMse) {
    const TrainingTarget base = test::synthetic_material(kSize);
    std::vector<int64_t> texels(kSize * kSize);
    for (size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<int64_t>(i);
    const auto loss_with = [&](const std::vector<float>& weights) {
        TrainingTarget target = base;
        for (size_t c = 0; c < weights.size(); ++c) target.channels[c].loss_weight = weights[c];
        auto compressor = Compressor::create(target, small_options(10));
        EXPECT_TRUE(compressor.ok()) << compressor.status().to_string();
        if (!compressor.ok()) return 0.0;
        auto step = (*compressor)->batch_gradients(texels, TrainerPath::eager, false);
        EXPECT_TRUE(step.ok()) << step.status().to_string();
        return step.ok() ? step->loss : 0.0;
    };
    const size_t channels = base.channels.size();
    std::vector<double> channel_mse;
    for (size_t c = 0; c < channels; ++c) {
        std::vector<float> one_hot(channels, 0.0f);
        one_hot[c] = 1.0f;
        channel_mse.push_back(loss_with(one_hot));
        EXPECT_GT(channel_mse.back(), 0.0) << c;  // an untrained model errs on every channel
    }
    const std::vector<float> weights = {1, 1, 1, 2, 2, 8};  // the roughness map (channel 5) weighted up
    double expected = 0, sum = 0;
    for (size_t c = 0; c < channels; ++c) {
        expected += weights[c] * channel_mse[c];
        sum += weights[c];
    }
    expected /= sum;
    EXPECT_NEAR(loss_with(weights), expected, 1e-6 * expected);
    double uniform = 0;
    for (double m : channel_mse) uniform += m / static_cast<double>(channels);
    EXPECT_NEAR(loss_with(std::vector<float>(channels, 3.0f)), uniform, 1e-6 * uniform);  // only ratios count
    EXPECT_GT(std::fabs(expected - uniform), 1e-3 * uniform);  // the weights changed the loss
}

// Trained with its loss weight raised, a channel is reproduced better: the roughness map at weight 8 against 1
// (measured when written: 31.57 -> 32.66 dB; CPU runs of one seed are deterministic, the bound leaves room for
// other CPUs' float rounding).
TEST(Compressor, RaisedLossWeightImprovesThatChannel) {
    TrainingTarget target = test::synthetic_material(kSize);
    auto plain = compress(target, small_options(150));
    target.channels[5].loss_weight = 8.0f;
    auto weighted = compress(target, small_options(150));
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    ASSERT_TRUE(weighted.ok()) << weighted.status().to_string();
    std::printf("[ measured ] roughness channel: %.2f dB at weight 1, %.2f dB at weight 8\n",
                plain->pack.quality.channels[5], weighted->pack.quality.channels[5]);
    EXPECT_GT(weighted->pack.quality.channels[5], plain->pack.quality.channels[5] + 0.5);
}

// Same seed -> the same bytes (the informational training time aside, which is zeroed before comparing);
// another seed -> other bytes.
TEST(Compressor, SameSeedGivesIdenticalPackOnCpu) {
    const TrainingTarget target = test::synthetic_material(kSize);
    const auto file_without_timing = [&](uint64_t seed) {
        CompressOptions o = small_options(80);
        o.seed = seed;
        auto result = compress(target, o);
        EXPECT_TRUE(result.ok()) << result.status().to_string();
        if (!result.ok()) return std::vector<uint8_t>{};
        result->pack.encoder.training_seconds = 0;
        auto bytes = write_pack(result->pack);
        EXPECT_TRUE(bytes.ok());
        return bytes.ok() ? *bytes : std::vector<uint8_t>{};
    };
    const std::vector<uint8_t> a = file_without_timing(3);
    const std::vector<uint8_t> b = file_without_timing(3);
    const std::vector<uint8_t> c = file_without_timing(4);
    ASSERT_FALSE(a.empty());
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
}

// The whole written file stays within the budget, and a bigger budget buys a bigger file.
TEST(Compressor, RateControlKeepsFileWithinBudget) {
    const int size = 256;
    const TrainingTarget target = test::synthetic_material(size);
    size_t previous = 0;
    for (double bpp : {3.0, 6.0, 12.0}) {
        CompressOptions o;
        o.target_bpp = bpp;
        o.steps = 2;
        o.batch_size = 256;
        auto result = compress(target, o);
        ASSERT_TRUE(result.ok()) << result.status().to_string();
        EXPECT_LE(static_cast<double>(result->file.size()), bpp * size * size / 8.0) << bpp;
        EXPECT_GT(result->file.size(), previous) << bpp;
        previous = result->file.size();
    }
}

TEST(Compressor, BadInputIsRejectedClearly) {
    const TrainingTarget target = test::synthetic_material(kSize);
    CompressOptions o = small_options(10);
    o.device = "gpu";
    EXPECT_EQ(Compressor::create(target, o).status().code(), StatusCode::invalid_argument);
    o.device = "cuda:x";
    EXPECT_EQ(Compressor::create(target, o).status().code(), StatusCode::invalid_argument);
    // No build or machine has 100 CUDA devices: either no CUDA in LibTorch or too few devices.
    o.device = "cuda:99";
    EXPECT_EQ(Compressor::create(target, o).status().code(), StatusCode::backend_unavailable);

    CompressOptions tiny;
    tiny.target_bpp = 0.05;
    const auto status = Compressor::create(test::synthetic_material(64), tiny).status();
    EXPECT_EQ(status.code(), StatusCode::invalid_argument);
    EXPECT_NE(status.message().find("too small"), std::string::npos) << status.message();

    for (const std::vector<int>& hidden : {std::vector<int>{}, std::vector<int>{64, 0}, std::vector<int>{257},
                                           std::vector<int>(8, 16)}) {
        CompressOptions bad_network = small_options(10);
        bad_network.network.hidden_widths = hidden;
        EXPECT_EQ(Compressor::create(target, bad_network).status().code(), StatusCode::invalid_argument)
            << hidden.size();
    }

    TrainingTarget broken = target;
    broken.planes[1][0].pop_back();
    EXPECT_EQ(Compressor::create(broken, small_options(10)).status().code(), StatusCode::invalid_argument);
}

// The trainer choice on the CPU: auto trains eager; fused needs a CUDA device (invalid_argument in builds with the
// kernels) and a build with them (backend_unavailable otherwise).
TEST(Compressor, TrainerPathOnCpu) {
    const TrainingTarget target = test::synthetic_material(kSize);
    CompressOptions o = small_options(10);
    auto automatic = Compressor::create(target, o);
    ASSERT_TRUE(automatic.ok()) << automatic.status().to_string();
    EXPECT_EQ((*automatic)->trainer_path(), TrainerPath::eager);
    o.trainer = TrainerPath::fused;
    const Status fused = Compressor::create(target, o).status();
    EXPECT_TRUE(fused.code() == StatusCode::invalid_argument || fused.code() == StatusCode::backend_unavailable)
        << fused.to_string();
    for (TrainerPath p : {TrainerPath::automatic, TrainerPath::fused, TrainerPath::eager})
        EXPECT_EQ(trainer_path_from_string(to_string(p)), p);
    EXPECT_FALSE(trainer_path_from_string("gpu").has_value());
}

// Presets follow the trainer: the CPU keeps the short schedules, the fused CUDA trainer trains NTC's 20k x 65536 for
// `normal`; explicit settings win over either.
TEST(Compressor, PresetScheduleFollowsTheTrainer) {
    EXPECT_EQ(preset_settings(QualityPreset::normal).steps, 6000);
    EXPECT_EQ(preset_settings(QualityPreset::normal).batch_size, 8192);
    EXPECT_EQ(preset_settings(QualityPreset::normal, true).steps, 20000);
    EXPECT_EQ(preset_settings(QualityPreset::normal, true).batch_size, 65536);
    EXPECT_EQ(preset_settings(QualityPreset::fast).steps, 600);
    EXPECT_EQ(preset_settings(QualityPreset::fast, true).steps, 10000);
    EXPECT_EQ(preset_settings(QualityPreset::fast, true).batch_size, 65536);
    EXPECT_EQ(preset_settings(QualityPreset::best, true).steps, preset_settings(QualityPreset::best).steps);
    CompressOptions o;
    EXPECT_FALSE(trains_fused(o));  // the CPU
    EXPECT_EQ(effective_steps(o), 6000);
    o.device = "cuda";
    o.trainer = TrainerPath::eager;
    EXPECT_FALSE(trains_fused(o));
    EXPECT_EQ(effective_settings(o).batch_size, 8192);
    o.trainer = TrainerPath::automatic;
    o.network.hidden_widths = {64, 48, 32};  // not the fused kernels' network
    EXPECT_FALSE(trains_fused(o));
    o.steps = 123;
    o.batch_size = 1000;
    o.network_learning_rate = 0.03f;
    const PresetSettings s = effective_settings(o);
    EXPECT_EQ(s.steps, 123);
    EXPECT_EQ(s.batch_size, 1000);
    EXPECT_FLOAT_EQ(s.network_learning_rate, 0.03f);
    EXPECT_FLOAT_EQ(s.latent_learning_rate, 0.1f);
}

TEST(Compressor, CancelFromCallbackStopsWithCancelled) {
    const TrainingTarget target = test::synthetic_material(kSize);
    CompressOptions o = small_options(100);
    o.progress_interval = 5;
    int calls = 0;
    int64_t last_step = 0;
    auto result = compress(target, o, [&](const TrainingProgress& p) {
        ++calls;
        last_step = p.step;
        return false;
    });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::cancelled);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(last_step, 5);
}

}  // namespace
}  // namespace nmc
