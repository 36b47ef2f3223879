// read_pack and write_pack: the container, META, LATN and WGHT put together (spec 3 to 7, and the checks
// of spec 10). The writer runs the reader's rules on the Pack first, so it never writes a pack a reader rejects.
#include "format/pack.h"

#include "core/file_io.h"
#include "format/container.h"
#include "format/metadata.h"
#include "format/payload.h"

namespace nmc {
namespace {

const LoadedSection* find_section(const std::vector<LoadedSection>& sections, const char* fourcc) {
    for (const LoadedSection& s : sections)
        if (s.entry.fourcc == fourcc) return s.usable ? &s : nullptr;
    return nullptr;
}

// spec 5.4, 5.6 and 11: a 2.x or 3.x pack names its arithmetic; a 1.x pack decodes with float32 (the key, if there,
// says so); only a 3.x pack encodes texture values.
Status check_arithmetic_version(const Metadata& meta, uint16_t version_major) {
    const Arithmetic arithmetic = meta.pack.network.arithmetic;
    if (version_major < kFormatVersionMajorValueEncoding) {
        for (size_t i = 0; i < meta.pack.textures.size(); ++i)
            if (meta.pack.textures[i].value_encoding != ValueEncoding::none)
                return Status(StatusCode::corrupt, "section 'META': 'textures[" + std::to_string(i) +
                                                       "].value_encoding': '" +
                                                       to_string(meta.pack.textures[i].value_encoding) +
                                                       "' in a format " + std::to_string(version_major) +
                                                       ".x pack (a format 3.0 feature)");
    }
    if (version_major != kFormatVersionMajorFloat32 && !meta.arithmetic_given) {
        return Status(StatusCode::corrupt, "section 'META': 'network.arithmetic': missing, required in a format " +
                                               std::to_string(version_major) + ".x pack");
    }
    if (version_major == kFormatVersionMajorFloat32 && arithmetic != Arithmetic::float32) {
        return Status(StatusCode::corrupt, std::string("section 'META': 'network.arithmetic': a format 1.x pack "
                                                       "decodes with 'float32', got '") +
                                               to_string(arithmetic) + "' (a format 2.0 feature)");
    }
    return Status::success();
}

// The Pack from the container's sections (spec 5, 6, 7), recording problems.
void read_sections(const std::vector<LoadedSection>& sections, uint16_t version_major, ProblemList& problems,
                   Pack& pack) {
    const LoadedSection* meta_section = find_section(sections, "META");
    if (!meta_section) return;  // its problem is already recorded
    Result<Metadata> meta = metadata_from_json(meta_section->raw, meta_section->entry.raw_size);
    if (!meta.ok()) {
        problems.add(meta.status());
        return;
    }
    Status rules = check_metadata(meta->pack, meta->layer_has_scale);
    if (rules.ok()) rules = check_arithmetic_version(*meta, version_major);
    if (!rules.ok()) {
        problems.add(rules);
        return;
    }
    pack = std::move(meta->pack);

    const LoadedSection* latents = find_section(sections, "LATN");
    if (latents) {
        Status status = unpack_latents(latents->raw, latents->entry.raw_size, pack.latents);
        if (!status.ok() && problems.add(status)) return;
    }
    const LoadedSection* weights = find_section(sections, "WGHT");
    if (weights) {
        Status status = unpack_weights(weights->raw, weights->entry.raw_size, meta->layer_has_scale, pack.network);
        if (!status.ok()) problems.add(status);
    }
}

}  // namespace

const char* to_string(AddressMode m) {
    return m == AddressMode::wrap ? "wrap" : "clamp";
}

const char* to_string(Arithmetic a) {
    return a == Arithmetic::float32 ? "float32" : "binary16";
}

const char* to_string(Activation a) {
    switch (a) {
        case Activation::hgelu_clamped:
            return "hgelu_clamped";
    }
    return "unknown";
}

const char* to_string(WeightType t) {
    return t == WeightType::e4m3 ? "e4m3" : "int8";
}

Result<Pack> read_pack(const uint8_t* data, size_t size, ContainerInfo* container, const ReadOptions& options) {
    ProblemList problems(options.problems != nullptr);
    ContainerInfo info;
    const std::vector<LoadedSection> sections = read_container(data, size, info, problems);
    if (container) *container = info;
    Pack pack;
    if (!problems.must_stop()) read_sections(sections, info.version_major, problems, pack);
    if (problems.empty()) return pack;
    if (options.problems)
        options.problems->insert(options.problems->end(), problems.all().begin(), problems.all().end());
    return problems.first();
}

Result<Pack> read_pack_file(const std::string& path, ContainerInfo* container, const ReadOptions& options) {
    // A pack is at most 4 GiB (spec 9); read_file refuses larger files before allocating.
    Result<std::vector<uint8_t>> bytes = read_file(path, uint64_t{4} << 30);
    if (!bytes.ok()) return bytes.status();
    std::vector<Status> found;
    ReadOptions with_context = options;
    if (options.problems) with_context.problems = &found;
    Result<Pack> pack = read_pack(bytes->data(), bytes->size(), container, with_context);
    for (const Status& s : found) options.problems->push_back(s.with_context(path));
    if (!pack.ok()) return pack.status().with_context(path);
    return pack;
}

Status check_pack(const Pack& pack) {
    const std::vector<bool> has_scale = layer_has_scale(pack.network);
    Status rules = check_metadata(pack, has_scale);
    if (rules.ok()) rules = check_latent_codes(pack.latents);
    if (rules.ok()) rules = check_layer_sizes(pack.network);
    for (size_t l = 0; rules.ok() && l < pack.network.layers.size(); ++l)
        rules = check_layer_values(pack.network.layers[l], l);
    if (!rules.ok()) return Status(StatusCode::invalid_argument, rules.message());
    return Status::success();
}

Result<std::vector<uint8_t>> write_pack(const Pack& pack, const WriteOptions& options) {
    const Status rules = check_pack(pack);
    if (!rules.ok()) return Status(StatusCode::invalid_argument, "cannot write pack: " + rules.message());

    Result<std::string> json = metadata_to_json(pack);
    if (!json.ok()) return json.status();
    // The reader's checks of the text itself (spec 9: its size, members per object, nesting), which the rules on the
    // Pack do not see.
    const Result<Metadata> reread = metadata_from_json(reinterpret_cast<const uint8_t*>(json->data()), json->size());
    if (!reread.ok()) return Status(reread.status().code(), "cannot write pack: " + reread.status().message());
    std::vector<SectionPayload> sections(3);
    sections[0] = {"META", true, std::vector<uint8_t>(json->begin(), json->end())};
    sections[1] = {"LATN", true, pack_latents(pack.latents)};
    sections[2] = {"WGHT", true, pack_weights(pack.network)};
    return write_container(sections, options.compress, options.zstd_level, options.cache, pack.format_version_major());
}

Status write_pack_file(const std::string& path, const Pack& pack, const WriteOptions& options, bool overwrite) {
    Result<std::vector<uint8_t>> bytes = write_pack(pack, options);
    if (!bytes.ok()) return bytes.status().with_context(path);
    return write_file_atomically(path, bytes->data(), bytes->size(), overwrite ? Overwrite::allow : Overwrite::refuse);
}

}  // namespace nmc
