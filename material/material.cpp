// Material discovery and loading: folder or manifest -> recognised files -> images -> texture layouts and
// pack-channel allocation -> normalised pack-channel planes and their mip chain. Also writes decoded
// textures back under their source's names.
#include "material/material.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "core/hlg.h"
#include "material/file_naming.h"
#include "material/mip_chain.h"

namespace nmc {
namespace {

namespace fs = std::filesystem;

// Pack-channel order of textures: the order a reader expects to find maps in.
int priority(Semantic s) {
    switch (s) {
        case Semantic::albedo: return 0;
        case Semantic::normal: return 1;
        case Semantic::roughness: return 2;
        case Semantic::glossiness: return 3;
        case Semantic::metalness: return 4;
        case Semantic::ambient_occlusion: return 5;
        case Semantic::height: return 6;
        case Semantic::opacity: return 7;
        case Semantic::emissive: return 8;
        case Semantic::specular: return 9;
        case Semantic::other: return 10;
    }
    return 10;
}

std::string stem_of(const std::string& file_name) {
    const size_t dot = file_name.rfind('.');
    return dot == std::string::npos ? file_name : file_name.substr(0, dot);
}

// A file chosen as a texture, and what is known about it before its pixels are read.
struct Candidate {
    std::string file;
    std::string reason;                  // "name: nor_gl" or "manifest"
    std::optional<Semantic> semantic;    // whole-map semantic
    std::vector<Semantic> channels;      // or per-channel semantics (packed maps, manifest swizzles)
    std::optional<NormalConvention> convention;
    std::optional<ColorSpace> color_space;
    std::string name;
    std::vector<float> loss_weights;
};

struct Discovery {
    MaterialScan scan;
    std::vector<Image> images;  // parallel to scan.textures, at the material's size
};

// The semantics of each file channel, from the candidate and the file's channel count.
Result<std::vector<Semantic>> channel_semantics(const Candidate& c, int file_channels, const std::string& origin) {
    const auto n = static_cast<size_t>(file_channels);
    if (!c.channels.empty()) {
        if (c.reason == "manifest" && c.channels.size() != n)
            return Status(StatusCode::invalid_argument, origin + ": " + c.file + ": \"channels\" lists " +
                                                            std::to_string(c.channels.size()) +
                                                            " semantics, the file has " +
                                                            std::to_string(file_channels) + " channels");
        if (n < c.channels.size())
            return Status(StatusCode::invalid_argument, c.file + ": a packed map needs " +
                                                            std::to_string(c.channels.size()) +
                                                            " channels, the file has " + std::to_string(file_channels));
        std::vector<Semantic> out = c.channels;
        out.resize(n, Semantic::other);  // a packed map's alpha has no conventional meaning
        return out;
    }
    const Semantic s = *c.semantic;
    if (s == Semantic::normal) {
        if (n != 3)
            return Status(StatusCode::invalid_argument, c.file + ": a normal map must have 3 channels (RGB), the file has " +
                                                            std::to_string(file_channels));
        return std::vector<Semantic>(3, s);
    }
    std::vector<Semantic> out(n, s);
    if (is_color(s) && (n == 2 || n == 4)) out.back() = Semantic::opacity;  // RGBA albedo: A is opacity
    return out;
}

ColorSpace choose_color_space(const Candidate& c, const std::vector<Semantic>& semantics, const ImageFile& file) {
    if (c.color_space) return *c.color_space;
    if (!is_color(semantics.front())) return ColorSpace::linear;  // data maps: an sRGB tag is a tool default
    if (is_float(file.image.sample_type)) return ColorSpace::linear;
    if (file.declared_color_space == ColorSpace::linear) return ColorSpace::linear;
    return ColorSpace::srgb;
}

// Bilinear resampling at texel centres, edges clamped (only used with resample_mismatched).
Image resample(const Image& src, int width, int height) {
    Image out(width, height, src.channels, src.sample_type);
    for (int y = 0; y < height; ++y) {
        const float sy = std::min(std::max((y + 0.5f) * src.height / height - 0.5f, 0.0f), src.height - 1.0f);
        const int y0 = static_cast<int>(sy), y1 = std::min(y0 + 1, src.height - 1);
        const float fy = sy - y0;
        for (int x = 0; x < width; ++x) {
            const float sx = std::min(std::max((x + 0.5f) * src.width / width - 0.5f, 0.0f), src.width - 1.0f);
            const int x0 = static_cast<int>(sx), x1 = std::min(x0 + 1, src.width - 1);
            const float fx = sx - x0;
            for (int c = 0; c < src.channels; ++c) {
                const float top = src.at(x0, y0, c) * (1 - fx) + src.at(x1, y0, c) * fx;
                const float bottom = src.at(x0, y1, c) * (1 - fx) + src.at(x1, y1, c) * fx;
                out.at(x, y, c) = top * (1 - fy) + bottom * fy;
            }
        }
    }
    return out;
}

std::vector<ChannelStats> measure(const Image& image, const TextureLayout& layout) {
    const auto n = static_cast<size_t>(image.channels);
    std::vector<ChannelStats> stats(n);
    for (size_t c = 0; c < n; ++c) {
        float lo = image.pixels[c], hi = image.pixels[c];
        for (size_t i = c; i < image.pixels.size(); i += n) {
            lo = std::min(lo, image.pixels[i]);
            hi = std::max(hi, image.pixels[i]);
        }
        stats[c].min = lo;
        stats[c].max = hi;
        if (layout.normal_mode != NormalMode::none) continue;  // normal X and Y always stay in the pack
        if (lo == hi) {
            stats[c].constant = lo;
            continue;
        }
        for (size_t e = 0; e < c; ++e) {
            if (layout.channels[e].semantic != layout.channels[c].semantic || stats[e].constant || stats[e].same_as >= 0)
                continue;
            bool same = true;
            for (size_t i = 0; same && i < image.texel_count(); ++i) same = image.pixels[i * n + c] == image.pixels[i * n + e];
            if (same) {
                stats[c].same_as = static_cast<int>(e);
                break;
            }
        }
    }
    return stats;
}

Manifest inferred_manifest(const MaterialScan& scan) {
    Manifest m;
    m.name = scan.name;
    for (size_t t = 0; t < scan.textures.size(); ++t) {
        const TextureLayout& layout = scan.textures[t];
        ManifestTexture mt;
        mt.file = layout.file_name;
        if (layout.name != stem_of(layout.file_name)) mt.name = layout.name;
        const std::string label = layout.semantic_label();
        const bool rgba_color = layout.channels.size() > 1 && layout.channels.back().semantic == Semantic::opacity &&
                                is_color(layout.channels.front().semantic);
        if (label == "packed" && !rgba_color) {
            for (const auto& c : layout.channels) mt.channels.push_back(c.semantic);
        } else {
            mt.semantic = layout.channels.front().semantic;
        }
        mt.color_space = layout.color_space;
        if (layout.holds_normals()) mt.normal_convention = layout.normal_convention;
        const auto& w = scan.files[t].loss_weights;
        if (std::any_of(w.begin(), w.end(), [](float v) { return v != 1.0f; })) mt.loss_weights = w;
        m.textures.push_back(mt);
    }
    return m;
}

// The pack's normal_mode for a 3-channel normal map under `choice` (none: stored as plain channels).
NormalMode normal_mode_for(NormalModeChoice choice, const Image& image) {
    switch (choice) {
        case NormalModeChoice::xy: return NormalMode::xy;
        case NormalModeChoice::xyz: return NormalMode::xyz;
        case NormalModeChoice::stored: return NormalMode::none;
        case NormalModeChoice::automatic: break;
    }
    return xy_normal_cap_db(image.pixels, image.texel_count(), static_cast<size_t>(image.channels)) >= kXyNormalCapDb
               ? NormalMode::xy
               : NormalMode::none;
}

Result<Discovery> discover(const std::string& input, const MaterialLoadOptions& options) {
    if (options.max_mips == 0 || options.max_mips < -1)
        return Status(StatusCode::invalid_argument,
                      "max_mips must be -1 (full chain) or at least 1, got " + std::to_string(options.max_mips));
    std::error_code ec;
    const fs::file_status status = fs::status(input, ec);
    if (!fs::exists(status)) return Status(StatusCode::io_error, input + ": no such folder, manifest or image file");

    // The input's kind is what the path is: a folder, a manifest (.json) or one image file (a one-texture material).
    std::optional<Manifest> manifest;
    fs::path folder;
    std::string manifest_file;  // its name, when it lies in the material folder
    std::string single_image;   // the file's name, when the input is one image
    std::string extension = fs::path(input).extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (fs::is_directory(status)) {
        folder = fs::path(input);
    } else if (fs::is_regular_file(status) && !image_format_from_file_name(input).empty()) {
        folder = fs::path(input).parent_path();
        if (folder.empty()) folder = ".";
        single_image = fs::path(input).filename().string();
    } else if (fs::is_regular_file(status) && extension == ".json") {
        auto m = read_manifest(input);
        if (!m.ok()) return m.status();
        manifest = std::move(*m);
        const fs::path base = fs::path(input).parent_path();
        folder = manifest->folder.empty() ? base : base / manifest->folder;
        if (folder.empty()) folder = ".";
        if (fs::equivalent(fs::path(input).parent_path().empty() ? fs::path(".") : fs::path(input).parent_path(),
                           folder, ec))
            manifest_file = fs::path(input).filename().string();
        if (!fs::is_directory(folder, ec))
            return Status(StatusCode::io_error, input + ": folder '" + folder.string() + "' does not exist");
    } else {
        return Status(StatusCode::not_recognized,
                      input + ": not a material: expected a folder of maps, a manifest (.json) or an image file "
                              "(.png, .jpg, .tga, .exr, .tif, ...)");
    }

    Discovery d;
    MaterialScan& scan = d.scan;
    scan.source_folder = folder.string();
    const fs::path normal_folder = folder.lexically_normal();
    scan.name = manifest && !manifest->name.empty() ? manifest->name
                : !single_image.empty()
                    ? stem_of(single_image)
                    : (normal_folder.has_filename() ? normal_folder.filename() : normal_folder.parent_path().filename())
                          .string();
    if (scan.name.empty() || scan.name == ".") scan.name = fs::absolute(folder, ec).lexically_normal().filename().string();

    std::vector<std::string> entries;
    if (!single_image.empty()) {
        entries.push_back(single_image);  // the other files of its folder are not part of it
    } else {
        fs::directory_iterator it(folder, ec);
        if (ec) return Status(StatusCode::io_error, folder.string() + ": cannot list folder: " + ec.message());
        for (; it != fs::directory_iterator(); it.increment(ec)) {
            if (ec) return Status(StatusCode::io_error, folder.string() + ": cannot list folder: " + ec.message());
            entries.push_back(it->path().filename().string());
        }
    }
    std::sort(entries.begin(), entries.end());

    std::map<std::string, const ManifestTexture*> listed;
    if (manifest)
        for (const auto& t : manifest->textures) listed[t.file] = &t;
    std::vector<Candidate> candidates;
    for (const std::string& e : entries) {
        if (listed.count(e)) {
            const ManifestTexture& t = *listed[e];
            Candidate c{e, "manifest", t.semantic, t.channels, t.normal_convention, t.color_space, t.name, t.loss_weights};
            candidates.push_back(c);
            continue;
        }
        const bool image = !image_format_from_file_name(e).empty();
        auto ignore = [&](const std::string& reason, bool left_out_image) {
            scan.ignored_files.push_back({e, reason, left_out_image});
        };
        if (!manifest_file.empty() && e == manifest_file) {
            ignore("the manifest", false);
        } else if (e[0] == '.') {
            ignore("hidden file", false);
        } else if (fs::is_directory(folder / e, ec)) {
            ignore("a folder (sub-folders are not searched)", false);
        } else if (manifest && !manifest->guess_unlisted) {
            ignore("not listed in the manifest", image);
        } else if (!image) {
            ignore("not an image file", false);
        } else if (auto match = match_file_name(e)) {
            Candidate c;
            c.file = e;
            c.reason = "name: " + match->keyword;
            if (match->packed())
                c.channels = match->packed_channels;
            else
                c.semantic = match->semantic;
            c.convention = match->convention;
            candidates.push_back(c);
        } else if (!single_image.empty()) {
            return Status(StatusCode::not_recognized,
                          input + ": file name matches no map convention, so its map is unknown; name it after its "
                                  "map (e.g. rock_albedo.png, docs/manifest.md lists the words) or describe it in a "
                                  "manifest");
        } else {
            ignore("file name matches no map convention (list it in a manifest to use it)", true);
        }
    }
    if (manifest) {
        for (const auto& t : manifest->textures)
            if (!std::binary_search(entries.begin(), entries.end(), t.file))
                return Status(StatusCode::io_error, input + ": lists '" + t.file + "', which is not in " + folder.string());
    }
    if (candidates.empty())
        return Status(StatusCode::not_recognized,
                      folder.string() + (entries.empty() ? ": folder is empty"
                                                         : ": no texture maps recognised among " +
                                                               std::to_string(entries.size()) + " files"));

    // Two files of one whole-map semantic are ambiguous, except an OpenGL + DirectX pair of normal maps.
    std::map<Semantic, std::vector<size_t>> by_semantic;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i].semantic && *candidates[i].semantic != Semantic::other)
            by_semantic[*candidates[i].semantic].push_back(i);
    std::vector<size_t> dropped;
    for (const auto& [semantic, list] : by_semantic) {
        if (list.size() < 2) continue;
        const Candidate& a = candidates[list[0]];
        const Candidate& b = candidates[list[1]];
        if (semantic == Semantic::normal && list.size() == 2 && a.convention && b.convention &&
            *a.convention != *b.convention && a.reason != "manifest" && b.reason != "manifest") {
            const size_t dx = *a.convention == NormalConvention::directx ? list[0] : list[1];
            const size_t gl = dx == list[0] ? list[1] : list[0];
            scan.ignored_files.push_back(
                {candidates[dx].file, "DirectX copy of the OpenGL normal map " + candidates[gl].file, true});
            dropped.push_back(dx);
            continue;
        }
        return Status(StatusCode::invalid_argument, folder.string() + ": both " + a.file + " and " + b.file +
                                                        " are " + to_string(semantic) +
                                                        " maps; remove one or say which is which in a manifest");
    }
    for (size_t k = dropped.size(); k-- > 0;) candidates.erase(candidates.begin() + static_cast<long>(dropped[k]));
    std::sort(dropped.begin(), dropped.end());

