// Measures a decoded pack against its sources (definitions in quality_measurement.h and docs/cli.md).
#include "quality/quality_measurement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/hlg.h"
#include "decoder/common/reference_math.h"
#include "material/image_io.h"

namespace nmc {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Squared-error sums of one channel at one mip.
struct ErrorSum {
    double sse = 0;
    double texels = 0;
    double mse() const { return texels > 0 ? sse / texels : 0; }
};

}  // namespace

void channel_range(const Pack& pack, const TextureLayout& layout, const ChannelSource& source, float& lo, float& hi) {
    lo = 0.0f;
    hi = 1.0f;
    if (layout.value_encoding == ValueEncoding::hlg) {
        hi = layout.peak;
    } else if (source.kind == ChannelSource::Kind::pack) {
        lo = pack.channels[static_cast<size_t>(source.pack_channel)].lo;
        hi = pack.channels[static_cast<size_t>(source.pack_channel)].hi;
    }
}

namespace {

double normalised(float v, float lo, float hi) { return (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo); }

}  // namespace

double hdr_psnr_db(const TextureLayout& layout, const Image& source, const Image& decoded) {
    if (source.pixels.empty() || decoded.pixels.size() != source.pixels.size()) return -1;
    const auto [min, max] = std::minmax_element(source.pixels.begin(), source.pixels.end());
    if (!is_hdr_map(layout.sample_type, *min, *max)) return -1;
    const float peak = *max;
    double sse = 0;
    for (size_t i = 0; i < source.pixels.size(); ++i) {
        const double d = static_cast<double>(hlg_encode(decoded.pixels[i] / peak)) - hlg_encode(source.pixels[i] / peak);
        sse += d * d;
    }
    return psnr_from_mse(sse / static_cast<double>(source.pixels.size()));
}

double psnr_from_mse(double mse) {
    if (mse <= 0) return 99.0;
    return std::min(99.0, -10.0 * std::log10(mse));
}

double mse_from_psnr(double psnr_db) { return std::pow(10.0, -psnr_db / 10.0); }

void ChannelMoments::add(double decoded, double source) {
    if (n_ == 0) shift_ = source;
    const double d = decoded - shift_, s = source - shift_;
    n_ += 1;
    sum_d_ += d;
    sum_s_ += s;
    sum_dd_ += d * d;
    sum_ss_ += s * s;
    sum_ds_ += d * s;
    sse_ += (decoded - source) * (decoded - source);
}

double ChannelMoments::source_variance() const {
    return n_ > 0 ? std::max(0.0, sum_ss_ / n_ - (sum_s_ / n_) * (sum_s_ / n_)) : 0.0;
}

double ChannelMoments::decoded_variance() const {
    return n_ > 0 ? std::max(0.0, sum_dd_ / n_ - (sum_d_ / n_) * (sum_d_ / n_)) : 0.0;
}

double ChannelMoments::covariance() const {
    return n_ > 0 ? sum_ds_ / n_ - (sum_d_ / n_) * (sum_s_ / n_) : 0.0;
}

TextureStructure structure_of(const std::vector<ChannelMoments>& channels) {
    TextureStructure t;
    double var_source = 0, var_decoded = 0, covariance = 0, mse = 0;
    size_t measured = 0;
    for (const ChannelMoments& m : channels) {
        ChannelStructure c;
        const double vs = m.source_variance(), vd = m.decoded_variance();
        c.source_std = std::sqrt(vs);
        c.decoded_std = std::sqrt(vd);
        c.flat = c.source_std < kFlatSourceStd;
        c.correlation = vs > 0 && vd > 0 ? std::clamp(m.covariance() / std::sqrt(vs * vd), -1.0, 1.0) : 0.0;
        c.contrast = vs > 0 ? c.decoded_std / c.source_std : 0.0;
        t.channels.push_back(c);
        if (c.flat) continue;
        var_source += vs;
        var_decoded += vd;
        covariance += m.covariance();
        mse += m.squared_error() / m.count();
        ++measured;
    }
    t.measured = measured > 0;
    if (!t.measured) return t;
    t.correlation = var_decoded > 0 ? std::clamp(covariance / std::sqrt(var_source * var_decoded), -1.0, 1.0) : 0.0;
    t.contrast = std::sqrt(var_decoded / var_source);
    t.psnr_db = psnr_from_mse(mse / static_cast<double>(measured));
    t.constant_psnr_db = psnr_from_mse(var_source / static_cast<double>(measured));
    t.psnr_margin_db = t.psnr_db - t.constant_psnr_db;

    char reason[160];
    if (t.psnr_margin_db < kMinPsnrMarginDb) {
        std::snprintf(reason, sizeof reason, "PSNR %.2f dB only %.2f dB above a constant image's %.2f dB (< %.1f)",
                      t.psnr_db, t.psnr_margin_db, t.constant_psnr_db, kMinPsnrMarginDb);
        t.collapse_reasons.push_back(reason);
    }
    if (t.correlation < kMinCorrelation) {
        std::snprintf(reason, sizeof reason, "correlation %.2f < %.2f", t.correlation, kMinCorrelation);
        t.collapse_reasons.push_back(reason);
    }
    if (t.contrast < kMinContrast) {
        std::snprintf(reason, sizeof reason, "contrast %.2f < %.2f", t.contrast, kMinContrast);
        t.collapse_reasons.push_back(reason);
    }
    t.collapsed = !t.collapse_reasons.empty();
    return t;
}

