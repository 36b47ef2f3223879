// nmc inspect: prints everything a pack holds (container, material, textures, latents, network, encoder
// settings, stored quality) as readable text, or as one JSON object with --json.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "format/metadata.h"
#include "format/pack.h"

namespace nmc::cli {
namespace {

using Json = nlohmann::ordered_json;

struct InspectOptions {
    std::string path;
    bool json = false;
};

const char* compression_name(int compression) {
    return compression == 1 ? "zstd" : "none";
}

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

// Figures derived from the pack, shared by the text and JSON views.
struct Derived {
    double bits_per_texel = 0;
    uint64_t weight_bytes = 0;  // weights only, all layers
};

Derived derive(const Pack& pack, const ContainerInfo& container) {
    Derived d;
    const double texels = static_cast<double>(pack.material.width) * static_cast<double>(pack.material.height);
    d.bits_per_texel = static_cast<double>(container.file_size) * 8.0 / texels;
    for (const Layer& l : pack.network.layers) d.weight_bytes += l.weights.size();
    return d;
}

uint64_t level_bytes(const LatentLevel& l, int feature_count) {
    return (static_cast<uint64_t>(l.width) * static_cast<uint64_t>(l.height) * static_cast<uint64_t>(feature_count) *
                static_cast<uint64_t>(l.bits) +
            7) /
           8;
}

std::string source_text(const ChannelSource& s) {
    switch (s.kind) {
        case ChannelSource::Kind::pack:
            return "pack channel " + std::to_string(s.pack_channel) + (s.invert ? " (inverted)" : "");
        case ChannelSource::Kind::constant: {
            char buf[48];
            std::snprintf(buf, sizeof buf, "constant %g", static_cast<double>(s.constant_value));
            return buf;
        }
        case ChannelSource::Kind::normal_z:
            return "rebuilt normal Z";
    }
    return "unknown";
}

std::string list_text(const std::vector<double>& values) {
    std::string s;
    for (const double v : values) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.2f", s.empty() ? "" : " ", v);
        s += buf;
    }
    return s;
}

// The pack's own metadata (the META JSON the format writes, so the keys and values are the file's) plus what
// only inspect shows: the container and its sections, per-mip sizes, latent level and weight byte counts, the
// output scales, and per-texture quality as an array. Fails only for metadata that is not valid UTF-8.
Result<Json> report_json(const std::string& path, const Pack& pack, const ContainerInfo& container) {
    auto meta = metadata_to_json(pack);
    if (!meta.ok()) return meta.status();
    const Json metadata = Json::parse(*meta);
    const Derived d = derive(pack, container);
    Json j;
    j["file"] = path;
    j["file_size"] = container.file_size;
    j["bits_per_texel"] = d.bits_per_texel;
    j["format_version"] = std::to_string(container.version_major) + "." + std::to_string(container.version_minor);
    j["schema_version"] = metadata["schema_version"];
    Json sections = Json::array();
    for (const SectionEntry& e : container.sections)
        sections.push_back({{"fourcc", e.fourcc},
                            {"required", e.required},
                            {"compression", compression_name(e.compression)},
                            {"offset", e.offset},
                            {"stored_size", e.stored_size},
                            {"raw_size", e.raw_size},
                            {"stored_crc", hex32(e.stored_crc)},
                            {"raw_crc", hex32(e.raw_crc)}});
    j["sections"] = std::move(sections);

    j["material"] = metadata["material"];
    Json mips = Json::array();
    for (int mip = 0; mip < pack.material.mip_count; ++mip)
        mips.push_back({{"width", pack.material.mip_width(mip)}, {"height", pack.material.mip_height(mip)}});
    j["material"]["mips"] = std::move(mips);
    j["channels"] = metadata["channels"];
    j["textures"] = metadata["textures"];

    j["latents"] = metadata["latents"];
    for (size_t k = 0; k < pack.latents.levels.size(); ++k)
        j["latents"]["levels"][k]["bytes"] = level_bytes(pack.latents.levels[k], pack.latents.feature_count);

    j["network"] = {{"activation", metadata["network"]["activation"]},
                    {"arithmetic", to_string(pack.network.arithmetic)},
                    {"layer_count", pack.network.layers.size()},
                    {"weight_bytes", d.weight_bytes},
                    {"layers", metadata["network"]["layers"]}};
    for (size_t l = 0; l < pack.network.layers.size(); ++l) {
        const Layer& layer = pack.network.layers[l];
        Json scales = Json::array();
        for (const float v : layer.scales) scales.push_back(static_cast<double>(v));
        j["network"]["layers"][l]["weight_bytes"] = layer.weights.size();
        j["network"]["layers"][l]["scales"] = std::move(scales);
    }
    j["encoder"] = metadata["encoder"];

    if (metadata.contains("quality")) {
        Json quality = metadata["quality"];
        Json per_texture = Json::array();  // META keys textures by name; a list keeps the pack's order
        for (const TextureQuality& t : pack.quality.textures) {
            Json tj = {{"texture", t.texture}};
            tj.update(quality["textures"][t.texture]);
            per_texture.push_back(std::move(tj));
        }
        quality["textures"] = std::move(per_texture);
        j["quality"] = std::move(quality);
    } else {
        j["quality"] = nullptr;
    }
    return j;
}

void print_text(const std::string& path, const Pack& pack, const ContainerInfo& container, int verbosity) {
    const Derived d = derive(pack, container);
    const MaterialInfo& m = pack.material;
    std::printf("pack           %s\n", path.c_str());
    std::printf("file size      %llu bytes, %.4f bpp (%d x %d mip-0 texels)\n",
                static_cast<unsigned long long>(container.file_size), d.bits_per_texel, m.width, m.height);
    std::printf("format         %u.%u\n", container.version_major, container.version_minor);

    std::printf("\nsections (%zu)\n", container.sections.size());
    std::printf("  %-6s %-8s %-11s %10s %10s %10s %-10s %-10s\n", "fourcc", "required", "compression", "offset",
                "stored", "raw", "stored_crc", "raw_crc");
    for (const SectionEntry& e : container.sections)
        std::printf("  %-6s %-8s %-11s %10llu %10llu %10llu %-10s %-10s\n", e.fourcc.c_str(), e.required ? "yes" : "no",
                    compression_name(e.compression), static_cast<unsigned long long>(e.offset),
                    static_cast<unsigned long long>(e.stored_size), static_cast<unsigned long long>(e.raw_size),
                    hex32(e.stored_crc).c_str(), hex32(e.raw_crc).c_str());

    std::printf("\nmaterial       %s\n", m.name.c_str());
    std::printf("  size         %d x %d, %d mips:", m.width, m.height, m.mip_count);
    for (int mip = 0; mip < m.mip_count; ++mip) std::printf(" %dx%d", m.mip_width(mip), m.mip_height(mip));
    std::printf("\n  address mode %s\n", to_string(m.address_mode));

    std::printf("\nchannels (%zu)\n", pack.channels.size());
    for (size_t c = 0; c < pack.channels.size(); ++c)
        std::printf("  %2zu  %-20s range [%g, %g]\n", c, pack.channels[c].name.c_str(),
                    static_cast<double>(pack.channels[c].lo), static_cast<double>(pack.channels[c].hi));

    std::printf("\ntextures (%zu)\n", pack.textures.size());
    for (const TextureLayout& t : pack.textures) {
        std::printf("  %s\n", t.name.c_str());
        std::printf("    file       %s (%s, %s, %s)\n", t.file_name.c_str(), t.file_format.c_str(),
                    to_string(t.sample_type), to_string(t.color_space));
        std::printf("    semantic   %s\n", t.semantic_label().c_str());
        if (t.value_encoding == ValueEncoding::hlg)
            std::printf("    encoding   hlg, peak %g (HDR values stored on the HLG curve)\n", static_cast<double>(t.peak));
        if (t.holds_normals())
            std::printf("    normal     mode %s, convention %s\n",
                        t.normal_mode == NormalMode::none ? "none (stored as 3 plain channels)" : to_string(t.normal_mode),
                        to_string(t.normal_convention));
        if (!t.source_sha256.empty()) std::printf("    sha256     %s\n", t.source_sha256.c_str());
        for (size_t c = 0; c < t.channels.size(); ++c)
            std::printf("    channel %zu  %-18s <- %s\n", c, to_string(t.channels[c].semantic),
                        source_text(t.channels[c]).c_str());
    }

    const LatentGrids& g = pack.latents;
    std::printf("\nlatents        %d features per texel, grid scale %d, %zu levels\n", g.feature_count, g.grid_scale,
                g.levels.size());
    std::printf("  %-5s %-11s %4s  %-22s %10s\n", "level", "size", "bits", "range", "bytes");
    for (size_t k = 0; k < g.levels.size(); ++k) {
        const LatentLevel& l = g.levels[k];
        char size[32];
        char range[48];
        std::snprintf(size, sizeof size, "%d x %d", l.width, l.height);
        std::snprintf(range, sizeof range, "[%g, %g]", static_cast<double>(l.lo), static_cast<double>(l.hi));
        std::printf("  %-5zu %-11s %4d  %-22s %10llu\n", k, size, l.bits, range,
                    static_cast<unsigned long long>(level_bytes(l, g.feature_count)));
    }

    const Network& n = pack.network;
    std::printf("\nnetwork        %zu layers, activation %s, %s arithmetic, %llu weight bytes\n", n.layers.size(),
                to_string(n.activation), to_string(n.arithmetic), static_cast<unsigned long long>(d.weight_bytes));
    for (size_t i = 0; i < n.layers.size(); ++i) {
        const Layer& l = n.layers[i];
        std::printf("  layer %zu      %3d -> %3d  %-4s  %6zu weight bytes", i, l.input_width, l.output_width,
                    to_string(l.weight_type), l.weights.size());
        if (!l.has_scale()) {
            std::printf(", no scales\n");
            continue;
        }
        const auto [lo, hi] = std::minmax_element(l.scales.begin(), l.scales.end());
        std::printf(", scales %g .. %g\n", static_cast<double>(*lo), static_cast<double>(*hi));
        if (verbosity >= 2) {
            std::printf("    scales");
            for (const float s : l.scales) std::printf(" %g", static_cast<double>(s));
            std::printf("\n");
        }
    }

    const EncoderInfo& e = pack.encoder;
    std::printf("\nencoder        %s\n", e.tool.empty() ? "(unknown)" : e.tool.c_str());
    std::printf("  preset %s, target %g bpp, %lld steps, seed %lld, device %s, %g s training\n",
                e.preset.empty() ? "-" : e.preset.c_str(), e.target_bpp, static_cast<long long>(e.steps),
                static_cast<long long>(e.seed), e.device.empty() ? "-" : e.device.c_str(), e.training_seconds);
    if (!e.trainer.empty())
        std::printf("  %s trainer, batch %lld, Adam lr %g latents / %g network, latents rounded (%s) at %g, weights "
                    "at %g, %s latent Adam\n",
                    e.trainer.c_str(), static_cast<long long>(e.batch_size), e.latent_learning_rate,
                    e.network_learning_rate, e.latent_rounding.c_str(), e.latent_rounding_at, e.weight_rounding_at,
                    e.latent_adam.c_str());
    if (!e.source_folder.empty()) std::printf("  source folder %s\n", e.source_folder.c_str());

    const QualityReport& q = pack.quality;
    if (!q.present) {
        std::printf("\nquality        not stored\n");
        return;
    }
    std::printf("\nquality        %.2f dB PSNR overall, %.2f dB psnr8 mip 0, %.4f bpp\n", q.psnr_db, q.psnr8_mip0_db,
                q.bits_per_texel);
    if (!q.channels.empty()) std::printf("  channels     %s\n", list_text(q.channels).c_str());
    if (!q.mips.empty()) std::printf("  mips         %s\n", list_text(q.mips).c_str());
    for (const TextureQuality& t : q.textures) {
        std::printf("  %s: %.2f dB", t.texture.c_str(), t.psnr_db);
        if (!t.channels.empty()) std::printf(", channels %s", list_text(t.channels).c_str());
        if (!t.mips.empty()) std::printf(", mips %s", list_text(t.mips).c_str());
        if (t.mean_angle_deg >= 0) std::printf(", mean angle %.2f deg", t.mean_angle_deg);
        if (t.psnr8_mip0_db != 0) std::printf(", psnr8 mip 0 %.2f dB", t.psnr8_mip0_db);
        std::printf("\n");
    }
}

int run_inspect(const InspectOptions& options, int verbosity) {
    const CurrentStep step(options.path, "reading the pack");
    ContainerInfo container;
    Result<Pack> pack = read_pack_file(options.path, &container);
    if (!pack.ok()) {
        print_error(pack.status());
        return exit_code_for(pack.status());
    }
    if (options.json) {
        auto report = report_json(options.path, *pack, container);
        if (!report.ok()) {
            print_error(report.status().with_context(options.path));
            return exit_code_for(report.status());
        }
        // The path comes from the command line and need not be UTF-8: such bytes print as U+FFFD.
        std::printf("%s\n", report->dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    } else {
        print_text(options.path, *pack, container, verbosity);
    }
    return kExitOk;
}

}  // namespace

void add_inspect_command(CLI::App& app, const GlobalOptions& globals, int& exit_code) {
    CLI::App* command = app.add_subcommand(
        "inspect",
        "Print everything an .nmc pack holds: size and bpp, sections, material, textures, latent grids, "
        "network, encoder settings and stored quality");
    auto options = std::make_shared<InspectOptions>();
    command->add_option("PACK", options->path, "The .nmc pack to inspect")->required();
    command->add_flag("--json", options->json, "Print the same facts as one JSON object on stdout");
    command->callback([options, &globals, &exit_code] { exit_code = run_inspect(*options, globals.verbosity); });
}

}  // namespace nmc::cli
