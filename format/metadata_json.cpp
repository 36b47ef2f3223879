// META <-> Pack (spec 5): JSON serialisation with a fixed key order, and a parser that checks presence and
// type of every key and names the key path in its messages.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

#include "format/metadata.h"

namespace nmc {
namespace {

using Json = nlohmann::ordered_json;

Status meta_error(const std::string& path, const std::string& what) {
    return Status(StatusCode::corrupt, "section 'META': '" + path + "': " + what);
}

std::string index_path(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// A double as float32 without undefined behaviour: magnitudes beyond float's range become infinities,
// which the rules then reject.
float to_float(double d) {
    if (d > static_cast<double>(FLT_MAX)) return INFINITY;
    if (d < -static_cast<double>(FLT_MAX)) return -INFINITY;
    return static_cast<float>(d);
}

// One JSON object and its key path, with typed getters that report missing keys and wrong types.
class ObjectReader {
public:
    ObjectReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

    std::string path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
    const Json* find(const char* key) const {
        const auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }

    // Each getter: Status on a missing required key or a wrong type; an optional absent key leaves `out`.
    Status string(const char* key, std::string& out, bool required = true) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(get(key, required, v));
        if (!v) return Status::success();
        if (!v->is_string()) return wrong_type(key, "a string", *v);
        out = v->get<std::string>();
        return Status::success();
    }
    Status boolean(const char* key, bool& out, bool required = true) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(get(key, required, v));
        if (!v) return Status::success();
        if (!v->is_boolean()) return wrong_type(key, "a boolean", *v);
        out = v->get<bool>();
        return Status::success();
    }
    Status int64(const char* key, int64_t& out, bool required = true) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(get(key, required, v));
        if (!v) return Status::success();
        if (!v->is_number_integer()) return wrong_type(key, "an integer", *v);
        out = v->get<int64_t>();
        return Status::success();
    }
    Status integer(const char* key, int& out) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(get(key, true, v));
        if (!v->is_number_integer()) return wrong_type(key, "an integer", *v);
        const bool too_big = v->is_number_unsigned() ? v->get<uint64_t>() > static_cast<uint64_t>(INT_MAX)
                                                     : v->get<int64_t>() > INT_MAX || v->get<int64_t>() < INT_MIN;
        if (too_big)
            return Status(StatusCode::limit_exceeded,
                          "section 'META': '" + path(key) + "': " + v->dump() + " is out of range");
        out = static_cast<int>(v->get<int64_t>());
        return Status::success();
    }
    Status number(const char* key, double& out, bool required = true) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(get(key, required, v));
        if (!v) return Status::success();
        if (!v->is_number()) return wrong_type(key, "a number", *v);
        out = v->get<double>();
        return Status::success();
    }
    Status array(const char* key, const Json*& out, bool required = true) const {
        NMC_RETURN_IF_ERROR(get(key, required, out));
        if (out && !out->is_array()) return wrong_type(key, "an array", *out);
        return Status::success();
    }
    Status object(const char* key, const Json*& out, bool required = true) const {
        NMC_RETURN_IF_ERROR(get(key, required, out));
        if (out && !out->is_object()) return wrong_type(key, "an object", *out);
        return Status::success();
    }
    // spec 5.3, 5.5: [lo, hi], two numbers.
    Status range(const char* key, float& lo, float& hi) const {
        const Json* v = nullptr;
        NMC_RETURN_IF_ERROR(array(key, v));
        if (v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number())
            return meta_error(path(key), "expected [lo, hi], two numbers, got " + short_dump(*v));
        lo = to_float((*v)[0].get<double>());
        hi = to_float((*v)[1].get<double>());
        return Status::success();
    }
    template <typename E>
    Status enumeration(const char* key, E& out, std::optional<E> (*parse)(const std::string&),
                       const char* allowed) const {
        std::string s;
        NMC_RETURN_IF_ERROR(string(key, s));
        const std::optional<E> e = parse(s);
        if (!e) return meta_error(path(key), std::string("expected ") + allowed + ", got '" + printable(s) + "'");
        out = *e;
        return Status::success();
    }

