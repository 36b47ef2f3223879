// nmc decompress: decodes a pack back to image files with the source's names, formats, bit depths and colour
// spaces (packed maps packed again), optionally every mip level; or to block-compressed DDS / KTX2 files with
// every mip, for engines.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "core/file_io.h"
#include "decoder/pack_decoder.h"
#include "format/pack.h"
#include "material/material.h"
#include "quality/quality_measurement.h"
#include "texture/format_choice.h"

namespace nmc::cli {
namespace {

struct DecompressOptions {
    std::string pack_path;
    std::string out_dir;
    std::string format = "source";
    std::string suffix;
    std::string device = "cpu";
    std::string codec = "auto";  // for --format dds|ktx2
    bool codec_given = false;
    std::string supercompression = "none";  // for --format ktx2
    bool supercompression_given = false;
    std::string astc_effort = "medium";
    std::optional<double> block_psnr;  // --codec astc's target
    bool json = false;
    bool all_mips = false;
    bool force = false;
    int threads = 0;
};

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// The size of a file just written.
uint64_t file_bytes(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// The values a file could not hold, said once per file: which texture, which file, how many samples, their range.
void warn_clipped(const TextureLayout& layout, const WrittenTexture& file) {
    const std::string why = file.converted_to_linear
                                ? "the sRGB transfer function converting them to linear is defined on [0, 1]"
                                : std::string("a ") + to_string(file.sample_type) + " file holds [0, 1]; --format exr keeps them";
    std::fprintf(stderr,
                 "nmc: warning: texture '%s': %zu of %zu samples of %s lie outside [0, 1] (values %g..%g) and were "
                 "clipped to it (%s)\n",
                 layout.name.c_str(), file.clipped_samples, file.checked_samples, file.path.c_str(),
                 static_cast<double>(file.min_value), static_cast<double>(file.max_value), why.c_str());
}

// Rows of a decoding band: about 4 MiB of float samples (16 rows of a 16384-wide RGBA texture), at least one row.
int rows_per_band(int width, size_t channels) {
    constexpr size_t kBandSamples = size_t{1} << 20;
    return static_cast<int>(std::max<size_t>(1, kBandSamples / (static_cast<size_t>(width) * channels)));
}

// --codec's values: auto, astc (the block size from --block-psnr) and every block format.
std::vector<std::string> codec_names() {
    std::vector<std::string> names = {"auto", "astc"};
    for (texture::BlockFormat f : texture::all_block_formats()) names.push_back(texture::to_string(f));
    return names;
}

// The pack's own psnr8 of a texture (mip 0 against its source), when the pack records it.
std::optional<double> pack_psnr8(const Pack& pack, const std::string& texture) {
    for (const TextureQuality& q : pack.quality.textures)
        if (q.texture == texture && q.psnr8_mip0_db > 0) return q.psnr8_mip0_db;
    return std::nullopt;
}

// --codec astc's default target: block compression 6 dB above the pack's own psnr8 adds a quarter of the pack's
// error, costing the end result 10 log10(1.25) = 0.97 dB.
constexpr double kBlockPsnrAbovePackDb = 6.0;

// --format dds|ktx2: one file per texture holding every mip of the pack, block-compressed as --codec chooses.
int run_decompress_blocks(const DecompressOptions& o, const GlobalOptions& globals, const Pack& pack,
                          const PackDecoderOptions& decoder_options, texture::ContainerFormat container) {
    // --codec astc is checked as ASTC 4x4: every ASTC size holds the same textures.
    const bool astc_by_target = o.codec == "astc";
    const std::optional<texture::BlockFormat> requested =
        o.codec == "auto" ? std::nullopt
                          : astc_by_target ? texture::BlockFormat::astc_4x4 : texture::block_format_from_string(o.codec);
    if (astc_by_target && !texture::astc_in_build()) {
        const Status unavailable = texture::astc_availability().with_context("--codec astc");
        print_error(unavailable);
        return exit_code_for(unavailable);
    }
    const texture::Supercompression supercompression = *texture::supercompression_from_string(o.supercompression);
    const texture::AstcEffort astc_effort = *texture::astc_effort_from_string(o.astc_effort);
    // Every texture's format and output name first: a texture the format cannot hold, or an existing file, stops
    // the run before anything is decoded.
    std::vector<texture::BlockChoice> choices;
    std::vector<double> block_psnr_targets;  // --codec astc
    std::map<std::string, std::string> texture_of_path;  // two source files of one stem (a.png, a.tga) collide
    for (const TextureLayout& layout : pack.textures) {
        auto choice = texture::choose_block_format(layout, requested);
        if (!choice.ok()) {
            print_error(choice.status().with_context(o.pack_path));
            return exit_code_for(choice.status());
        }
        Status container_holds = texture::check_container(container, choice->format, supercompression);
        if (!container_holds.ok()) {
            print_error(container_holds);
            return kExitUsage;
        }
        choices.push_back(*choice);
        if (astc_by_target) {
            const std::optional<double> own = pack_psnr8(pack, layout.name);
            if (!o.block_psnr && !own) {
                print_error(Status(StatusCode::invalid_argument,
                                   o.pack_path + ": texture '" + layout.name +
                                       "': the pack records no psnr8 to set --codec astc's target from; give "
                                       "--block-psnr DB"));
                return kExitUsage;
            }
            block_psnr_targets.push_back(o.block_psnr ? *o.block_psnr : *own + kBlockPsnrAbovePackDb);
        }
        const std::string path = o.out_dir + "/" + texture_output_name(layout, 0, o.suffix, texture::to_string(container));
        if (!texture_of_path.emplace(path, layout.name).second) {
            print_error(Status(StatusCode::invalid_argument, path + ": textures '" + texture_of_path[path] + "' and '" +
                                                                 layout.name + "' would both be written there"));
            return kExitUsage;
        }
        if (!o.force && exists(path)) {
            print_error(Status(StatusCode::io_error, path + ": exists (use --force to overwrite)"));
            return kExitIo;
        }
    }
    auto decoder = create_pack_decoder(pack, decoder_options);
    if (!decoder.ok()) {
        print_error(decoder.status());
        return exit_code_for(decoder.status());
    }
    Status dir = make_directories(o.out_dir);
    if (!dir.ok()) {
        print_error(dir);
        return kExitIo;
    }
    nlohmann::ordered_json report = nlohmann::ordered_json::array();
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const TextureLayout& layout = pack.textures[t];
        const CurrentStep texture_step(o.pack_path, "decoding texture '" + layout.name + "' and encoding it as " +
                                                        (astc_by_target ? std::string("ASTC (block size by target)")
                                                                        : texture::to_string(choices[t].format)));
        std::vector<Image> mips;
        for (int m = 0; m < pack.material.mip_count; ++m) {
            auto image = (*decoder)->decode_texture(static_cast<int>(t), m);
            if (!image.ok()) {
                print_error(image.status());
                return exit_code_for(image.status());
            }
            mips.push_back(std::move(image.value()));
        }
        std::optional<texture::AstcSizeChoice> sized;
        if (astc_by_target) {
            auto size = texture::choose_astc_block_size(choices[t], mips[0], mse_from_psnr(block_psnr_targets[t]),
                                                        astc_effort, o.threads);
            if (!size.ok()) {
                print_error(size.status().with_context(layout.name));
                return size.status().code() == StatusCode::out_of_memory ? exit_code_for(size.status()) : kExitInternal;
            }
            sized = *size;
            choices[t].format = size->format;
            if (!size->reached && globals.verbosity > 0)
                std::fprintf(stderr,
                             "nmc: warning: texture '%s': ASTC 4x4 reaches block compression psnr8 %.2f dB, under "
                             "the target %.2f dB; written as 4x4\n",
                             layout.name.c_str(), psnr_from_mse(size->mip0_mse8), block_psnr_targets[t]);
        }
        auto encoded = texture::encode_block_texture(choices[t], mips, o.threads, astc_effort);
        const std::string path = o.out_dir + "/" + texture_output_name(layout, 0, o.suffix, texture::to_string(container));
        if (!encoded.ok()) {
            // The decoder's mips always form a chain: what fails here is a BC6H texture's negative values (exit 7),
            // or the ASTC library (memory, or a bug).
            print_error(encoded.status().with_context("texture '" + layout.name + "' (" + path + ")"));
            const StatusCode code = encoded.status().code();
            return code == StatusCode::out_of_memory || code == StatusCode::backend_unavailable
                       ? exit_code_for(encoded.status())
                       : kExitInternal;
        }
        Status written = texture::write_texture_file(path, container, encoded->texture, supercompression, o.force);
        if (!written.ok()) {
            print_error(written);
            return exit_code_for(written);
        }
        const double block_psnr8 = psnr_from_mse(encoded->mip0_mse8);
        const std::optional<double> own_psnr8 = pack_psnr8(pack, layout.name);
        // BC6H of an HDR map: its block compression error as the eye sees it, values above 1 included.
        const double block_hdr_psnr =
            encoded->mip0_decoded ? hdr_psnr_db(layout, mips[0], *encoded->mip0_decoded) : -1.0;
        if (o.json) {
            report.push_back({{"texture", layout.name},
                              {"path", path},
                              {"codec", texture::to_string(choices[t].format)},
                              {"srgb", choices[t].srgb},
                              {"width", encoded->texture.width},
                              {"height", encoded->texture.height},
                              {"mips", pack.material.mip_count},
                              {"bits_per_texel", texture::bits_per_texel(choices[t].format)},
                              {"supercompression", texture::to_string(supercompression)},
                              {"file_bytes", file_bytes(path)},
                              {"block_psnr8_db", block_psnr8},
                              {"compared_channels", encoded->compared_channels},
                              {"pack_psnr8_db", own_psnr8 ? nlohmann::ordered_json(*own_psnr8) : nullptr}});
            if (block_hdr_psnr >= 0) report.back()["block_hdr_psnr_db"] = block_hdr_psnr;
            if (sized) {
                report.back()["target_block_psnr8_db"] = block_psnr_targets[t];
                report.back()["target_reached"] = sized->reached;
            }
        } else if (globals.verbosity > 0) {
            std::printf("wrote %s (%dx%d, %d mips, %s%s; block compression psnr8 %.2f dB over %d channel(s)",
                        path.c_str(), encoded->texture.width, encoded->texture.height, pack.material.mip_count,
                        texture::to_string(choices[t].format), choices[t].srgb ? " sRGB" : "", block_psnr8,
                        encoded->compared_channels);
            if (block_hdr_psnr >= 0) std::printf("; block compression HDR PSNR %.2f dB", block_hdr_psnr);
            if (own_psnr8) std::printf("; pack psnr8 %.2f dB", *own_psnr8);
            if (sized) std::printf("; target %.2f dB", block_psnr_targets[t]);
            std::printf(")\n");
        }
    }
    if (o.json) {
        const nlohmann::ordered_json out = {{"pack", o.pack_path},
                                            {"format", texture::to_string(container)},
                                            {"decoder", (*decoder)->description()},
                                            {"files", report}};
        std::printf("%s\n", out.dump(2).c_str());
    } else if (globals.verbosity > 0)
        std::printf("%zu file(s) from %s, decoded on %s\n", pack.textures.size(), o.pack_path.c_str(),
                    (*decoder)->description().c_str());
    return kExitOk;
}

int run_decompress(const DecompressOptions& o, const GlobalOptions& globals) {
    const std::optional<texture::ContainerFormat> container = texture::container_format_from_string(o.format);
    if (o.codec_given && !container) {
        print_error(Status(StatusCode::invalid_argument, "--codec needs --format dds or ktx2, got --format " + o.format));
        return kExitUsage;
    }
    if (o.supercompression_given && container != texture::ContainerFormat::ktx2) {
        print_error(Status(StatusCode::invalid_argument,
                           "--supercompression needs --format ktx2 (DDS has none), got --format " + o.format));
        return kExitUsage;
    }
    if (o.block_psnr && o.codec != "astc") {
        print_error(Status(StatusCode::invalid_argument, "--block-psnr sets --codec astc's target; got --codec " + o.codec));
        return kExitUsage;
    }
    if (o.json && !container) {
        print_error(Status(StatusCode::invalid_argument,
                           "--json reports block compression: it needs --format dds or ktx2, got --format " + o.format));
        return kExitUsage;
    }
    const CurrentStep step(o.pack_path, "reading the pack and preparing the decoder");
    auto pack = read_pack_file(o.pack_path);
    if (!pack.ok()) {
        print_error(pack.status());
        return exit_code_for(pack.status());
    }
    PackDecoderOptions decoder_options;
    decoder_options.device = o.device;
    decoder_options.threads = o.threads;
    if (container) return run_decompress_blocks(o, globals, pack.value(), decoder_options, *container);
    auto decoder = create_pack_decoder(pack.value(), decoder_options);
    if (!decoder.ok()) {
        print_error(decoder.status());
        return exit_code_for(decoder.status());
    }
    const std::string format_override = o.format == "source" ? "" : o.format;
    const int mips = o.all_mips ? pack->material.mip_count : 1;

    // Every output name first, so an existing file stops the run before anything is written.
    for (const TextureLayout& layout : pack->textures)
        for (int m = 0; m < mips; ++m) {
            const std::string path = o.out_dir + "/" + texture_output_name(layout, m, o.suffix, format_override);
            if (!o.force && exists(path)) {
                print_error(Status(StatusCode::io_error, path + ": exists (use --force to overwrite)"));
                return kExitIo;
            }
        }
    Status dir = make_directories(o.out_dir);
    if (!dir.ok()) {
        print_error(dir);
        return kExitIo;
    }

    size_t written = 0;
    for (size_t t = 0; t < pack->textures.size(); ++t) {
        const TextureLayout& layout = pack->textures[t];
        for (int m = 0; m < mips; ++m) {
            const int width = pack->material.mip_width(m);
            const int height = pack->material.mip_height(m);
            const CurrentStep texture_step(o.pack_path, "decoding texture '" + layout.name + "' mip " +
                                                            std::to_string(m) + " (" + std::to_string(width) + " x " +
                                                            std::to_string(height) + ", " +
                                                            std::to_string(layout.channels.size()) +
                                                            " channels) and writing it");
            auto writer =
                TextureFileWriter::open(o.out_dir, layout, width, height, m, o.suffix, format_override, o.force);
            if (!writer.ok()) {
                print_error(writer.status());
                return exit_code_for(writer.status());
            }
            // A band of rows at a time, so that memory holds a band, not the texture (docs/cli.md states the peak).
            const int band_rows = (*decoder)->decodes_rows() ? rows_per_band(width, layout.channels.size()) : height;
            for (int row = 0; row < height; row += band_rows) {
                auto band =
                    (*decoder)->decode_texture_rows(static_cast<int>(t), m, row, std::min(band_rows, height - row));
                const Status stored = band.ok() ? (*writer)->write_rows(std::move(band).value()) : band.status();
                if (!stored.ok()) {
                    print_error(stored);
                    return exit_code_for(stored);
                }
            }
            auto file = (*writer)->finish();
            if (!file.ok()) {
                print_error(file.status());
                return exit_code_for(file.status());
            }
            if (globals.verbosity > 0) {
                std::printf("wrote %s (%dx%d, %zu channels, %s%s)\n", file->path.c_str(), width, height,
                            layout.channels.size(), to_string(file->sample_type),
                            file->converted_to_linear ? ", sRGB colour converted to linear" : "");
                if (file->clipped_samples > 0) warn_clipped(layout, *file);
            }
            ++written;
        }
    }
    if (globals.verbosity > 0)
        std::printf("%zu file(s) from %s, decoded on %s\n", written, o.pack_path.c_str(), (*decoder)->description().c_str());
    return kExitOk;
}

}  // namespace

void add_decompress_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    auto options = std::make_shared<DecompressOptions>();
    CLI::App* cmd = app.add_subcommand(
        "decompress", "Decode a pack back to image files with the source's names, formats, bit depths and colour "
                      "spaces (packed maps packed again)");
    cmd->add_option("PACK", options->pack_path, "The .nmc pack")->required();
    cmd->add_option("-o,--output", options->out_dir, "Output folder (created if missing)")->required();
    cmd->add_option("--format", options->format,
                    "Output format: source (each file's own), png, exr or tga; dds or ktx2 for block-compressed "
                    "textures with every mip")
        ->check(CLI::IsMember({"source", "png", "exr", "tga", "dds", "ktx2"}));
    cmd->add_option("--codec", options->codec,
                    "Block format of --format dds|ktx2: auto (BC4 one channel, BC5 normal maps stored as X,Y and two "
                    "channels, BC6H float (HDR) maps, BC7 the rest), bc1, bc4, bc5, bc6h, bc7, astc-4x4 .. astc-12x12 (KTX2 only), or astc: the "
                    "largest ASTC block reaching --block-psnr, per texture")
        ->check(CLI::IsMember(codec_names()))
        ->each([options](const std::string&) { options->codec_given = true; });
    cmd->add_option("--block-psnr", options->block_psnr,
                    "--codec astc's target: block compression psnr8 of mip 0 against the decoded texels, in dB "
                    "(default: the texture's pack psnr8 + 6, which costs the result about 1 dB)")
        ->check(CLI::Range(1.0, 99.0));
    cmd->add_option("--supercompression", options->supercompression,
                    "KTX2 level supercompression: none (the default) or zstd")
        ->check(CLI::IsMember({"none", "zstd"}))
        ->each([options](const std::string&) { options->supercompression_given = true; });
    cmd->add_option("--astc-effort", options->astc_effort,
                    "astcenc's search effort for --codec astc-*: fastest, fast, medium (the default), thorough or "
                    "exhaustive")
        ->check(CLI::IsMember(texture::astc_effort_names()));
    cmd->add_flag("--json", options->json,
                  "With --format dds|ktx2: the files written, each texture's block compression psnr8 and the pack's "
                  "own, as one JSON object on stdout");
    cmd->add_option("--suffix", options->suffix, "Inserted before each file's extension, e.g. _decoded");
    cmd->add_flag("--mips", options->all_mips, "Also write every mip level (<name>_mip<N>.<ext>)");
    cmd->add_option("--device", options->device,
                    "Decoder: cpu, cuda[:N] (builds with the CUDA decoder) or vulkan[:N] (builds with the Vulkan runtime)");
    cmd->add_option("--threads", options->threads, "Decoder threads (0: all cores)")->check(CLI::Range(0, 1024));
    cmd->add_flag("-f,--force", options->force, "Overwrite existing image files");
    cmd->callback([options, &globals, &exit_code] { exit_code = run_decompress(*options, globals); });
}

}  // namespace nmc::cli
