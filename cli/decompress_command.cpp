// nmc decompress: decodes a pack back to image files with the source's names, formats, bit depths and colour
// spaces (packed maps packed again), optionally every mip level; or to block-compressed DDS / KTX2 files with
// every mip, for engines.
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
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
    std::string block_format = "auto";  // --bc, for --format dds|ktx2
    bool block_format_given = false;
    bool all_mips = false;
    bool force = false;
    int threads = 0;
};

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
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

// --format dds|ktx2: one file per texture holding every mip of the pack, block-compressed as --bc chooses.
int run_decompress_blocks(const DecompressOptions& o, const GlobalOptions& globals, const Pack& pack,
                          const PackDecoderOptions& decoder_options, texture::ContainerFormat container) {
    const std::optional<texture::BlockFormat> requested =
        o.block_format == "auto" ? std::nullopt : texture::block_format_from_string(o.block_format);
    // Every texture's format and output name first: a texture the format cannot hold, or an existing file, stops
    // the run before anything is decoded.
    std::vector<texture::BlockChoice> choices;
    std::map<std::string, std::string> texture_of_path;  // two source files of one stem (a.png, a.tga) collide
    for (const TextureLayout& layout : pack.textures) {
        auto choice = texture::choose_block_format(layout, requested);
        if (!choice.ok()) {
            print_error(choice.status().with_context(o.pack_path));
            return exit_code_for(choice.status());
        }
        choices.push_back(*choice);
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
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const TextureLayout& layout = pack.textures[t];
        std::vector<Image> mips;
        for (int m = 0; m < pack.material.mip_count; ++m) {
            auto image = (*decoder)->decode_texture(static_cast<int>(t), m);
            if (!image.ok()) {
                print_error(image.status());
                return exit_code_for(image.status());
            }
            mips.push_back(std::move(image.value()));
        }
        auto encoded = texture::encode_block_texture(choices[t], mips, o.threads);
        const std::string path = o.out_dir + "/" + texture_output_name(layout, 0, o.suffix, texture::to_string(container));
        if (!encoded.ok()) {
            print_error(encoded.status().with_context(path));
            return kExitInternal;  // the decoder's mips always form a chain: a failure here is a bug
        }
        Status written = texture::write_texture_file(path, container, encoded->texture, o.force);
        if (!written.ok()) {
            print_error(written);
            return exit_code_for(written);
        }
        if (globals.verbosity > 0) {
            std::printf("wrote %s (%dx%d, %d mips, %s%s; block compression psnr8 %.2f dB over %d channel(s)",
                        path.c_str(), encoded->texture.width, encoded->texture.height, pack.material.mip_count,
                        texture::to_string(choices[t].format), choices[t].srgb ? " sRGB" : "",
                        psnr_from_mse(encoded->mip0_mse8), encoded->compared_channels);
            for (const TextureQuality& q : pack.quality.textures)
                if (q.texture == layout.name && q.psnr8_mip0_db > 0) std::printf("; pack psnr8 %.2f dB", q.psnr8_mip0_db);
            std::printf(")\n");
        }
    }
    if (globals.verbosity > 0)
        std::printf("%zu file(s) from %s, decoded on %s\n", pack.textures.size(), o.pack_path.c_str(),
                    (*decoder)->description().c_str());
    return kExitOk;
}

int run_decompress(const DecompressOptions& o, const GlobalOptions& globals) {
    const std::optional<texture::ContainerFormat> container = texture::container_format_from_string(o.format);
    if (o.block_format_given && !container) {
        print_error(Status(StatusCode::invalid_argument, "--bc needs --format dds or ktx2, got --format " + o.format));
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
    cmd->add_option("--bc", options->block_format,
                    "Block format of --format dds|ktx2: auto (BC4 one channel, BC5 normal maps stored as X,Y and two "
                    "channels, BC7 the rest), bc1, bc4, bc5 or bc7")
        ->check(CLI::IsMember({"auto", "bc1", "bc4", "bc5", "bc7"}))
        ->each([options](const std::string&) { options->block_format_given = true; });
    cmd->add_option("--suffix", options->suffix, "Inserted before each file's extension, e.g. _decoded");
    cmd->add_flag("--mips", options->all_mips, "Also write every mip level (<name>_mip<N>.<ext>)");
    cmd->add_option("--device", options->device,
                    "Decoder: cpu, cuda[:N] (builds with the CUDA decoder) or vulkan[:N] (builds with the Vulkan runtime)");
    cmd->add_option("--threads", options->threads, "Decoder threads (0: all cores)")->check(CLI::Range(0, 1024));
    cmd->add_flag("-f,--force", options->force, "Overwrite existing image files");
    cmd->callback([options, &globals, &exit_code] { exit_code = run_decompress(*options, globals); });
}

}  // namespace nmc::cli