std::string collapse_message(const std::string& file_name, const TextureStructure& structure) {
    std::string message = file_name + " collapsed: ";
    for (size_t i = 0; i < structure.collapse_reasons.size(); ++i)
        message += (i > 0 ? "; " : "") + structure.collapse_reasons[i];
    return message;
}

Result<std::vector<Image>> read_source_images(const std::vector<std::string>& paths, const Pack& pack,
                                              std::vector<std::string>* sha256) {
    if (paths.size() != pack.textures.size())
        return Status(StatusCode::invalid_argument, "expected " + std::to_string(pack.textures.size()) +
                                                        " source files, got " + std::to_string(paths.size()));
    std::vector<Image> images;
    for (size_t t = 0; t < paths.size(); ++t) {
        const std::string& path = paths[t];
        auto file = read_image_file(path);
        if (!file.ok()) return file.status();
        const Image& image = file->image;
        if (image.width != pack.material.width || image.height != pack.material.height)
            return Status(StatusCode::invalid_argument,
                          path + ": source is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                              ", the pack was made from " + std::to_string(pack.material.width) + "x" +
                              std::to_string(pack.material.height));
        if (static_cast<size_t>(image.channels) != pack.textures[t].channels.size())
            return Status(StatusCode::invalid_argument, path + ": source has " + std::to_string(image.channels) +
                                                            " channels, the pack expects " +
                                                            std::to_string(pack.textures[t].channels.size()));
        if (sha256) sha256->push_back(file->sha256);
        images.push_back(std::move(file->image));
    }
    return images;
}

Result<ReferenceMaterial> load_reference(const std::string& folder, const Pack& pack) {
    std::vector<std::string> paths;
    for (const TextureLayout& layout : pack.textures) paths.push_back(folder + "/" + layout.file_name);
    ReferenceMaterial ref;
    auto images = read_source_images(paths, pack, &ref.source_sha256);
    if (!images.ok()) return images.status();
    ref.source_images = images.value();
    std::vector<PackChannel> channels(pack.channels.size());
    for (size_t c = 0; c < channels.size(); ++c) {
        channels[c].name = pack.channels[c].name;
        channels[c].lo = pack.channels[c].lo;
        channels[c].hi = pack.channels[c].hi;
    }
    auto material = material_from_images(pack.material.name, folder, pack.textures, std::move(channels),
                                         pack.material.mip_count, std::move(images.value()));
    if (!material.ok()) return material.status();
    ref.material = std::move(material.value());
    return ref;
}

std::vector<Image> source_images_from_planes(const Pack& pack,
                                             const std::vector<std::vector<std::vector<float>>>& planes) {
    const size_t channel_count = pack.channels.size();
    const int width = pack.material.width, height = pack.material.height;
    std::vector<float> values(channel_count);
    std::vector<Image> images;
    for (const TextureLayout& layout : pack.textures) {
        Image image(width, height, static_cast<int>(layout.channels.size()), layout.sample_type);
        for (size_t i = 0; i < image.texel_count(); ++i) {
            for (size_t c = 0; c < channel_count; ++c)  // spec 8.7 from a normalised plane value
                values[c] = pack.channels[c].lo + (pack.channels[c].hi - pack.channels[c].lo) * planes[0][c][i];
            source_channel_values(layout, values.data(), &image.pixels[i * layout.channels.size()]);
        }
        images.push_back(std::move(image));
    }
    return images;
}

