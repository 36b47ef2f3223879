// Recognition of PBR map files by name ("Metal009_2K_Color.jpg" is albedo, "*_arm_2k.jpg" is packed
// AO/roughness/metalness, "T_Crate_N.png" a DirectX normal map). docs/manifest.md lists the conventions; a
// manifest overrides them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/texture_layout.h"

namespace nmc {

struct NameMatch {
    Semantic semantic = Semantic::other;        // the map's semantic; for a packed map, its first channel's
    std::vector<Semantic> packed_channels;      // packed maps (ORM, MRA, MaskMap, ...): R, G, B (, A) meanings
    std::optional<NormalConvention> convention; // from the word (NormalDX, Unreal's _N) or a "gl"/"dx" hint after it
                                                // (nor_gl); nullopt otherwise
    std::string keyword;                        // the name part that matched, e.g. "nor_gl", "arm"

    bool packed() const { return !packed_channels.empty(); }
};

// Recognises a map from its file name (extension ignored). The name is split into words at '_', '-', '.',
// spaces and lower-to-upper case changes, compared case-insensitively; the rightmost word that names a map
// wins, so a material called "rusty_metal_05" still has its "diff" map read as albedo. Engine suffixes of one
// or two letters ("_D", "_N", "_R", "_M", "_H", "_E", "_BC") count only as the whole last part of a name with
// several parts ("T_Crate_D.png", not "D.png" or "T_Crate_D_2K.png"). nullopt when no word names a map.
std::optional<NameMatch> match_file_name(const std::string& file_name);

}  // namespace nmc