    // No image is left out silently: each one is a warning, or under strict one error naming them all.
    std::string left_out;
    for (const IgnoredFile& f : scan.ignored_files) {
        if (!f.image) continue;
        left_out += (left_out.empty() ? "" : "; ") + f.file + " (" + f.reason + ")";
        scan.warnings.push_back(f.file + " is not packed: " + f.reason);
    }
    if (options.strict && !left_out.empty())
        return Status(StatusCode::invalid_argument, folder.string() + ": images left out of the pack: " + left_out);

    // Read every file; build its layout.
    std::vector<AllocationInput> inputs;
    std::vector<TextureFileInfo> infos;
    std::vector<Image> images;
    std::map<std::string, std::string> names;  // texture name -> file
    for (const Candidate& c : candidates) {
        const std::string path = (folder / c.file).string();
        auto file = read_image_file(path);
        if (!file.ok()) return file.status();
        auto semantics = channel_semantics(c, file->image.channels, input);
        if (!semantics.ok()) return semantics.status();
        AllocationInput in;
        TextureLayout& layout = in.layout;
        layout.name = c.name.empty() ? stem_of(c.file) : c.name;
        if (names.count(layout.name))
            return Status(StatusCode::invalid_argument, folder.string() + ": " + names[layout.name] + " and " + c.file +
                                                            " would both be texture '" + layout.name + "'");
        names[layout.name] = c.file;
        layout.file_name = c.file;
        layout.file_format = file->format;
        layout.sample_type = file->image.sample_type;
        layout.color_space = choose_color_space(c, *semantics, *file);
        layout.normal_convention = c.convention.value_or(NormalConvention::opengl);
        const bool normal_map = semantics->size() == 3 && std::all_of(semantics->begin(), semantics->end(),
                                                                        [](Semantic s) { return s == Semantic::normal; });
        layout.normal_mode = normal_map ? normal_mode_for(options.normal_mode, file->image) : NormalMode::none;
        for (Semantic s : *semantics) {
            ChannelSource source;
            source.semantic = s;
            layout.channels.push_back(source);
        }
        layout.source_sha256 = file->sha256;
        const auto n = static_cast<size_t>(file->image.channels);
        if (c.loss_weights.size() > 1 && c.loss_weights.size() != n)
            return Status(StatusCode::invalid_argument, input + ": " + c.file + ": loss_weight has " +
                                                            std::to_string(c.loss_weights.size()) +
                                                            " entries, the file has " + std::to_string(n) + " channels");
        in.loss_weights = c.loss_weights.size() == n ? c.loss_weights
                                                    : std::vector<float>(n, c.loss_weights.empty() ? 1.0f : c.loss_weights[0]);
        TextureFileInfo info;
        info.path = path;
        info.width = file->image.width;
        info.height = file->image.height;
        info.channels = file->image.channels;
        info.reason = c.reason;
        info.loss_weights = in.loss_weights;
        inputs.push_back(std::move(in));
        infos.push_back(info);
        images.push_back(std::move(file->image));
    }