Result<QualityMeasurement> measure_quality(const PackDecoder& decoder, const Pack& pack,
                                           const ReferenceMaterial& reference) {
    const Material& source = reference.material;
    if (source.width != pack.material.width || source.height != pack.material.height ||
        source.mip_count != pack.material.mip_count)
        return Status(StatusCode::invalid_argument, "reference material does not match the pack's size or mips");
    return measure_quality(decoder, pack, source.mips, reference.source_images);
}

Result<QualityMeasurement> measure_quality(const PackDecoder& decoder, const Pack& pack,
                                           const std::vector<std::vector<std::vector<float>>>& planes,
                                           const std::vector<Image>& source_images) {
    const size_t channel_count = pack.channels.size();
    const int mips = pack.material.mip_count;
    if (static_cast<int>(planes.size()) != mips || source_images.size() != pack.textures.size())
        return Status(StatusCode::invalid_argument, "reference does not match the pack's mips or textures");
    for (const auto& mip_planes : planes)
        if (mip_planes.size() != channel_count)
            return Status(StatusCode::invalid_argument, "reference does not match the pack's channel count");

    // spec 8.10 over pack channels: squared errors per channel and mip, in [0, 1] units.
    std::vector<std::vector<ErrorSum>> errors(channel_count, std::vector<ErrorSum>(static_cast<size_t>(mips)));
    QualityMeasurement q;
    q.channels.resize(channel_count);
    std::vector<std::vector<float>> decoded;
    for (int m = 0; m < mips; ++m) {
        NMC_RETURN_IF_ERROR(decoder.decode_mip_channels(m, decoded));
        for (size_t c = 0; c < channel_count; ++c) {
            const std::vector<float>& plane = planes[static_cast<size_t>(m)][c];
            if (plane.size() != decoded[c].size())
                return Status(StatusCode::invalid_argument, "reference mip " + std::to_string(m) + " has the wrong size");
            const float lo = pack.channels[c].lo, hi = pack.channels[c].hi;
            ErrorSum& e = errors[c][static_cast<size_t>(m)];
            for (size_t i = 0; i < plane.size(); ++i) {
                const double d = normalised(decoded[c][i], lo, hi) - plane[i];
                e.sse += d * d;
                q.channels[c].max_abs_error = std::max(q.channels[c].max_abs_error, std::fabs(d));
            }
            e.texels = static_cast<double>(plane.size());
        }
    }

    auto channel_mse_all_mips = [&](size_t c) {
        ErrorSum total;
        for (const ErrorSum& e : errors[c]) {
            total.sse += e.sse;
            total.texels += e.texels;
        }
        return total.mse();
    };
    double mse_sum = 0;
    for (size_t c = 0; c < channel_count; ++c) {
        ChannelQuality& cq = q.channels[c];
        cq.name = pack.channels[c].name;
        cq.psnr_db = psnr_from_mse(channel_mse_all_mips(c));
        for (const ErrorSum& e : errors[c]) cq.mips.push_back(psnr_from_mse(e.mse()));
        mse_sum += channel_mse_all_mips(c);
        q.max_abs_error = std::max(q.max_abs_error, cq.max_abs_error);
    }
    q.psnr_db = psnr_from_mse(mse_sum / static_cast<double>(channel_count));
    for (int m = 0; m < mips; ++m) {
        double mip_mse = 0;
        for (size_t c = 0; c < channel_count; ++c) mip_mse += errors[c][static_cast<size_t>(m)].mse();
        q.mips.push_back(psnr_from_mse(mip_mse / static_cast<double>(channel_count)));
    }

    // Per texture: float figures over pack-backed channels (all mips), and mip-0 figures over every file channel.
    double mse8_sum = 0;
    size_t file_channels = 0;
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const TextureLayout& layout = pack.textures[t];
        TextureQualityDetail tq;
        tq.name = layout.name;
        tq.file_name = layout.file_name;

        std::vector<size_t> backed;
        for (const ChannelSource& s : layout.channels)
            if (s.kind == ChannelSource::Kind::pack) backed.push_back(static_cast<size_t>(s.pack_channel));
        double texture_mse = 0;
        for (size_t c : backed) texture_mse += channel_mse_all_mips(c);
        tq.psnr_db = backed.empty() ? 99.0 : psnr_from_mse(texture_mse / static_cast<double>(backed.size()));
        for (int m = 0; m < mips; ++m) {
            double mip_mse = 0;
            for (size_t c : backed) mip_mse += errors[c][static_cast<size_t>(m)].mse();
            tq.mips.push_back(backed.empty() ? 99.0 : psnr_from_mse(mip_mse / static_cast<double>(backed.size())));
        }

        auto image = decoder.decode_texture(static_cast<int>(t), 0);
        if (!image.ok()) return image.status();
        const Image& dec = image.value();
        const Image& src = source_images[t];
        const auto n = static_cast<size_t>(dec.channels);
        double texture_mse8 = 0;
        std::vector<ChannelMoments> moments(n);
        for (size_t ch = 0; ch < n; ++ch) {
            float lo, hi;
            channel_range(pack, layout, layout.channels[ch], lo, hi);
            double sse = 0, sse8 = 0;
            for (size_t i = 0; i < dec.texel_count(); ++i) {
                const double a = normalised(dec.pixels[i * n + ch], lo, hi);
                const double b = normalised(src.pixels[i * n + ch], lo, hi);
                sse += (a - b) * (a - b);
                moments[ch].add(a, b);
                const auto qa = static_cast<int>(quantize_u8(static_cast<float>(a)));
                const auto qb = static_cast<int>(quantize_u8(static_cast<float>(b)));
                sse8 += static_cast<double>((qa - qb) * (qa - qb));
                tq.max_abs_error8 = std::max(tq.max_abs_error8, std::abs(qa - qb));
            }
            const double count = static_cast<double>(dec.texel_count());
            const double mse8 = sse8 / count / (255.0 * 255.0);
            tq.channels.push_back(psnr_from_mse(sse / count));
            tq.channels8.push_back(psnr_from_mse(mse8));
            texture_mse8 += mse8;
            mse8_sum += mse8;
            ++file_channels;
        }
        tq.psnr8_mip0_db = psnr_from_mse(texture_mse8 / static_cast<double>(n));
        tq.structure = structure_of(moments);
        tq.hdr_psnr_db = hdr_psnr_db(layout, src, dec);

        if (layout.holds_normals() && n >= 3) {
            double angle_sum = 0;
            size_t counted = 0;
            for (size_t i = 0; i < dec.texel_count(); ++i) {
                double a[3], b[3], la = 0, lb = 0, dot = 0;
                for (size_t k = 0; k < 3; ++k) {
                    a[k] = 2.0 * dec.pixels[i * n + k] - 1.0;
                    b[k] = 2.0 * src.pixels[i * n + k] - 1.0;
                    la += a[k] * a[k];
                    lb += b[k] * b[k];
                    dot += a[k] * b[k];
                }
                if (la <= 0 || lb <= 0) continue;
                angle_sum += std::acos(std::clamp(dot / std::sqrt(la * lb), -1.0, 1.0)) * 180.0 / kPi;
                ++counted;
            }
            tq.mean_angle_deg = counted > 0 ? angle_sum / static_cast<double>(counted) : 0.0;
        }
        q.textures.push_back(std::move(tq));
    }
    q.psnr8_mip0_db = psnr_from_mse(mse8_sum / static_cast<double>(std::max<size_t>(file_channels, 1)));
    return q;
}

QualityReport to_quality_report(const QualityMeasurement& m, double bits_per_texel) {
    QualityReport r;
    r.present = true;
    r.psnr_db = m.psnr_db;
    r.bits_per_texel = bits_per_texel;
    r.psnr8_mip0_db = m.psnr8_mip0_db;
    r.mips = m.mips;
    for (const ChannelQuality& c : m.channels) r.channels.push_back(c.psnr_db);
    for (const TextureQualityDetail& t : m.textures) {
        TextureQuality tq;
        tq.texture = t.name;
        tq.psnr_db = t.psnr_db;
        tq.channels = t.channels;
        tq.mips = t.mips;
        tq.mean_angle_deg = t.mean_angle_deg;
        tq.psnr8_mip0_db = t.psnr8_mip0_db;
        r.textures.push_back(std::move(tq));
    }
    return r;
}

}  // namespace nmc
