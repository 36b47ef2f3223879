// nmc scan: shows what nmc makes of a material folder or manifest (maps, semantics, sizes, bit depths,
// colour spaces, pack-channel allocation, ignored files and why) and can write the inferred manifest.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "core/file_io.h"
#include "material/material.h"
#include "validate/validation.h"

namespace nmc::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ScanOptions {
    std::string input;
    bool json = false;
    std::string manifest_out;
    bool force = false;
    std::string normal_mode = "auto";
    bool gloss_to_roughness = false;
    bool resample = false;
    bool strict = false;
};

std::string channel_text(const ChannelSource& s, const std::vector<PackChannel>& channels) {
    switch (s.kind) {
        case ChannelSource::Kind::pack:
            return channels[static_cast<size_t>(s.pack_channel)].name + (s.invert ? " (inverted)" : "");
        case ChannelSource::Kind::constant: {
            char buf[48];
            std::snprintf(buf, sizeof buf, "constant %g", static_cast<double>(s.constant_value));
            return buf;
        }
        case ChannelSource::Kind::normal_z: return "rebuilt normal z";
    }
    return "";
}

Json to_json(const MaterialScan& scan) {
    Json j;
    j["name"] = scan.name;
    j["folder"] = scan.source_folder;
    j["width"] = scan.width;
    j["height"] = scan.height;
    j["mip_count"] = scan.mip_count;
    j["image_backend"] = image_backend_name();
    Json textures = Json::array();
    for (size_t t = 0; t < scan.textures.size(); ++t) {
        const TextureLayout& l = scan.textures[t];
        const TextureFileInfo& f = scan.files[t];
        Json channels = Json::array();
        for (size_t c = 0; c < l.channels.size(); ++c) {
            const ChannelSource& s = l.channels[c];
            Json cj;
            cj["semantic"] = to_string(s.semantic);
            cj["source"] = s.kind == ChannelSource::Kind::pack       ? "pack"
                           : s.kind == ChannelSource::Kind::constant ? "constant"
                                                                     : "normal_z";
            if (s.kind == ChannelSource::Kind::pack) {
                cj["pack_channel"] = s.pack_channel;
                cj["invert"] = s.invert;
            }
            if (s.kind == ChannelSource::Kind::constant) cj["value"] = s.constant_value;
            cj["loss_weight"] = f.loss_weights[c];
            channels.push_back(cj);
        }
        Json tj;
        tj["name"] = l.name;
        tj["file_name"] = l.file_name;
        tj["recognised_by"] = f.reason;
        tj["semantic"] = l.semantic_label();
        tj["width"] = f.width;
        tj["height"] = f.height;
        tj["file_format"] = l.file_format;
        tj["sample_type"] = to_string(l.sample_type);
        tj["bits"] = bits_of(l.sample_type);
        tj["color_space"] = to_string(l.color_space);
        tj["normal_mode"] = to_string(l.normal_mode);
        tj["normal_convention"] = to_string(l.normal_convention);
        if (l.value_encoding != ValueEncoding::none) {
            tj["value_encoding"] = to_string(l.value_encoding);
            tj["peak"] = l.peak;
        }
        tj["source_sha256"] = l.source_sha256;
        tj["channels"] = channels;
        textures.push_back(tj);
    }
    j["textures"] = textures;
    Json pack = Json::array();
    for (const auto& c : scan.channels)
        pack.push_back({{"name", c.name}, {"range", {c.lo, c.hi}}, {"loss_weight", c.loss_weight},
                        {"color_space", to_string(c.color_space)}});
    j["channels"] = pack;
    Json ignored = Json::array();
    for (const IgnoredFile& f : scan.ignored_files)
        ignored.push_back({{"file", f.file}, {"reason", f.reason}, {"image", f.image}});
    j["ignored"] = ignored;
    j["warnings"] = scan.warnings;
    return j;
}

