// Quality of a pack against its source material, measured by decoding it exactly as docs/format-spec.md
// section 8 says: NVIDIA-style float PSNR (spec 8.10) overall, per pack channel, per mip and per texture, the
// 8-bit mip-0 comparison metric users check by hand, maximum errors, normal-map angular error, and the structure
// measure that notices a map decoded nearly flat (correlation, contrast, the PSNR of a constant image, the collapse
// rule). Used by `nmc validate` and by the compressor to store the quality of what it wrote.
#pragma once

#include <string>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "decoder/pack_decoder.h"
#include "format/pack.h"
#include "material/material.h"

namespace nmc {

// The sources a pack is compared with, in the pack's own channel layout.
struct ReferenceMaterial {
    Material material;                 // pack-channel planes for every mip of the pack
    std::vector<Image> source_images;  // mip 0 of every source file, in pack.textures order
    std::vector<std::string> source_sha256;
};

// Reads every texture file of `pack` from `folder` (by its recorded file name) and builds the reference planes
// with the material library's mip filters. Fails (io_error, not_recognized, ...) naming the file when one is
// missing or unreadable, and with invalid_argument when a file's size or channel count differs from the pack.
Result<ReferenceMaterial> load_reference(const std::string& folder, const Pack& pack);

// Reads the mip-0 source image of every texture of `pack` from `paths` (pack.textures order), with the same
// checks as load_reference(); their SHA-256 digests go to `sha256` when non-null.
Result<std::vector<Image>> read_source_images(const std::vector<std::string>& paths, const Pack& pack,
                                              std::vector<std::string>* sha256 = nullptr);

// Stand-in source images for a material that exists only in memory: each texture's file channels rebuilt from
// the mip-0 reference planes by spec 8.7-8.9 (so a normal map's Z is the one rebuilt from its X, Y).
std::vector<Image> source_images_from_planes(const Pack& pack, const std::vector<std::vector<std::vector<float>>>& planes);

struct ChannelQuality {
    std::string name;
    double psnr_db = 0;          // all mips, texel-weighted
    std::vector<double> mips;    // per mip
    double max_abs_error = 0;    // largest |decoded - source| over all mips, in [0, 1] units
};

// Structure of one file channel at mip 0, in the channel's normalised [0, 1] units (docs/cli.md, "Structure").
struct ChannelStructure {
    bool flat = false;       // the source's standard deviation is below kFlatSourceStd: nothing to preserve
    double correlation = 0;  // Pearson correlation of decoded and source values; 0 when the decoded one is constant
    double contrast = 0;     // std(decoded) / std(source)
    double source_std = 0;
    double decoded_std = 0;
};

// Whether a texture kept the structure of its source at mip 0: figures pooled over its non-flat file channels
// (every channel centred on its own mean), and the collapse rule. docs/cli.md ("Structure") has the formulas.
struct TextureStructure {
    bool measured = false;        // false: every file channel is flat (a constant map cannot collapse)
    double correlation = 0;       // sum cov / sqrt(sum var_source * sum var_decoded); 0 for a constant decode
    double contrast = 0;          // sqrt(sum var_decoded / sum var_source)
    double psnr_db = 0;           // mip-0 float PSNR over the non-flat channels
    double constant_psnr_db = 0;  // the PSNR a constant image of the source's own means scores there
    double psnr_margin_db = 0;    // psnr_db - constant_psnr_db: 10 log10(sum var_source / sum mse) below 99 dB
    bool collapsed = false;       // the rule below failed
    std::vector<std::string> collapse_reasons;  // each failed bound in words ("correlation 0.14 < 0.50")
    std::vector<ChannelStructure> channels;     // per file channel
};

// The collapse rule's bounds (docs/cli.md, "Structure"). A source channel whose standard deviation is below half an
// 8-bit code carries no structure an 8-bit display shows: it is flat and left out, so a constant map is never
// flagged. A measured texture collapses when its PSNR is less than kMinPsnrMarginDb above the constant image's (its
// error is more than half the source's own variance: a flat grey image is nearly as good), when its correlation is
// below kMinCorrelation, or when it keeps less than kMinContrast of the source's contrast (standard deviation).
constexpr double kFlatSourceStd = 0.5 / 255.0;
constexpr double kMinPsnrMarginDb = 3.0;
constexpr double kMinCorrelation = 0.5;
constexpr double kMinContrast = 0.5;

// Running sums of one file channel's decoded and source values at mip 0 (normalised to the channel's [0, 1] range),
// for structure_of(). Sums are taken about the first source value, so a map of small spread around a large mean
// (a height map at 0.5 +- 0.01) keeps its variance's digits.
class ChannelMoments {
public:
    void add(double decoded, double source);
    double count() const { return n_; }
    double source_variance() const;  // population variance
    double decoded_variance() const;
    double covariance() const;
    double squared_error() const { return sse_; }  // sum of (decoded - source)^2

private:
    double n_ = 0, shift_ = 0;
    double sum_d_ = 0, sum_s_ = 0, sum_dd_ = 0, sum_ss_ = 0, sum_ds_ = 0, sse_ = 0;
};

// The structure of a texture from its file channels' moments, with the collapse rule above.
TextureStructure structure_of(const std::vector<ChannelMoments>& channels);

// A collapsed texture in one line, its reasons joined by "; ": "height.png collapsed: PSNR 37.35 dB only 0.08 dB
// above a constant image's 37.27 dB (< 3.0); correlation 0.14 < 0.50; contrast 0.16 < 0.50".
std::string collapse_message(const std::string& file_name, const TextureStructure& structure);

struct TextureQualityDetail {
    std::string name;
    std::string file_name;
    double psnr_db = 0;              // float, all mips, over the texture's pack-backed channels
    std::vector<double> mips;        // the same per mip
    std::vector<double> channels;    // float PSNR at mip 0 of every file channel (rebuilt normal Z included)
    double psnr8_mip0_db = 0;        // 8-bit output vs 8-bit source, mip 0, every file channel weighted equally
    std::vector<double> channels8;   // the same per file channel
    int max_abs_error8 = 0;          // largest 8-bit code difference at mip 0
    double mean_angle_deg = -1;      // normal maps: mean angle between decoded and source normals at mip 0
    TextureStructure structure;      // mip 0, every file channel
    double hdr_psnr_db = -1;         // HDR maps: hdr_psnr_db() at mip 0; -1 for other maps
};

struct QualityMeasurement {
    double psnr_db = 0;                 // spec 8.10 over every pack channel and mip
    std::vector<double> mips;           // per mip, channels weighted equally
    std::vector<ChannelQuality> channels;
    std::vector<TextureQualityDetail> textures;
    double psnr8_mip0_db = 0;           // the comparison metric: every channel of every source file, mip 0, 8-bit
    double max_abs_error = 0;           // over every pack channel and mip, [0, 1] units
};

// The value range [lo, hi] a file channel of `layout` (a texture of `pack`) is measured in: [0, peak] for every
// channel of an HLG-encoded texture; else its pack channel's range, or [0, 1] for a constant or a rebuilt normal Z.
void channel_range(const Pack& pack, const TextureLayout& layout, const ChannelSource& source, float& lo, float& hi);

// PSNR in dB of a mean squared error of values in [0, 1]; 99 (spec 5.8's "lossless") for mse <= 0.
double psnr_from_mse(double mse);
// The mean squared error of values in [0, 1] whose PSNR is `psnr_db`: psnr_from_mse() inverted below 99 dB.
double mse_from_psnr(double psnr_db);

// The quality of an HDR map (core/hlg.h is_hdr_map() of its source) as the eye sees it: the PSNR, over every file
// channel and texel, of the HLG-encoded values hlg_encode(v / peak), peak the source's largest value. A linear PSNR
// divides the error by the peak, so black areas that glow at a few percent of it go unnoticed; on the HLG curve (a
// square root near black, a logarithm above 1/12 of the peak) an error counts for more the darker the texel. -1 when `source` is not an HDR map (or the
// images differ in size). Measured the same whether the pack stores the map HLG-encoded or linear.
double hdr_psnr_db(const TextureLayout& layout, const Image& source, const Image& decoded);

// Decodes every mip of `pack` with `decoder` (CPU or CUDA) and compares it with `reference`. invalid_argument if
// the reference does not match the pack's size, mips or channels.
Result<QualityMeasurement> measure_quality(const PackDecoder& decoder, const Pack& pack,
                                           const ReferenceMaterial& reference);

// The same from reference planes (planes[m][c]: mip m of pack channel c, normalised to [0, 1] as
// Material::mips) and the mip-0 source images, for callers that already hold the planes (the compressor).
Result<QualityMeasurement> measure_quality(const PackDecoder& decoder, const Pack& pack,
                                           const std::vector<std::vector<std::vector<float>>>& planes,
                                           const std::vector<Image>& source_images);

// The measurement in the pack's stored form (spec 5.8), with the file's bits per texel.
QualityReport to_quality_report(const QualityMeasurement& measurement, double bits_per_texel);

}  // namespace nmc
