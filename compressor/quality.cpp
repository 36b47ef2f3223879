// Quality measurement (spec 5.8, 8.10): decode every mip with the CPU decoder and compare with the target.
// Sums are in double; each channel's mean squared error is taken over all texels of all mips.
#include "compressor/quality.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "decoder/cpu/cpu_decoder.h"
#include "decoder/cpu/reference_math.h"

namespace nmc {
namespace {

constexpr double kRadiansToDegrees = 57.29577951308232;

double mean(const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// -10 log10(mse), or 99 for mse == 0 (spec 5.8).
double psnr_from_mse(double mse) { return mse > 0 ? -10.0 * std::log10(mse) : 99.0; }

}  // namespace

Result<QualityReport> measure_quality(const Pack& pack, const TrainingTarget& target) {
    const size_t channels = target.channels.size();
    if (pack.material.width != target.width || pack.material.height != target.height ||
        pack.material.mip_count != target.mip_count || pack.channels.size() != channels ||
        pack.textures.size() != target.textures.size())
        return Status(StatusCode::invalid_argument,
                      "measure_quality: the pack does not describe the target (size, mips, channels or textures)");
    auto decoder = CpuDecoder::create(pack);
    if (!decoder.ok()) return decoder.status().with_context("measure_quality");

    const size_t textures = target.textures.size();
    const int mips = target.mip_count;
    // Squared-error sums: per channel per mip (pack channels, normalised), per texture channel per mip.
    std::vector<std::vector<double>> channel_sse(channels, std::vector<double>(static_cast<size_t>(mips), 0.0));
    std::vector<std::vector<std::vector<double>>> texture_sse(textures);
    for (size_t t = 0; t < textures; ++t)
        texture_sse[t].assign(target.textures[t].channels.size(), std::vector<double>(static_cast<size_t>(mips), 0.0));
    std::vector<double> mip_texels(static_cast<size_t>(mips), 0.0);
    std::vector<double> psnr8_sse;   // per source channel over all textures, mip 0, in 8-bit codes
    std::vector<double> angle_sum(textures, 0.0);
    double texels0 = 0;

    std::vector<float> lo(channels), range(channels);
    for (size_t c = 0; c < channels; ++c) {
        lo[c] = target.channels[c].lo;
        range[c] = target.channels[c].hi - target.channels[c].lo;
    }
    std::vector<std::vector<float>> decoded;
    for (int m = 0; m < mips; ++m) {
        NMC_RETURN_IF_ERROR(decoder->decode_mip_channels(m, decoded));
        const size_t texels = decoded[0].size();
        mip_texels[static_cast<size_t>(m)] = static_cast<double>(texels);
        if (m == 0) texels0 = static_cast<double>(texels);
        for (size_t c = 0; c < channels; ++c) {
            double sse = 0;
            const std::vector<float>& reference = target.planes[static_cast<size_t>(m)][c];
            for (size_t i = 0; i < texels; ++i) {
                const double d = (static_cast<double>(decoded[c][i]) - lo[c]) / range[c] - reference[i];
                sse += d * d;
            }
            channel_sse[c][static_cast<size_t>(m)] = sse;
        }
        // Per texture: the decoder's spec 8.8-8.9 output against the same transform of the target.
        std::vector<float> reference_pack(channels);
        for (size_t t = 0; t < textures; ++t) {
            const TextureLayout& layout = target.textures[t];
            const size_t n = layout.channels.size();
            auto image = decoder->decode_texture(static_cast<int>(t), m);
            if (!image.ok()) return image.status().with_context("measure_quality");
            std::vector<double> sse8(n, 0.0);
            std::vector<float> reference(n);
            for (size_t i = 0; i < texels; ++i) {
                for (size_t c = 0; c < channels; ++c)
                    reference_pack[c] = lo[c] + range[c] * target.planes[static_cast<size_t>(m)][c][i];
                source_channel_values(layout, reference_pack.data(), reference.data());
                const float* got = &image->pixels[i * n];
                for (size_t j = 0; j < n; ++j) {
                    const ChannelSource& source = layout.channels[j];
                    const double scale =
                        source.kind == ChannelSource::Kind::pack ? range[static_cast<size_t>(source.pack_channel)] : 1.0;
                    const double d = (static_cast<double>(got[j]) - reference[j]) / scale;
                    texture_sse[t][j][static_cast<size_t>(m)] += d * d;
                    if (m == 0) {
                        const double d8 = static_cast<double>(quantise_unorm(got[j], 255)) -
                                          static_cast<double>(quantise_unorm(reference[j], 255));
                        sse8[j] += d8 * d8;
                    }
                }
                if (m == 0 && layout.normal_mode != NormalMode::none) {
                    double dot = 0, a2 = 0, b2 = 0;
                    for (size_t j = 0; j < 3; ++j) {
                        const double a = 2.0 * got[j] - 1.0;
                        const double b = 2.0 * reference[j] - 1.0;
                        dot += a * b;
                        a2 += a * a;
                        b2 += b * b;
                    }
                    const double cosine = a2 > 0 && b2 > 0 ? dot / std::sqrt(a2 * b2) : 1.0;
                    angle_sum[t] += std::acos(std::clamp(cosine, -1.0, 1.0)) * kRadiansToDegrees;
                }
            }
            if (m == 0)
                for (double s : sse8) psnr8_sse.push_back(s);
        }
    }

    double all_texels = 0;
    for (double n : mip_texels) all_texels += n;
    QualityReport report;
    report.present = true;
    // spec 8.10: channels weighted equally; a mip's texels weighted by their count.
    std::vector<double> channel_mse(channels);
    for (size_t c = 0; c < channels; ++c) {
        double sse = 0;
        for (double s : channel_sse[c]) sse += s;
        channel_mse[c] = sse / all_texels;
        report.channels.push_back(psnr_from_mse(channel_mse[c]));
    }
    report.psnr_db = psnr_from_mse(mean(channel_mse));
    for (int m = 0; m < mips; ++m) {
        std::vector<double> mse;
        for (size_t c = 0; c < channels; ++c) mse.push_back(channel_sse[c][static_cast<size_t>(m)] / mip_texels[static_cast<size_t>(m)]);
        report.mips.push_back(psnr_from_mse(mean(mse)));
    }
    for (size_t t = 0; t < textures; ++t) {
        TextureQuality q;
        q.texture = target.textures[t].name;
        std::vector<double> mse_all;
        for (const auto& per_mip : texture_sse[t]) {
            double sse = 0;
            for (double s : per_mip) sse += s;
            mse_all.push_back(sse / all_texels);
            q.channels.push_back(psnr_from_mse(mse_all.back()));
        }
        q.psnr_db = psnr_from_mse(mean(mse_all));
        for (int m = 0; m < mips; ++m) {
            std::vector<double> mse;
            for (const auto& per_mip : texture_sse[t]) mse.push_back(per_mip[static_cast<size_t>(m)] / mip_texels[static_cast<size_t>(m)]);
            q.mips.push_back(psnr_from_mse(mean(mse)));
        }
        if (target.textures[t].normal_mode != NormalMode::none) q.mean_angle_deg = angle_sum[t] / texels0;
        report.textures.push_back(std::move(q));
    }
    std::vector<double> mse8;
    for (double s : psnr8_sse) mse8.push_back(s / (texels0 * 255.0 * 255.0));
    report.psnr8_mip0_db = psnr_from_mse(mean(mse8));
    return report;
}

}  // namespace nmc
