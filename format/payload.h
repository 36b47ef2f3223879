// The binary sections: LATN bit packing (spec 6) and the WGHT layout (spec 7). Sizes come from metadata that
// check_metadata has accepted; every size is computed in 64 bits and compared with the section before
// anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "format/pack.h"
#include "format/section_sizes.h"

namespace nmc {

// Writer side: every level holds width * height * feature_count codes, each below 2^bits.
// invalid_argument otherwise.
Status check_latent_codes(const LatentGrids& latents);

// spec 6: packs the codes (already checked) into LATN bytes.
std::vector<uint8_t> pack_latents(const LatentGrids& latents);

// spec 6: fills each level's codes from LATN bytes. corrupt on a size mismatch or non-zero padding/unused bits.
Status unpack_latents(const uint8_t* data, size_t size, LatentGrids& latents);

// Writer side: each layer's weights, scales and biases have the sizes its widths imply. invalid_argument.
Status check_layer_sizes(const Network& network);

// spec 2, 7, 10: the values a reader must reject: NaN E4M3 codes, Int8 -128, non-finite scales and biases.
// corrupt, naming the layer and index.
Status check_layer_values(const Layer& layer, size_t layer_index);

// spec 7: serialises the layers (sizes already checked).
std::vector<uint8_t> pack_weights(const Network& network);

// spec 7: fills each layer's weights, scales and biases from WGHT bytes and checks their values.
Status unpack_weights(const uint8_t* data, size_t size, const std::vector<bool>& has_scale, Network& network);

}  // namespace nmc
