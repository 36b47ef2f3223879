// The Pack behind data/golden/v1_0_small.nmc, built in code so the committed file can be regenerated and
// compared byte for byte: a 32 x 16 material with 7 pack channels, 4 textures (one an 'xy' DirectX normal
// map, one with constants, one float), 4 latent levels using every bit width, and a 3-layer network.
#pragma once

#include <string>

#include "format/pack.h"

namespace nmc::testing {

Pack make_golden_pack();

// Where the committed golden pack lives (relative to the repository root).
std::string golden_pack_path();

// The golden pack is written uncompressed so its bytes do not depend on the zstd version.
WriteOptions golden_write_options();

}  // namespace nmc::testing