private:
    static std::string short_dump(const Json& v) {
        std::string s = v.dump(-1, ' ', true, Json::error_handler_t::replace);
        return s.size() > 40 ? s.substr(0, 40) + "..." : s;
    }
    Status get(const char* key, bool required, const Json*& out) const {
        out = find(key);
        if (!out && required) return meta_error(path(key), "missing required key");
        return Status::success();
    }
    Status wrong_type(const char* key, const char* expected, const Json& v) const {
        return meta_error(path(key), std::string("expected ") + expected + ", got " + v.type_name());
    }

    const Json& object_;
    std::string path_;
};

// spec 9: the shape of the META text, checked in one linear pass before it is parsed into a tree: at most
// kMaxMetadataMembers members per object and kMaxMetadataDepth levels of objects and arrays. ordered_json finds a key
// by a linear search, so parsing an object of n members took n^2 / 2 string comparisons (90,000 keys in `encoder`, 850
// KB: 6 s), and copying a deep nesting overflowed the stack. Records the first problem (limit_exceeded, or corrupt for
// text that is not JSON) and stops there. A handler of nlohmann's SAX interface.
class MetadataShape {
public:
    const Status& status() const { return status_; }

    bool null() { return scalar(); }
    bool boolean(bool) { return scalar(); }
    bool number_integer(Json::number_integer_t) { return scalar(); }
    bool number_unsigned(Json::number_unsigned_t) { return scalar(); }
    bool number_float(Json::number_float_t, const std::string&) { return scalar(); }
    bool string(std::string&) { return scalar(); }
    bool binary(Json::binary_t&) { return scalar(); }
    bool start_object(size_t) { return open(false); }
    bool start_array(size_t) { return open(true); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(std::string& key) {
        Level& object = levels_.back();
        if (++object.count > kMaxMetadataMembers) {
            levels_.pop_back();  // the message names the object, not its member
            return fail(" has more than " + std::to_string(kMaxMetadataMembers) + " members");
        }
        object.key = key;
        return true;
    }
    bool parse_error(size_t, const std::string&, const Json::exception& error) {
        status_ = Status(StatusCode::corrupt, std::string("section 'META': not valid JSON: ") + error.what());
        return false;
    }

private:
    struct Level {
        bool array = false;
        size_t count = 0;  // elements, or members
        std::string key;   // an object's member being read
    };

    // A value starts: an array counts it as its next element.
    void count_element() {
        if (!levels_.empty() && levels_.back().array) ++levels_.back().count;
    }
    bool scalar() {
        count_element();
        return true;
    }
    bool open(bool array) {
        count_element();
        if (levels_.size() == kMaxMetadataDepth)
            return fail(std::string(" is nested deeper than ") + std::to_string(kMaxMetadataDepth) + " levels");
        levels_.push_back({array, 0, {}});
        return true;
    }
    bool close() {
        levels_.pop_back();
        return true;
    }
    // The key path of the value the levels lead to, as the reader's other messages name it: "quality.textures",
    // "channels[0].range".
    std::string path() const {
        std::string p;
        for (const Level& l : levels_) p += l.array ? index_path("", l.count - 1) : (p.empty() ? "" : ".") + l.key;
        return p;
    }
    bool fail(const std::string& what) {
        const std::string p = path();
        status_ = Status(StatusCode::limit_exceeded,
                         "section 'META': " + (p.empty() ? "the top-level object" : "'" + printable(p) + "'") + what +
                             " (the limit of spec 9)");
        return false;
    }

    std::vector<Level> levels_;
    Status status_;
};

Status require_object(const Json& v, const std::string& path) {
    if (!v.is_object()) return meta_error(path, std::string("expected an object, got ") + v.type_name());
    return Status::success();
}

std::optional<AddressMode> address_mode_from_string(const std::string& s) {
    if (s == "wrap") return AddressMode::wrap;
    if (s == "clamp") return AddressMode::clamp;
    return std::nullopt;
}

std::optional<Arithmetic> arithmetic_from_string(const std::string& s) {
    if (s == "float32") return Arithmetic::float32;
    if (s == "binary16") return Arithmetic::binary16;
    return std::nullopt;
}

std::optional<Activation> activation_from_string(const std::string& s) {
    if (s == to_string(Activation::hgelu_clamped)) return Activation::hgelu_clamped;
    return std::nullopt;
}

std::optional<WeightType> weight_type_from_string(const std::string& s) {
    if (s == "e4m3") return WeightType::e4m3;
    if (s == "int8") return WeightType::int8;
    return std::nullopt;
}

std::optional<ChannelSource::Kind> source_kind_from_string(const std::string& s) {
    if (s == "pack") return ChannelSource::Kind::pack;
    if (s == "constant") return ChannelSource::Kind::constant;
    if (s == "normal_z") return ChannelSource::Kind::normal_z;
    return std::nullopt;
}

const char* to_string(ChannelSource::Kind k) {
    switch (k) {
        case ChannelSource::Kind::pack:
            return "pack";
        case ChannelSource::Kind::constant:
            return "constant";
        case ChannelSource::Kind::normal_z:
            return "normal_z";
    }
    return "unknown";
}

Status parse_doubles(const Json& array, const std::string& path, std::vector<double>& out) {
    for (size_t i = 0; i < array.size(); ++i) {
        if (!array[i].is_number())
            return meta_error(index_path(path, i), std::string("expected a number, got ") + array[i].type_name());
        out.push_back(array[i].get<double>());
    }
    return Status::success();
}

// spec 5.2
Status parse_material(const ObjectReader& top, MaterialInfo& m) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.object("material", v));
    const ObjectReader o(*v, "material");
    NMC_RETURN_IF_ERROR(o.string("name", m.name));
    NMC_RETURN_IF_ERROR(o.integer("width", m.width));
    NMC_RETURN_IF_ERROR(o.integer("height", m.height));
    NMC_RETURN_IF_ERROR(o.integer("mip_count", m.mip_count));
    return o.enumeration("address_mode", m.address_mode, address_mode_from_string, "'wrap' or 'clamp'");
}