void print_text(const MaterialScan& scan) {
    std::printf("material  %s (%s)\n", scan.name.c_str(), scan.source_folder.c_str());
    std::printf("size      %dx%d, %d mips\n", scan.width, scan.height, scan.mip_count);
    std::printf("textures  %zu\n", scan.textures.size());
    for (size_t t = 0; t < scan.textures.size(); ++t) {
        const TextureLayout& l = scan.textures[t];
        const TextureFileInfo& f = scan.files[t];
        std::printf("  %s\n", l.file_name.c_str());
        std::printf("    %s (%s), %dx%d, %d ch, %s %s, %s", l.semantic_label().c_str(), f.reason.c_str(), f.width,
                    f.height, f.channels, l.file_format.c_str(), to_string(l.sample_type), to_string(l.color_space));
        if (l.holds_normals())
            std::printf(", normals %s %s", to_string(l.normal_convention),
                        l.normal_mode == NormalMode::none ? "stored" : to_string(l.normal_mode));
        if (l.value_encoding == ValueEncoding::hlg)
            std::printf(", HDR: stored on the HLG curve, peak %g", static_cast<double>(l.peak));
        std::printf("\n");
        for (size_t c = 0; c < l.channels.size(); ++c)
            std::printf("    [%zu] %-18s <- %s\n", c, to_string(l.channels[c].semantic),
                        channel_text(l.channels[c], scan.channels).c_str());
    }
    std::printf("pack channels  %zu of %d\n", scan.channels.size(), kMaxPackChannels);
    for (size_t c = 0; c < scan.channels.size(); ++c) {
        const PackChannel& p = scan.channels[c];
        std::printf("  %2zu %-24s [%g, %g] weight %g\n", c, p.name.c_str(), static_cast<double>(p.lo),
                    static_cast<double>(p.hi), static_cast<double>(p.loss_weight));
    }
    if (!scan.ignored_files.empty()) {
        std::printf("ignored  %zu\n", scan.ignored_files.size());
        for (const IgnoredFile& f : scan.ignored_files) std::printf("  %s: %s\n", f.file.c_str(), f.reason.c_str());
    }
}

int run_scan(const ScanOptions& options, int verbosity) {
    MaterialLoadOptions load;
    load.normal_mode = normal_mode_choice_from_string(options.normal_mode).value_or(NormalModeChoice::automatic);
    load.gloss_to_roughness = options.gloss_to_roughness;
    load.resample_mismatched = options.resample;
    load.strict = options.strict;
    const Overwrite overwrite = options.force ? Overwrite::allow : Overwrite::refuse;
    // The manifest's path is checked before the images are decoded, as every command checks its outputs first.
    if (!options.manifest_out.empty()) {
        if (Status ready = prepare_output_file(options.manifest_out, overwrite); !ready.ok()) {
            print_error(ready);
            return kExitIo;
        }
    }
    const CurrentStep step(options.input, "reading the material's images");
    auto scan = scan_material(options.input, load);
    if (!scan.ok()) {
        print_error(scan.status());
        return exit_code_for(scan.status(), /*input_is_material=*/true);
    }
    if (verbosity > 0)
        for (const auto& w : scan->warnings) std::fprintf(stderr, "nmc: warning: %s\n", w.c_str());
    if (options.json)
        std::printf("%s\n", to_json(*scan).dump(2).c_str());
    else
        print_text(*scan);
    if (!options.manifest_out.empty()) {
        // The manifest names the material's folder relative to its own folder (docs/manifest.md `folder`), as a pack
        // records its sources: written anywhere, it is read from any working directory. Beside the maps it says nothing.
        Manifest manifest = scan->manifest;
        const std::string folder = source_folder_to_record(scan->source_folder, options.manifest_out);
        manifest.folder = folder == "." ? "" : folder;
        const std::string text = manifest_to_json(manifest);
        const Status s = write_file_atomically(options.manifest_out, text.data(), text.size(),
                                               overwrite);
        if (!s.ok()) {
            print_error(s);
            return exit_code_for(s, true);
        }
        if (verbosity > 0) std::fprintf(stderr, "nmc: wrote %s\n", options.manifest_out.c_str());
    }
    return kExitOk;
}

}  // namespace

void add_scan_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    CLI::App* command = app.add_subcommand(
        "scan", "Show how a material folder or manifest is understood: maps, semantics, sizes, bit depths, colour "
                "spaces, pack channels, ignored files");
    auto options = std::make_shared<ScanOptions>();
    command->add_option("FOLDER", options->input, "Material folder, a manifest (.json) or one image file")->required();
    command->add_flag("--json", options->json, "Print the same facts as one JSON object on stdout");
    command->add_option("--write-manifest", options->manifest_out,
                        "Write the inferred manifest (docs/manifest.md) to FILE for editing");
    command->add_flag("-f,--force", options->force, "Overwrite an existing --write-manifest FILE");
    command->add_option("--normal-mode", options->normal_mode, "Normal maps in the pack: auto (per map: xy where rebuilding Z loses little, else stored), xy (Z "
                        "rebuilt), xyz (renormalised) or stored (three plain channels)")
        ->check(CLI::IsMember(kNormalModeNames));
    add_image_reading_options(*command, options->gloss_to_roughness, options->resample);
    command->add_flag("--strict", options->strict,
                      "An image file of the folder that would be left out of the pack is an error (exit 8), not a "
                      "warning");
    command->callback([options, &globals, &exit_code] { exit_code = run_scan(*options, globals.verbosity); });
}

}  // namespace nmc::cli
