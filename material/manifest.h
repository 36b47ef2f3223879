// The material manifest: a JSON file that says what each texture file is, overriding or replacing the
// recognition by file name. docs/manifest.md is the reference for its keys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/texture_layout.h"

namespace nmc {

struct ManifestTexture {
    std::string file;                          // file name inside the material folder (no '/' or "..")
    std::string name;                          // texture name; "" -> the file name without extension
    std::optional<Semantic> semantic;          // every channel means this (albedo's 4th channel: opacity)
    std::vector<Semantic> channels;            // or one semantic per file channel (a swizzle: ORM is
                                               // [ambient_occlusion, roughness, metalness])
    std::optional<ColorSpace> color_space;     // nullopt: file metadata, else sRGB for colour maps
    std::optional<NormalConvention> normal_convention;  // normal maps; nullopt: OpenGL
    std::vector<float> loss_weights;           // empty (1 each), one for all channels, or one per file channel
};

struct Manifest {
    std::string name;             // material name; "" -> the folder's name
    std::string folder;           // where the files are, relative to the manifest's folder; "" -> that folder
    bool guess_unlisted = false;  // true: files not listed are recognised by name; false: they are ignored
    std::vector<ManifestTexture> textures;
};

// Parses manifest JSON. Unknown keys, wrong types, unknown names (semantics, colour spaces, conventions),
// missing "file"/"textures", both or neither of "semantic" and "channels", a file listed twice and a
// non-positive or non-finite loss weight fail with invalid_argument; `origin` (the manifest's path) and the
// key start the message: "m.json: textures[1].semantic: unknown semantic 'albedoo'".
Result<Manifest> parse_manifest(const std::string& json_text, const std::string& origin);

// Reads and parses a manifest file (io_error when unreadable).
Result<Manifest> read_manifest(const std::string& path);

// The manifest as pretty-printed JSON (2-space indent, trailing newline) that parse_manifest() accepts.
std::string manifest_to_json(const Manifest& manifest);

}  // namespace nmc