// spec 5.3
Status parse_channels(const ObjectReader& top, std::vector<ChannelInfo>& channels) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.array("channels", v));
    for (size_t i = 0; i < v->size(); ++i) {
        const std::string path = index_path("channels", i);
        NMC_RETURN_IF_ERROR(require_object((*v)[i], path));
        const ObjectReader o((*v)[i], path);
        ChannelInfo c;
        NMC_RETURN_IF_ERROR(o.string("name", c.name, false));
        NMC_RETURN_IF_ERROR(o.range("range", c.lo, c.hi));
        channels.push_back(std::move(c));
    }
    return Status::success();
}

// spec 5.4: one channel source object.
Status parse_channel_source(const Json& v, const std::string& path, ChannelSource& c) {
    NMC_RETURN_IF_ERROR(require_object(v, path));
    const ObjectReader o(v, path);
    NMC_RETURN_IF_ERROR(o.enumeration("semantic", c.semantic, semantic_from_string,
                                      "a channel semantic ('albedo', 'normal', 'roughness', ...)"));
    NMC_RETURN_IF_ERROR(o.enumeration("source", c.kind, source_kind_from_string, "'pack', 'constant' or 'normal_z'"));
    if (c.kind == ChannelSource::Kind::pack) {
        NMC_RETURN_IF_ERROR(o.integer("pack_channel", c.pack_channel));
        NMC_RETURN_IF_ERROR(o.boolean("invert", c.invert, false));
    } else if (c.kind == ChannelSource::Kind::constant) {
        double value = 0;
        NMC_RETURN_IF_ERROR(o.number("value", value));
        c.constant_value = to_float(value);
    }
    return Status::success();
}

