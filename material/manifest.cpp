// Parsing and writing material manifests (docs/manifest.md). Every key is checked: a typo must not silently
// fall back to guessing.
#include "material/manifest.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/file_io.h"

namespace nmc {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxManifestBytes = 1 << 20;

Status bad(const std::string& origin, const std::string& key, const std::string& what) {
    return Status(StatusCode::invalid_argument, origin + ": " + key + ": " + what);
}

const char* type_name(const Json& j) { return j.type_name(); }

Status check_keys(const Json& object, const std::set<std::string>& known, const std::string& origin,
                  const std::string& where) {
    for (const auto& item : object.items()) {
        if (!known.count(item.key()))
            return bad(origin, where + item.key(), "unknown key (known: " + [&] {
                std::string list;
                for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
                return list;
            }() + ")");
    }
    return Status::success();
}

Status get_string(const Json& object, const char* key, const std::string& origin, const std::string& where,
                  std::string* out) {
    const Json& v = object.at(key);
    if (!v.is_string()) return bad(origin, where + key, std::string("expected a string, got ") + type_name(v));
    *out = v.get<std::string>();
    return Status::success();
}

Result<Semantic> parse_semantic(const Json& v, const std::string& origin, const std::string& key) {
    if (!v.is_string()) return bad(origin, key, std::string("expected a semantic string, got ") + type_name(v));
    const auto s = semantic_from_string(v.get<std::string>());
    if (!s)
        return bad(origin, key, "unknown semantic '" + v.get<std::string>() +
                                    "' (albedo, normal, roughness, metalness, ambient_occlusion, height, opacity, "
                                    "emissive, specular, glossiness, other)");
    return *s;
}

bool safe_file_name(const std::string& f) {
    return !f.empty() && f.find('/') == std::string::npos && f.find('\\') == std::string::npos && f != "." &&
           f != "..";
}

Result<ManifestTexture> parse_texture(const Json& t, const std::string& origin, const std::string& where) {
    if (!t.is_object()) return bad(origin, where, std::string("expected an object, got ") + type_name(t));
    NMC_RETURN_IF_ERROR(check_keys(
        t, {"file", "name", "semantic", "channels", "color_space", "normal_convention", "loss_weight"}, origin,
        where + "."));
    ManifestTexture tex;
    if (!t.contains("file")) return bad(origin, where + ".file", "missing (the texture's file name)");
    NMC_RETURN_IF_ERROR(get_string(t, "file", origin, where + ".", &tex.file));
    if (!safe_file_name(tex.file))
        return bad(origin, where + ".file", "'" + tex.file + "' must be a plain file name inside the folder");
    if (t.contains("name")) NMC_RETURN_IF_ERROR(get_string(t, "name", origin, where + ".", &tex.name));
    if (t.contains("semantic") == t.contains("channels"))
        return bad(origin, where, "give exactly one of \"semantic\" (the whole map) or \"channels\" (per channel)");
    if (t.contains("semantic")) {
        auto s = parse_semantic(t.at("semantic"), origin, where + ".semantic");
        if (!s.ok()) return s.status();
        tex.semantic = *s;
    } else {
        const Json& c = t.at("channels");
        if (!c.is_array() || c.empty() || c.size() > 4)
            return bad(origin, where + ".channels", std::string("expected an array of 1..4 semantics, got ") +
                                                        (c.is_array() ? std::to_string(c.size()) + " entries"
                                                                      : type_name(c)));
        for (size_t i = 0; i < c.size(); ++i) {
            auto s = parse_semantic(c[i], origin, where + ".channels[" + std::to_string(i) + "]");
            if (!s.ok()) return s.status();
            tex.channels.push_back(*s);
        }
    }
    if (t.contains("color_space")) {
        std::string s;
        NMC_RETURN_IF_ERROR(get_string(t, "color_space", origin, where + ".", &s));
        tex.color_space = color_space_from_string(s);
        if (!tex.color_space) return bad(origin, where + ".color_space", "expected srgb or linear, got '" + s + "'");
    }
    if (t.contains("normal_convention")) {
        std::string s;
        NMC_RETURN_IF_ERROR(get_string(t, "normal_convention", origin, where + ".", &s));
        tex.normal_convention = normal_convention_from_string(s);
        if (!tex.normal_convention)
            return bad(origin, where + ".normal_convention", "expected opengl or directx, got '" + s + "'");
    }
    if (t.contains("loss_weight")) {
        const Json& w = t.at("loss_weight");
        const std::string key = where + ".loss_weight";
        std::vector<Json> values;
        if (w.is_number()) {
            values.push_back(w);
        } else if (w.is_array() && !w.empty() && w.size() <= 4) {
            values.assign(w.begin(), w.end());
        } else {
            return bad(origin, key, std::string("expected a number or an array of 1..4 numbers, got ") + type_name(w));
        }
        for (const Json& v : values) {
            if (!v.is_number()) return bad(origin, key, std::string("expected a number, got ") + type_name(v));
            // Checked as the float the trainer uses: 1e40 is a finite double but an infinite float.
            const float weight = static_cast<float>(v.get<double>());
            if (!std::isfinite(weight) || !(weight > 0.0f))
                return bad(origin, key, "weights must be finite and > 0 as 32-bit floats");
            tex.loss_weights.push_back(weight);
        }
    }
    return tex;
}

}  // namespace

