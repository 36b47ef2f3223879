// The META section (spec 5): the metadata of a Pack as JSON, and the rules its values must follow. The rules
// are shared by the reader (after parsing) and the writer (before serialising).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "format/container.h"
#include "format/pack.h"

namespace nmc {

// The parsed metadata: the Pack without latent codes and weights, and per layer whether it has scales
// (spec 5.6 has_scale; a Pack expresses it by non-empty scales, which the WGHT section fills in).
struct Metadata {
    Pack pack;
    std::vector<bool> layer_has_scale;
    bool arithmetic_given = false;  // network.arithmetic is present (required in 2.x packs, spec 5.6)
};

// Serialises the metadata of `pack` as compact JSON with a fixed key order and floats that round-trip.
// Fails with invalid_argument for strings that are not valid UTF-8. Does not check the rules of spec 5.
Result<std::string> metadata_to_json(const Pack& pack);

// Parses META bytes: exactly one JSON text in valid UTF-8 (no byte order mark, no NUL byte, only whitespace after
// it) within the limits of spec 9 (size, members per object, nesting), required keys present, every value of the
// right type (spec 5). Time linear in the size.
// Fails with corrupt (or limit_exceeded beyond spec 9 and for integers that do not fit 32 bits); messages name the key
// path.
// Does not check value ranges: call check_metadata next.
Result<Metadata> metadata_from_json(const uint8_t* data, size_t size);

// Every value range and cross rule of spec 5 and 9 (sizes, counts, names, channel sources, normal modes, latent
// level sizes, layer chain). corrupt for a broken rule, limit_exceeded beyond spec 9.
Status check_metadata(const Pack& pack, const std::vector<bool>& layer_has_scale);

// The has_scale flags a Pack's layers express by their scales.
std::vector<bool> layer_has_scale(const Network& network);

// The length of the longest prefix of `data` that is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// beyond U+10FFFF); `size` when all of it is.
size_t valid_utf8_prefix(const uint8_t* data, size_t size);

// `text` as an error message shows it: control characters (bytes below 0x20, and 0x7F) and bytes that are not valid
// UTF-8 as \xNN, a backslash as \\, so that a name taken from a pack can neither cut nor garble the message.
std::string printable(const std::string& text);

// spec 5.4: why `name` is not a plain file name, the rule of a texture's `name` and `file_name` (no folder part,
// nothing a file system would read as a path, a device or another name), or nullptr when it is one.
const char* file_name_problem(const std::string& name);

}  // namespace nmc