// spec 5.4
Status parse_textures(const ObjectReader& top, std::vector<TextureLayout>& textures) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.array("textures", v));
    for (size_t i = 0; i < v->size(); ++i) {
        const std::string path = index_path("textures", i);
        NMC_RETURN_IF_ERROR(require_object((*v)[i], path));
        const ObjectReader o((*v)[i], path);
        TextureLayout t;
        NMC_RETURN_IF_ERROR(o.string("name", t.name));
        NMC_RETURN_IF_ERROR(o.string("file_name", t.file_name));
        NMC_RETURN_IF_ERROR(o.string("file_format", t.file_format));
        NMC_RETURN_IF_ERROR(o.enumeration("sample_type", t.sample_type, sample_type_from_string,
                                          "'uint8', 'uint16', 'float16' or 'float32'"));
        NMC_RETURN_IF_ERROR(o.enumeration("color_space", t.color_space, color_space_from_string, "'srgb' or 'linear'"));
        NMC_RETURN_IF_ERROR(
            o.enumeration("normal_mode", t.normal_mode, normal_mode_from_string, "'none', 'xy' or 'xyz'"));
        // value_encoding is optional ('none'); peak is required with 'hlg' and ignored otherwise.
        if (o.find("value_encoding"))
            NMC_RETURN_IF_ERROR(o.enumeration("value_encoding", t.value_encoding, value_encoding_from_string,
                                              "'none' or 'hlg'"));
        if (t.value_encoding == ValueEncoding::hlg) {
            double peak = 0;
            NMC_RETURN_IF_ERROR(o.number("peak", peak));
            t.peak = to_float(peak);
        }
        // Informational keys: their type is checked, an unexpected value is not an error.
        std::string convention;
        NMC_RETURN_IF_ERROR(o.string("normal_convention", convention));
        t.normal_convention = normal_convention_from_string(convention).value_or(NormalConvention::opengl);
        std::string semantic;
        NMC_RETURN_IF_ERROR(o.string("semantic", semantic));
        NMC_RETURN_IF_ERROR(o.string("source_sha256", t.source_sha256));
        const Json* channels = nullptr;
        NMC_RETURN_IF_ERROR(o.array("channels", channels));
        for (size_t c = 0; c < channels->size(); ++c) {
            ChannelSource source;
            NMC_RETURN_IF_ERROR(parse_channel_source((*channels)[c], index_path(o.path("channels"), c), source));
            t.channels.push_back(source);
        }
        textures.push_back(std::move(t));
    }
    return Status::success();
}

// spec 5.5
Status parse_latents(const ObjectReader& top, LatentGrids& latents) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.object("latents", v));
    const ObjectReader o(*v, "latents");
    NMC_RETURN_IF_ERROR(o.integer("feature_count", latents.feature_count));
    NMC_RETURN_IF_ERROR(o.integer("grid_scale", latents.grid_scale));
    const Json* levels = nullptr;
    NMC_RETURN_IF_ERROR(o.array("levels", levels));
    for (size_t k = 0; k < levels->size(); ++k) {
        const std::string path = index_path("latents.levels", k);
        NMC_RETURN_IF_ERROR(require_object((*levels)[k], path));
        const ObjectReader l((*levels)[k], path);
        LatentLevel level;
        NMC_RETURN_IF_ERROR(l.integer("width", level.width));
        NMC_RETURN_IF_ERROR(l.integer("height", level.height));
        NMC_RETURN_IF_ERROR(l.integer("bits", level.bits));
        NMC_RETURN_IF_ERROR(l.range("range", level.lo, level.hi));
        latents.levels.push_back(std::move(level));
    }
    return Status::success();
}

// spec 5.6
Status parse_network(const ObjectReader& top, Network& network, std::vector<bool>& has_scale, bool& arithmetic_given) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.object("network", v));
    const ObjectReader o(*v, "network");
    NMC_RETURN_IF_ERROR(o.enumeration("activation", network.activation, activation_from_string, "'hgelu_clamped'"));
    // Optional here: whether the pack's version requires it is checked against the header (read_pack).
    arithmetic_given = v->contains("arithmetic");
    if (arithmetic_given) {
        NMC_RETURN_IF_ERROR(
            o.enumeration("arithmetic", network.arithmetic, arithmetic_from_string, "'float32' or 'binary16'"));
    }
    const Json* layers = nullptr;
    NMC_RETURN_IF_ERROR(o.array("layers", layers));
    for (size_t i = 0; i < layers->size(); ++i) {
        const std::string path = index_path("network.layers", i);
        NMC_RETURN_IF_ERROR(require_object((*layers)[i], path));
        const ObjectReader l((*layers)[i], path);
        Layer layer;
        NMC_RETURN_IF_ERROR(l.integer("input_width", layer.input_width));
        NMC_RETURN_IF_ERROR(l.integer("output_width", layer.output_width));
        NMC_RETURN_IF_ERROR(
            l.enumeration("weight_type", layer.weight_type, weight_type_from_string, "'e4m3' or 'int8'"));
        bool scaled = false;
        NMC_RETURN_IF_ERROR(l.boolean("has_scale", scaled));
        has_scale.push_back(scaled);
        network.layers.push_back(std::move(layer));
    }
    return Status::success();
}