    // One size for all maps: the largest; others are an error unless resampling was asked for.
    size_t largest = 0;
    for (size_t i = 1; i < images.size(); ++i)
        if (images[i].texel_count() > images[largest].texel_count()) largest = i;
    scan.width = images[largest].width;
    scan.height = images[largest].height;
    for (size_t i = 0; i < images.size(); ++i) {
        if (images[i].width == scan.width && images[i].height == scan.height) continue;
        const std::string sizes = inputs[i].layout.file_name + " is " + std::to_string(images[i].width) + "x" +
                                  std::to_string(images[i].height) + ", " + inputs[largest].layout.file_name + " is " +
                                  std::to_string(scan.width) + "x" + std::to_string(scan.height);
        if (!options.resample_mismatched)
            return Status(StatusCode::invalid_argument,
                          folder.string() + ": maps differ in size (" + sizes + "); resize them or ask for resampling");
        images[i] = resample(images[i], scan.width, scan.height);
        scan.warnings.push_back(sizes + ": resampled (bilinear) to " + std::to_string(scan.width) + "x" +
                                std::to_string(scan.height) + "; decoded files are written at that size");
    }
    for (size_t i = 0; i < images.size(); ++i) inputs[i].stats = measure(images[i], inputs[i].layout);

    // A semantic held by several files (an ARM map next to its own roughness map, a gloss map next to a roughness
    // map: glossiness is 1 - roughness) is kept in each, costing a pack channel each, with a warning naming them.
    std::map<Semantic, std::vector<std::string>> holders;
    for (const auto& in : inputs) {
        std::vector<Semantic> seen;
        for (size_t i = 0; i < in.layout.channels.size(); ++i) {
            const Semantic s = in.layout.channels[i].semantic;
            if (s == Semantic::other || in.stats[i].constant || std::find(seen.begin(), seen.end(), s) != seen.end())
                continue;
            seen.push_back(s);
            const bool gloss = s == Semantic::glossiness;
            holders[gloss ? Semantic::roughness : s].push_back(in.layout.file_name +
                                                               (gloss ? " (as glossiness, 1 - roughness)" : ""));
        }
    }
    for (const auto& [semantic, files] : holders) {
        if (files.size() < 2) continue;
        std::string list = files[0];
        for (size_t f = 1; f < files.size(); ++f) list += (f + 1 < files.size() ? ", " : " and ") + files[f];
        scan.warnings.push_back(std::string(to_string(semantic)) + " is in " + list +
                                "; each is kept and costs its own pack channels");
    }

