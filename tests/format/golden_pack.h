// The Packs behind data/golden/v1_0_small.nmc and v2_0_small.nmc, built in code so the committed files can be
// regenerated and compared byte for byte: a 32 x 16 material with 7 pack channels, 4 textures (one an 'xy' DirectX
// normal map, one with constants, one float), 4 latent levels using every bit width, and a 3-layer network.
#pragma once

#include <string>

#include "format/pack.h"

namespace nmc::testing {

// The format 1.0 golden pack: float32 arithmetic, the encoder info of another tool (no training schedule).
Pack make_golden_pack();

// The format 2.0 golden pack: make_golden_pack() in the binary16 arithmetic, with nmc's training schedule.
Pack make_golden_pack_2_0();

// Where the committed golden pack of format `version_major`.0 lives.
std::string golden_pack_path(int version_major = 1);

// The golden pack is written uncompressed so its bytes do not depend on the zstd version.
WriteOptions golden_write_options();

}  // namespace nmc::testing