// spec 5.7 (informational: every key optional, types checked).
Status parse_encoder(const ObjectReader& top, EncoderInfo& e) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.object("encoder", v, false));
    if (!v) return Status::success();
    const ObjectReader o(*v, "encoder");
    NMC_RETURN_IF_ERROR(o.string("tool", e.tool, false));
    NMC_RETURN_IF_ERROR(o.string("preset", e.preset, false));
    NMC_RETURN_IF_ERROR(o.number("target_bpp", e.target_bpp, false));
    NMC_RETURN_IF_ERROR(o.int64("steps", e.steps, false));
    NMC_RETURN_IF_ERROR(o.int64("seed", e.seed, false));
    NMC_RETURN_IF_ERROR(o.string("device", e.device, false));
    NMC_RETURN_IF_ERROR(o.number("training_seconds", e.training_seconds, false));
    NMC_RETURN_IF_ERROR(o.string("source_folder", e.source_folder, false));
    NMC_RETURN_IF_ERROR(o.string("trainer", e.trainer, false));
    NMC_RETURN_IF_ERROR(o.int64("batch_size", e.batch_size, false));
    NMC_RETURN_IF_ERROR(o.number("latent_learning_rate", e.latent_learning_rate, false));
    NMC_RETURN_IF_ERROR(o.number("network_learning_rate", e.network_learning_rate, false));
    NMC_RETURN_IF_ERROR(o.string("latent_rounding", e.latent_rounding, false));
    NMC_RETURN_IF_ERROR(o.number("latent_rounding_at", e.latent_rounding_at, false));
    NMC_RETURN_IF_ERROR(o.number("weight_rounding_at", e.weight_rounding_at, false));
    return o.string("latent_adam", e.latent_adam, false);
}

// spec 5.8: psnr_db, channels and mips, shared by the overall report and each texture's.
Status parse_psnr_set(const ObjectReader& o, double& psnr_db, std::vector<double>& channels,
                      std::vector<double>& mips) {
    NMC_RETURN_IF_ERROR(o.number("psnr_db", psnr_db, false));
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(o.array("channels", v, false));
    if (v) NMC_RETURN_IF_ERROR(parse_doubles(*v, o.path("channels"), channels));
    NMC_RETURN_IF_ERROR(o.array("mips", v, false));
    if (v) NMC_RETURN_IF_ERROR(parse_doubles(*v, o.path("mips"), mips));
    return Status::success();
}

// spec 5.8 (informational: every key optional, types checked).
Status parse_quality(const ObjectReader& top, QualityReport& q) {
    const Json* v = nullptr;
    NMC_RETURN_IF_ERROR(top.object("quality", v, false));
    if (!v) return Status::success();
    q.present = true;
    const ObjectReader o(*v, "quality");
    NMC_RETURN_IF_ERROR(parse_psnr_set(o, q.psnr_db, q.channels, q.mips));
    NMC_RETURN_IF_ERROR(o.number("bits_per_texel", q.bits_per_texel, false));
    NMC_RETURN_IF_ERROR(o.number("psnr8_mip0_db", q.psnr8_mip0_db, false));
    const Json* textures = nullptr;
    NMC_RETURN_IF_ERROR(o.object("textures", textures, false));
    if (!textures) return Status::success();
    for (const auto& item : textures->items()) {
        const std::string path = o.path("textures") + "." + item.key();
        NMC_RETURN_IF_ERROR(require_object(item.value(), path));
        const ObjectReader t(item.value(), path);
        TextureQuality tq;
        tq.texture = item.key();
        NMC_RETURN_IF_ERROR(parse_psnr_set(t, tq.psnr_db, tq.channels, tq.mips));
        NMC_RETURN_IF_ERROR(t.number("mean_angle_deg", tq.mean_angle_deg, false));
        NMC_RETURN_IF_ERROR(t.number("psnr8_mip0_db", tq.psnr8_mip0_db, false));
        q.textures.push_back(std::move(tq));
    }
    return Status::success();
}

Json range_json(float lo, float hi) {
    return Json::array({static_cast<double>(lo), static_cast<double>(hi)});
}