    // Order textures by semantic, then file name, and allocate.
    std::vector<size_t> order(inputs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return priority(inputs[a].layout.channels.front().semantic) < priority(inputs[b].layout.channels.front().semantic);
    });
    std::vector<AllocationInput> sorted;
    for (size_t i : order) {
        sorted.push_back(std::move(inputs[i]));
        scan.files.push_back(infos[i]);
        d.images.push_back(std::move(images[i]));
    }
    auto channels = allocate_channels(sorted, options.gloss_to_roughness);
    if (!channels.ok()) return channels.status().with_context(folder.string());
    scan.channels = std::move(*channels);
    for (auto& in : sorted) scan.textures.push_back(std::move(in.layout));

    const int full = static_cast<int>(std::floor(std::log2(std::max(scan.width, scan.height)))) + 1;
    scan.mip_count = options.max_mips < 0 ? full : std::min(options.max_mips, full);
    scan.manifest = inferred_manifest(scan);
    return d;
}

// spec 8.7 and 8.9 in reverse: a texture's channel value as a normalised pack-channel value.
float to_pack_value(float v, const TextureLayout& layout, const ChannelSource& source, const PackChannel& channel) {
    const float value = layout.value_encoding == ValueEncoding::hlg ? hlg_encode(v / layout.peak)
                        : source.invert                              ? 1.0f - v
                                                                     : v;
    return (value - channel.lo) / (channel.hi - channel.lo);
}

}  // namespace

