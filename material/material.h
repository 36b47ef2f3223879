// The material library's entry points: find the texture files of a material (by file name or manifest),
// allocate their channels to pack channels, load them as normalised pack-channel planes with a mip chain, and
// write decoded textures back with their source's names and formats. Libraries never print: warnings and
// ignored files are returned.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "core/texture_layout.h"
#include "material/channel_allocation.h"
#include "material/image_io.h"
#include "material/manifest.h"

namespace nmc {

// A file of the material's folder that is not in the pack, and why ("hidden file", "not an image file", "file
// name matches no map convention ...", "not listed in the manifest", "DirectX copy of the OpenGL normal map X").
struct IgnoredFile {
    std::string file;  // name inside the folder
    std::string reason;
    // An image file left out of the pack (hidden files, folders, the manifest and files without an image extension
    // are not): each one is also a warning, and under MaterialLoadOptions::strict an error.
    bool image = false;
};

// A loaded material: the layout of every source texture and its pack-channel planes.
struct Material {
    std::string name;           // folder name or manifest name
    std::string source_folder;  // where the files were read from
    int width = 0, height = 0, mip_count = 1;  // full chain by default: floor(log2(max(W,H)))+1
    std::vector<TextureLayout> textures;        // channels mapped to pack channels, source_sha256 filled
    // The file each texture was read from (textures order); empty when the material was not read from files
    // or a map was resampled (its file then no longer matches the material's size).
    std::vector<std::string> source_paths;
    std::vector<PackChannel> channels;          // 1..16
    // Pack-channel planes per mip: mips[m][c] is a w_m*h_m float plane (row-major) of pack channel c in its
    // normalised [0,1] value space (spec 8.7: (value - lo) / (hi - lo)), DirectX Y already inverted, normals
    // as x*0.5+0.5. w_m = max(1, W >> m). Mips above 0 are generated (mip_chain.h): sources' own mips are
    // not read.
    std::vector<std::vector<std::vector<float>>> mips;
    std::vector<std::string> warnings;
    std::vector<IgnoredFile> ignored_files;
};

// How a normal map goes into the pack (docs/manifest.md, "Normal maps in the pack"):
// - xy: X and Y in the pack, Z rebuilt and the vector renormalised on decode (spec 8.8);
// - xyz: X, Y and Z in the pack, renormalised on decode;
// - stored: X, Y and Z as three plain channels (normal_mode none, channel semantics normal): decoded as the
//   file stores them, unit length or not, as every renderer that renormalises expects;
// - automatic: per map, xy when the Z rebuilt from the file's own X and Y matches its stored Z well enough
//   that the map's 8-bit PSNR could still reach kXyNormalCapDb, else stored.
enum class NormalModeChoice { automatic, xy, xyz, stored };
const char* to_string(NormalModeChoice c);
std::optional<NormalModeChoice> normal_mode_choice_from_string(const std::string& s);

// The automatic choice's bound: rebuilding Z must leave the normal map's 3-channel 8-bit PSNR at least this
// high. Packs reach 41-56 dB on normal maps at NTC's rates, and the cap's error adds to theirs: the chessboard's
// map (cap 53.5 dB) gained +0.25 dB psnr8 at 5 bpp and +0.88 at 10 bpp stored instead of xy, the water bottle's
// (cap 55.2) lost 0.08 at 5 bpp stored (bench/results/notes-compressor.txt, "Normal maps"). Only that one of the
// 11 shared maps clears it; the others cap at 29.8-53.5 dB. Until 2026-12-01 the bound was 50 dB.
constexpr double kXyNormalCapDb = 55.0;

// The 8-bit PSNR, over all three channels of mip 0, of a normal map whose X and Y are exact and whose Z is
// rebuilt from them (spec 8.8): the most an xy pack can reach on it. `pixels` interleaved RGB in [0, 1].
double xy_normal_cap_db(const std::vector<float>& pixels, size_t texels, size_t channels);

struct MaterialLoadOptions {
    NormalModeChoice normal_mode = NormalModeChoice::automatic;
    bool gloss_to_roughness = false;          // store glossiness maps as roughness = 1 - gloss
    bool resample_mismatched = false;         // resample maps of other sizes to the largest (with a warning)
    int max_mips = -1;                        // -1: full chain; else 1..full
    bool strict = false;                      // an image file left out of the pack is an error, not a warning
};

// What scan_material() found about one texture file, beyond its layout.
struct TextureFileInfo {
    std::string path;      // folder + file name
    int width = 0, height = 0;
    int channels = 0;      // channels in the file
    std::string reason;    // how it was recognised: "name: nor_gl", "manifest"
    std::vector<float> loss_weights;  // one per file channel
};

// Discovery without pack-channel planes, for `nmc scan`: the same recognition, checks and channel allocation
// as load_material(). (Constant and grey detection reads the pixels, so scanning decodes every file once.)
struct MaterialScan {
    std::string name;
    std::string source_folder;
    int width = 0, height = 0, mip_count = 1;
    std::vector<TextureLayout> textures;  // as in Material
    std::vector<TextureFileInfo> files;   // parallel to textures
    std::vector<PackChannel> channels;
    std::vector<std::string> warnings;
    std::vector<IgnoredFile> ignored_files;
    Manifest manifest;  // what was found as a manifest (replacing guessing), ready to edit
};

// Loads a material from a folder (maps recognised by file name), a manifest file (.json) or one image file (a
// one-texture material named after the file's stem, its map recognised by file name as in a folder; the other files
// of its folder are not looked at). Failures, with the file named in the message: io_error (missing folder or
// file, unreadable), not_recognized (no maps recognised, not an image, a single image whose name matches no map
// convention, a file that is neither a manifest nor an image by its extension), corrupt (truncated image), limit_exceeded (a side outside 1..16384, more than
// 16 pack channels), invalid_argument (two maps with one semantic, maps of different sizes without
// resample_mismatched, a bad manifest, a map whose channel count does not fit its semantic, under strict an image
// file left out of the pack: the message names every one and why),
// backend_unavailable (a format this build cannot read). Writes nothing. Thread-safe.
Result<Material> load_material(const std::string& folder_or_manifest, const MaterialLoadOptions& options = {});

// Builds a material whose layout is already decided (a pack's, or discovery's) from the mip-0 image of every
// texture (textures order, same size, channel counts as the layouts): the pack-channel planes and mip chain
// exactly as load_material() makes them. Each pack channel's semantic and colour space are taken from the
// first texture channel that uses it. invalid_argument when images and layouts disagree.
Result<Material> material_from_images(std::string name, std::string source_folder, std::vector<TextureLayout> textures,
                                      std::vector<PackChannel> channels, int mip_count, std::vector<Image> images);

// The discovery half of load_material(), with the same failures.
Result<MaterialScan> scan_material(const std::string& folder_or_manifest, const MaterialLoadOptions& options = {});

// What write_texture() wrote, and what the file could not hold.
struct WrittenTexture {
    std::string path;                              // out_dir/<texture_output_name()>
    SampleType sample_type = SampleType::uint8;    // stored in the file: stored_sample_type(layout's, format)
    bool converted_to_linear = false;              // sRGB colour channels written as linear values (a float file)
    // Samples clamped to [0, 1] on the way out (by an integer sample type, or by the sRGB decoding of
    // converted channels), out of `checked_samples` that could be; min_value..max_value is the range of those
    // samples before clamping. All zero when nothing could be clamped (a float file without conversion).
    size_t clipped_samples = 0;
    size_t checked_samples = 0;
    float min_value = 0.0f;
    float max_value = 0.0f;
};

// Writes one decoded texture (source-channel values as produced by spec 8.9, decoded.channels ==
// layout.channels.size()) as out_dir/<file name>: layout.file_name with `suffix` inserted before the
// extension and "_mip<N>" after it for mip > 0; the format is layout.file_format unless `format_override`
// (png, exr, tga, jpeg, tiff) is given, which also replaces the extension. Samples are written as
// stored_sample_type(layout.sample_type, format) (write_image). Float files hold linear light, as EXR does by
// convention and as load_material() reads every float file: an sRGB texture written as floats has its colour
// channels (is_color()) decoded to linear with the sRGB transfer function (srgb_to_linear()) and is tagged
// linear; otherwise the values are written as decoded, with the layout's colour space recorded. Values outside
// [0, 1] that the file cannot hold are clamped and counted in the result, never refused. Refuses (io_error) to
// replace an existing file unless `overwrite`; writes atomically.
Result<WrittenTexture> write_texture(const std::string& out_dir, const TextureLayout& layout, const Image& decoded,
                                     int mip, const std::string& suffix, const std::string& format_override,
                                     bool overwrite);

// write_texture() a band of rows at a time (top to bottom), so that a texture too large to hold whole (16384^2 float
// RGBA is 4 GiB) is decoded and written a band at a time: with the OpenImageIO backend the writer holds one band
// (ImageFileWriter). open() makes write_texture()'s checks for a width x height mip and creates the temporary file;
// finish() completes the file. Destroyed before finish() succeeded, it leaves nothing.
class TextureFileWriter {
public:
    static Result<std::unique_ptr<TextureFileWriter>> open(const std::string& out_dir, const TextureLayout& layout,
                                                           int width, int height, int mip, const std::string& suffix,
                                                           const std::string& format_override, bool overwrite);
    // The next band.height rows of the decoded texture (source-channel values as produced by spec 8.9).
    Status write_rows(Image band);
    Result<WrittenTexture> finish();

private:
    TextureFileWriter(TextureLayout layout, WrittenTexture written, std::unique_ptr<ImageFileWriter> file)
        : layout_(std::move(layout)), written_(std::move(written)), file_(std::move(file)) {}
    TextureLayout layout_;
    WrittenTexture written_;
    std::unique_ptr<ImageFileWriter> file_;
};

// The file name write_texture() writes to (no folder).
std::string texture_output_name(const TextureLayout& layout, int mip, const std::string& suffix,
                                const std::string& format_override);

}  // namespace nmc