Json psnr_set_json(double psnr_db, const std::vector<double>& channels, const std::vector<double>& mips) {
    Json j = Json::object();
    j["psnr_db"] = psnr_db;
    if (!channels.empty()) j["channels"] = channels;
    if (!mips.empty()) j["mips"] = mips;
    return j;
}

}  // namespace

std::vector<bool> layer_has_scale(const Network& network) {
    std::vector<bool> flags;
    for (const Layer& layer : network.layers) flags.push_back(layer.has_scale());
    return flags;
}

Result<std::string> metadata_to_json(const Pack& pack) {
    Json j = Json::object();
    j["schema_version"] = 1;
    const MaterialInfo& m = pack.material;
    j["material"] = {{"name", m.name},
                     {"width", m.width},
                     {"height", m.height},
                     {"mip_count", m.mip_count},
                     {"address_mode", to_string(m.address_mode)}};
    Json channels = Json::array();
    for (const ChannelInfo& c : pack.channels)
        channels.push_back({{"name", c.name}, {"range", range_json(c.lo, c.hi)}});
    j["channels"] = std::move(channels);
    Json textures = Json::array();
    for (const TextureLayout& t : pack.textures) {
        Json sources = Json::array();
        for (const ChannelSource& c : t.channels) {
            Json s = {{"semantic", to_string(c.semantic)}, {"source", to_string(c.kind)}};
            if (c.kind == ChannelSource::Kind::pack) {
                s["pack_channel"] = c.pack_channel;
                s["invert"] = c.invert;
            } else if (c.kind == ChannelSource::Kind::constant) {
                s["value"] = static_cast<double>(c.constant_value);
            }
            sources.push_back(std::move(s));
        }
        Json texture = {{"name", t.name},
                        {"file_name", t.file_name},
                        {"file_format", t.file_format},
                        {"sample_type", to_string(t.sample_type)},
                        {"color_space", to_string(t.color_space)},
                        {"normal_mode", to_string(t.normal_mode)},
                        {"normal_convention", to_string(t.normal_convention)},
                        {"semantic", t.semantic_label()},
                        {"source_sha256", t.source_sha256},
                        {"channels", std::move(sources)}};
        // Only where used (3.x packs, spec 11), so that other packs keep their bytes.
        if (t.value_encoding != ValueEncoding::none) {
            texture["value_encoding"] = to_string(t.value_encoding);
            texture["peak"] = static_cast<double>(t.peak);
        }
        textures.push_back(std::move(texture));
    }
    j["textures"] = std::move(textures);
    Json levels = Json::array();
    for (const LatentLevel& l : pack.latents.levels)
        levels.push_back(
            {{"width", l.width}, {"height", l.height}, {"bits", l.bits}, {"range", range_json(l.lo, l.hi)}});
    j["latents"] = {{"feature_count", pack.latents.feature_count},
                    {"grid_scale", pack.latents.grid_scale},
                    {"levels", std::move(levels)}};
    Json layers = Json::array();
    for (const Layer& l : pack.network.layers)
        layers.push_back({{"input_width", l.input_width},
                          {"output_width", l.output_width},
                          {"weight_type", to_string(l.weight_type)},
                          {"has_scale", l.has_scale()}});
    // network.arithmetic only in 2.x and 3.x packs (spec 5.6), so 1.0 packs keep their bytes.
    if (pack.format_version_major() == kFormatVersionMajorFloat32) {
        j["network"] = {{"activation", to_string(pack.network.activation)}, {"layers", std::move(layers)}};
    } else {
        j["network"] = {{"activation", to_string(pack.network.activation)},
                        {"arithmetic", to_string(pack.network.arithmetic)},
                        {"layers", std::move(layers)}};
    }
    const EncoderInfo& e = pack.encoder;
    j["encoder"] = {{"tool", e.tool},
                    {"preset", e.preset},
                    {"target_bpp", e.target_bpp},
                    {"steps", e.steps},
                    {"seed", e.seed},
                    {"device", e.device},
                    {"training_seconds", e.training_seconds},
                    {"source_folder", e.source_folder}};
    if (!e.trainer.empty()) {
        Json& o = j["encoder"];
        o["trainer"] = e.trainer;
        o["batch_size"] = e.batch_size;
        o["latent_learning_rate"] = e.latent_learning_rate;
        o["network_learning_rate"] = e.network_learning_rate;
        o["latent_rounding"] = e.latent_rounding;
        o["latent_rounding_at"] = e.latent_rounding_at;
        o["weight_rounding_at"] = e.weight_rounding_at;
        o["latent_adam"] = e.latent_adam;
    }
    const QualityReport& q = pack.quality;
    if (q.present) {
        Json quality = psnr_set_json(q.psnr_db, q.channels, q.mips);
        quality["bits_per_texel"] = q.bits_per_texel;
        quality["psnr8_mip0_db"] = q.psnr8_mip0_db;
        Json per_texture = Json::object();
        for (const TextureQuality& t : q.textures) {
            Json tj = psnr_set_json(t.psnr_db, t.channels, t.mips);
            if (t.mean_angle_deg >= 0) tj["mean_angle_deg"] = t.mean_angle_deg;
            if (t.psnr8_mip0_db != 0) tj["psnr8_mip0_db"] = t.psnr8_mip0_db;
            per_texture[t.texture] = std::move(tj);
        }
        quality["textures"] = std::move(per_texture);
        j["quality"] = std::move(quality);
    }
    try {
        // nlohmann prints doubles in the shortest form that reads back to the same value.
        return j.dump(-1, ' ', false, Json::error_handler_t::strict);
    } catch (const Json::type_error& error) {
        return Status(StatusCode::invalid_argument,
                      std::string("metadata: a string is not valid UTF-8 (") + error.what() + ")");
    }
}