Result<MaterialScan> scan_material(const std::string& folder_or_manifest, const MaterialLoadOptions& options) {
    auto d = discover(folder_or_manifest, options);
    if (!d.ok()) return d.status();
    return std::move(d->scan);
}

Result<Material> load_material(const std::string& folder_or_manifest, const MaterialLoadOptions& options) {
    auto d = discover(folder_or_manifest, options);
    if (!d.ok()) return d.status();
    MaterialScan& scan = d->scan;
    auto m = material_from_images(scan.name, scan.source_folder, std::move(scan.textures), std::move(scan.channels),
                                  scan.mip_count, std::move(d->images));
    if (!m.ok()) return m.status();
    m->warnings = std::move(scan.warnings);
    m->ignored_files = std::move(scan.ignored_files);
    for (const TextureFileInfo& file : scan.files) {
        if (file.width != scan.width || file.height != scan.height) {
            m->source_paths.clear();
            break;
        }
        m->source_paths.push_back(file.path);
    }
    return m;
}

Result<Material> material_from_images(std::string name, std::string source_folder, std::vector<TextureLayout> textures,
                                      std::vector<PackChannel> channels, int mip_count, std::vector<Image> images) {
    if (images.empty() || images.size() != textures.size() || channels.empty())
        return Status(StatusCode::invalid_argument, "material_from_images: need one image per texture and channels");
    Material m;
    m.name = std::move(name);
    m.source_folder = std::move(source_folder);
    m.width = images.front().width;
    m.height = images.front().height;
    m.mip_count = mip_count;
    m.channels = std::move(channels);
    for (size_t t = 0; t < textures.size(); ++t) {
        if (images[t].width != m.width || images[t].height != m.height ||
            static_cast<size_t>(images[t].channels) != textures[t].channels.size())
            return Status(StatusCode::invalid_argument, textures[t].file_name + ": image size or channel count does "
                                                        "not match the material's layout");
        for (const ChannelSource& source : textures[t].channels)
            if (source.kind == ChannelSource::Kind::pack &&
                (source.pack_channel < 0 || static_cast<size_t>(source.pack_channel) >= m.channels.size()))
                return Status(StatusCode::invalid_argument,
                              textures[t].file_name + ": channel mapped to a pack channel that does not exist");
    }
    // A pack channel's colour space (and its semantic, where not yet known) come from the first texture channel
    // that uses it, by the allocation's rule.
    std::vector<bool> described(m.channels.size(), false);
    for (const TextureLayout& layout : textures)
        for (const ChannelSource& source : layout.channels) {
            if (source.kind != ChannelSource::Kind::pack || described[static_cast<size_t>(source.pack_channel)]) continue;
            PackChannel& p = m.channels[static_cast<size_t>(source.pack_channel)];
            if (p.semantic == Semantic::other) p.semantic = source.semantic;
            p.color_space = is_color(source.semantic) ? layout.color_space : ColorSpace::linear;
            described[static_cast<size_t>(source.pack_channel)] = true;
        }

    const size_t texels = static_cast<size_t>(m.width) * static_cast<size_t>(m.height);
    std::vector<std::vector<float>> planes(m.channels.size());
    std::vector<bool> filled(m.channels.size(), false);
    // Normal maps are filtered as vectors: their X, Y, Z planes in [-1, 1] (Y in OpenGL convention).
    struct NormalPlanes {
        const TextureLayout* layout;
        std::vector<float> x, y, z;
    };
    std::vector<NormalPlanes> normals;
    for (size_t t = 0; t < textures.size(); ++t) {
        const TextureLayout& layout = textures[t];
        const Image& image = images[t];
        const auto n = static_cast<size_t>(image.channels);
        for (size_t c = 0; c < n; ++c) {
            const ChannelSource& source = layout.channels[c];
            if (source.kind != ChannelSource::Kind::pack || filled[static_cast<size_t>(source.pack_channel)]) continue;
            const PackChannel& channel = m.channels[static_cast<size_t>(source.pack_channel)];
            std::vector<float>& plane = planes[static_cast<size_t>(source.pack_channel)];
            plane.resize(texels);
            for (size_t i = 0; i < texels; ++i) plane[i] = to_pack_value(image.pixels[i * n + c], layout, source, channel);
            filled[static_cast<size_t>(source.pack_channel)] = true;
        }
        if (layout.normal_mode != NormalMode::none) {
            NormalPlanes np{&layout, std::vector<float>(texels), std::vector<float>(texels), std::vector<float>(texels)};
            const bool flip = layout.normal_convention == NormalConvention::directx;
            for (size_t i = 0; i < texels; ++i) {
                np.x[i] = 2 * image.pixels[i * 3] - 1;
                np.y[i] = 2 * (flip ? 1 - image.pixels[i * 3 + 1] : image.pixels[i * 3 + 1]) - 1;
                np.z[i] = 2 * image.pixels[i * 3 + 2] - 1;
            }
            normals.push_back(std::move(np));
        }
    }
    images.clear();

    std::vector<bool> is_normal(m.channels.size(), false);
    for (const auto& np : normals)
        for (const auto& c : np.layout->channels)
            if (c.kind == ChannelSource::Kind::pack) is_normal[static_cast<size_t>(c.pack_channel)] = true;
    std::vector<bool> is_hlg(m.channels.size(), false);
    for (const TextureLayout& layout : textures)
        for (const ChannelSource& c : layout.channels)
            if (c.kind == ChannelSource::Kind::pack && layout.value_encoding == ValueEncoding::hlg)
                is_hlg[static_cast<size_t>(c.pack_channel)] = true;
    m.mips.push_back(std::move(planes));
    for (int level = 1; level < m.mip_count; ++level) {
        const int w = std::max(1, m.width >> (level - 1)), h = std::max(1, m.height >> (level - 1));
        const auto& prev = m.mips.back();
        std::vector<std::vector<float>> next(m.channels.size());
        for (size_t c = 0; c < m.channels.size(); ++c) {
            if (is_normal[c]) continue;
            next[c] = is_hlg[c]                                      ? downsample_hlg(prev[c], w, h)
                      : m.channels[c].color_space == ColorSpace::srgb ? downsample_srgb(prev[c], w, h)
                                                                      : downsample_box(prev[c], w, h);
        }
        for (auto& np : normals) {
            downsample_normals(&np.x, &np.y, &np.z, w, h);
            const std::vector<float>* vectors[] = {&np.x, &np.y, &np.z};
            for (size_t k = 0; k < 3; ++k) {
                const ChannelSource& source = np.layout->channels[k];
                if (source.kind != ChannelSource::Kind::pack) continue;
                std::vector<float>& plane = next[static_cast<size_t>(source.pack_channel)];
                plane.resize(vectors[k]->size());
                for (size_t i = 0; i < plane.size(); ++i) plane[i] = (*vectors[k])[i] * 0.5f + 0.5f;
            }
        }
        m.mips.push_back(std::move(next));
    }
    m.textures = std::move(textures);
    return m;
}