Result<Manifest> parse_manifest(const std::string& json_text, const std::string& origin) {
    Json root;
    try {
        root = Json::parse(json_text);
    } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond double (1e400)
        return Status(StatusCode::invalid_argument, origin + ": not valid JSON: " + e.what());
    }
    if (!root.is_object()) return bad(origin, "(top level)", std::string("expected an object, got ") + type_name(root));
    NMC_RETURN_IF_ERROR(check_keys(root, {"name", "folder", "guess_unlisted", "textures"}, origin, ""));
    Manifest m;
    if (root.contains("name")) NMC_RETURN_IF_ERROR(get_string(root, "name", origin, "", &m.name));
    if (root.contains("folder")) NMC_RETURN_IF_ERROR(get_string(root, "folder", origin, "", &m.folder));
    if (root.contains("guess_unlisted")) {
        if (!root.at("guess_unlisted").is_boolean())
            return bad(origin, "guess_unlisted",
                       std::string("expected a boolean, got ") + type_name(root.at("guess_unlisted")));
        m.guess_unlisted = root.at("guess_unlisted").get<bool>();
    }
    if (!root.contains("textures")) return bad(origin, "textures", "missing (an array of texture objects)");
    const Json& textures = root.at("textures");
    if (!textures.is_array())
        return bad(origin, "textures", std::string("expected an array, got ") + type_name(textures));
    std::set<std::string> files;
    for (size_t i = 0; i < textures.size(); ++i) {
        auto t = parse_texture(textures[i], origin, "textures[" + std::to_string(i) + "]");
        if (!t.ok()) return t.status();
        if (!files.insert(t->file).second)
            return bad(origin, "textures[" + std::to_string(i) + "].file", "'" + t->file + "' is listed twice");
        m.textures.push_back(std::move(*t));
    }
    return m;
}

Result<Manifest> read_manifest(const std::string& path) {
    auto bytes = read_file(path, kMaxManifestBytes);
    if (!bytes.ok()) return bytes.status();
    return parse_manifest(std::string(bytes->begin(), bytes->end()), path);
}

std::string manifest_to_json(const Manifest& manifest) {
    Json root = Json::object();
    if (!manifest.name.empty()) root["name"] = manifest.name;
    if (!manifest.folder.empty()) root["folder"] = manifest.folder;
    root["guess_unlisted"] = manifest.guess_unlisted;
    Json textures = Json::array();
    for (const auto& t : manifest.textures) {
        Json j = Json::object();
        j["file"] = t.file;
        if (!t.name.empty()) j["name"] = t.name;
        if (t.semantic) j["semantic"] = to_string(*t.semantic);
        if (!t.channels.empty()) {
            Json c = Json::array();
            for (Semantic s : t.channels) c.push_back(to_string(s));
            j["channels"] = c;
        }
        if (t.color_space) j["color_space"] = to_string(*t.color_space);
        if (t.normal_convention) j["normal_convention"] = to_string(*t.normal_convention);
        if (t.loss_weights.size() == 1) j["loss_weight"] = t.loss_weights[0];
        if (t.loss_weights.size() > 1) j["loss_weight"] = t.loss_weights;
        textures.push_back(j);
    }
    root["textures"] = textures;
    return root.dump(2) + "\n";
}

}  // namespace nmc
