// ASTC LDR through Arm's astcenc library (libastcenc, linked only by this part of nmc_texture): a texture's levels
// encoded with one codec context, and a level decoded back for quality figures and tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "texture/block_image.h"

namespace nmc::texture {

// False when nmc was built without libastcenc (CMake NMC_WITH_ASTCENC): every function below then returns
// astc_availability()'s backend_unavailable, which says how to get ASTC.
bool astc_in_build();
Status astc_availability();

// astcenc's search presets (ASTCENC_PRE_*), the astcenc tool's -fastest .. -exhaustive: more effort, better blocks,
// slower (docs/cli.md gives the measured trade).
enum class AstcEffort { fastest, fast, medium, thorough, exhaustive };
const char* to_string(AstcEffort e);  // "fastest", ...
std::optional<AstcEffort> astc_effort_from_string(const std::string& s);
const std::vector<std::string>& astc_effort_names();

// libastcenc 4.2 keeps state from the first context a process creates: a later context of another block size
// encodes some blocks differently from the astcenc tool (measured 0.04-0.11 dB lower at 6x6 and 8x8 after a 4x4
// context). A process that encodes one block size, as nmc decompress does, gets the tool's blocks byte for byte.

// Encodes `levels` (each an image of any size >= 1x1) as `choice.format`, an ASTC format: the sRGB profile when
// choice.srgb (its blocks decode differently from the linear one's), astcenc's normal-map mode and swizzle when
// choice.normal_xy. Each result has level_bytes(). `threads` workers, 0 for every core; the blocks do not depend on
// it. invalid_argument for a format other than ASTC; backend_unavailable without libastcenc; internal when
// astcenc fails (its error string in the message).
Result<std::vector<std::vector<uint8_t>>> encode_astc(const BlockChoice& choice, AstcEffort effort,
                                                      const std::vector<Rgba8Image>& levels, int threads);

// Decodes one level written as `choice`; a normal_xy level comes back as BC5's does: (X, Y, 0, 255).
// invalid_argument when `blocks` has not level_bytes() or the format is not ASTC.
Result<Rgba8Image> decode_astc(const BlockChoice& choice, int width, int height, const std::vector<uint8_t>& blocks);

}  // namespace nmc::texture