std::string texture_output_name(const TextureLayout& layout, int mip, const std::string& suffix,
                                const std::string& format_override) {
    const size_t dot = layout.file_name.rfind('.');
    std::string extension = dot == std::string::npos ? "" : layout.file_name.substr(dot);
    if (!format_override.empty()) {
        static const std::pair<const char*, const char*> kExtensions[] = {
            {"png", ".png"}, {"jpeg", ".jpg"}, {"jpg", ".jpg"}, {"tga", ".tga"},
            {"exr", ".exr"}, {"tiff", ".tif"}, {"tif", ".tif"}};
        extension = "." + format_override;
        for (const auto& [format, ext] : kExtensions)
            if (format_override == format) extension = ext;
    }
    return stem_of(layout.file_name) + suffix + (mip > 0 ? "_mip" + std::to_string(mip) : "") + extension;
}

Result<WrittenTexture> write_texture(const std::string& out_dir, const TextureLayout& layout, const Image& decoded,
                                     int mip, const std::string& suffix, const std::string& format_override,
                                     bool overwrite) {
    auto writer = TextureFileWriter::open(out_dir, layout, decoded.width, decoded.height, mip, suffix, format_override,
                                          overwrite);
    if (!writer.ok()) return writer.status();
    NMC_RETURN_IF_ERROR((*writer)->write_rows(decoded));
    return (*writer)->finish();
}