Result<Metadata> metadata_from_json(const uint8_t* data, size_t size) {
    if (size > kMaxMetadataSize)
        return Status(StatusCode::limit_exceeded, "section 'META': " + std::to_string(size) +
                                                      " bytes exceed the limit of " + std::to_string(kMaxMetadataSize));
    // spec 5: the section is one JSON text in UTF-8 and nothing else. nlohmann's parser takes a NUL byte for the end
    // of its input and skips a byte order mark, so it would accept a text followed by a NUL and anything: such bytes
    // are refused here.
    const size_t utf8_end = valid_utf8_prefix(data, size);
    const size_t nul = static_cast<size_t>(std::find(data, data + utf8_end, uint8_t{0}) - data);
    if (nul < utf8_end)
        return Status(StatusCode::corrupt, "section 'META': a NUL byte at offset " + std::to_string(nul) +
                                               " (the section must be exactly one JSON text; only whitespace may "
                                               "follow it)");
    if (utf8_end < size)
        return Status(StatusCode::corrupt, "section 'META': not valid UTF-8 at offset " + std::to_string(utf8_end));
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF)  // which the parser would skip
        return Status(StatusCode::corrupt,
                      "section 'META': starts with a byte order mark (the section must be exactly one JSON text)");
    // The parsers reject trailing content other than whitespace.
    MetadataShape shape;
    if (!Json::sax_parse(data, data + size, &shape)) return shape.status();
    const Json j = Json::parse(data, data + size, nullptr, false);  // JSON of a bounded shape: checked above
    if (!j.is_object())
        return Status(StatusCode::corrupt, std::string("section 'META': expected a JSON object, got ") + j.type_name());
    const ObjectReader top(j, "");
    int64_t schema_version = 0;
    NMC_RETURN_IF_ERROR(top.int64("schema_version", schema_version));
    if (schema_version != 1) return meta_error("schema_version", "expected 1, got " + std::to_string(schema_version));
    Metadata meta;
    Pack& pack = meta.pack;
    NMC_RETURN_IF_ERROR(parse_material(top, pack.material));
    NMC_RETURN_IF_ERROR(parse_channels(top, pack.channels));
    NMC_RETURN_IF_ERROR(parse_textures(top, pack.textures));
    NMC_RETURN_IF_ERROR(parse_latents(top, pack.latents));
    NMC_RETURN_IF_ERROR(parse_network(top, pack.network, meta.layer_has_scale, meta.arithmetic_given));
    NMC_RETURN_IF_ERROR(parse_encoder(top, pack.encoder));
    NMC_RETURN_IF_ERROR(parse_quality(top, pack.quality));
    return meta;
}

}  // namespace nmc