Result<std::unique_ptr<TextureFileWriter>> TextureFileWriter::open(const std::string& out_dir,
                                                                   const TextureLayout& layout, int width, int height,
                                                                   int mip, const std::string& suffix,
                                                                   const std::string& format_override, bool overwrite) {
    const std::string name = texture_output_name(layout, mip, suffix, format_override);
    const std::string path = (fs::path(out_dir) / name).string();
    if (mip < 0) return Status(StatusCode::invalid_argument, path + ": mip must be >= 0, got " + std::to_string(mip));
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || stem_of(name).empty())
        return Status(StatusCode::invalid_argument, "'" + name + "': not a plain file name");
    const std::string format = format_override.empty() ? layout.file_format : format_override;
    WrittenTexture written;
    written.path = path;
    written.sample_type = stored_sample_type(layout.sample_type, format);
    const bool has_color = std::any_of(layout.channels.begin(), layout.channels.end(),
                                       [](const ChannelSource& c) { return is_color(c.semantic); });
    written.converted_to_linear = layout.color_space == ColorSpace::srgb && has_color && is_float(written.sample_type);
    // A colour map stored (or now written) linear says so; data maps carry no tag, as their sources usually do not.
    std::optional<ColorSpace> tag;
    if (layout.color_space == ColorSpace::srgb)
        tag = written.converted_to_linear ? ColorSpace::linear : ColorSpace::srgb;
    if (layout.color_space == ColorSpace::linear && has_color) tag = ColorSpace::linear;
    auto file = ImageFileWriter::open(path, width, height, static_cast<int>(layout.channels.size()), layout.sample_type,
                                      format, overwrite, tag);
    if (!file.ok()) return file.status();
    return std::unique_ptr<TextureFileWriter>(
        new TextureFileWriter(layout, std::move(written), std::move(file).value()));
}

Status TextureFileWriter::write_rows(Image band) {
    if (band.channels != static_cast<int>(layout_.channels.size()))
        return Status(StatusCode::invalid_argument,
                      written_.path + ": decoded image has " + std::to_string(band.channels) + " channels, texture '" +
                          layout_.name + "' has " + std::to_string(layout_.channels.size()));
    band.sample_type = layout_.sample_type;
    // spec 8.10: float files hold linear light, integer files clamp to [0, 1]. The samples clamped are all of them
    // in an integer file, the converted colour channels (sRGB decoding is defined on [0, 1]) in a float one; they
    // are counted so the caller can say what was lost.
    const auto n = static_cast<size_t>(band.channels);
    for (size_t c = 0; c < n; ++c) {
        const bool convert = written_.converted_to_linear && is_color(layout_.channels[c].semantic);
        if (is_float(written_.sample_type) && !convert) continue;
        for (size_t i = c; i < band.pixels.size(); i += n) {
            const float v = band.pixels[i];
            if (written_.checked_samples == 0) written_.min_value = written_.max_value = v;
            written_.min_value = std::min(written_.min_value, v);
            written_.max_value = std::max(written_.max_value, v);
            ++written_.checked_samples;
            if (v < 0.0f || v > 1.0f) ++written_.clipped_samples;
            if (convert) band.pixels[i] = srgb_to_linear(v);
        }
    }
    return file_->write_rows(band);
}

Result<WrittenTexture> TextureFileWriter::finish() {
    NMC_RETURN_IF_ERROR(file_->finish());
    return written_;
}

const char* to_string(NormalModeChoice c) {
    switch (c) {
        case NormalModeChoice::automatic: return "auto";
        case NormalModeChoice::xy: return "xy";
        case NormalModeChoice::xyz: return "xyz";
        case NormalModeChoice::stored: return "stored";
    }
    return "unknown";
}

std::optional<NormalModeChoice> normal_mode_choice_from_string(const std::string& s) {
    for (NormalModeChoice c :
         {NormalModeChoice::automatic, NormalModeChoice::xy, NormalModeChoice::xyz, NormalModeChoice::stored})
        if (s == to_string(c)) return c;
    return std::nullopt;
}

double xy_normal_cap_db(const std::vector<float>& pixels, size_t texels, size_t channels) {
    // spec 8.10's 8-bit code of a [0, 1] value
    const auto code = [](double v) { return std::floor(std::min(std::max(v, 0.0), 1.0) * 255.0 + 0.5); };
    double sse = 0;
    for (size_t i = 0; i < texels; ++i) {
        const double x = 2.0 * pixels[i * channels] - 1.0;
        const double y = 2.0 * pixels[i * channels + 1] - 1.0;
        const double z = std::sqrt(std::max((1.0 - x * x) - y * y, 0.0));  // spec 8.8, before renormalising
        const double d = code(z * 0.5 + 0.5) - code(pixels[i * channels + 2]);
        sse += d * d;
    }
    // X and Y exact: the map's error is Z's alone, shared by its three channels.
    const double mse = sse / (255.0 * 255.0) / static_cast<double>(std::max<size_t>(texels, 1)) / 3.0;
    return mse > 0 ? -10.0 * std::log10(mse) : 99.0;
}

}  // namespace nmc
