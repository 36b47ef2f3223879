// The binary sections: LATN bit packing (spec 6) and the WGHT layout (spec 7). Sizes come from metadata that
// check_metadata has accepted; every size is computed in 64 bits and compared with the section before
// anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "format/pack.h"

namespace nmc {

// spec 6: the exact LATN size the levels' metadata implies.
uint64_t latent_section_size(const LatentGrids& latents);

// spec 6: the byte offset o_k of each level's bit stream in the LATN section (o_0 = 0, o_{k+1} = align16(o_k + n_k)).
std::vector<uint64_t> latent_level_offsets(const LatentGrids& latents);

// Writer side: every level holds width * height * feature_count codes, each below 2^bits.
// invalid_argument otherwise.
Status check_latent_codes(const LatentGrids& latents);

// spec 6: packs the codes (already checked) into LATN bytes.
std::vector<uint8_t> pack_latents(const LatentGrids& latents);

// spec 6: fills each level's codes from LATN bytes. corrupt on a size mismatch or non-zero padding/unused bits.
Status unpack_latents(const uint8_t* data, size_t size, LatentGrids& latents);

// spec 7: the exact WGHT size the layers' metadata implies.
uint64_t weight_section_size(const Network& network, const std::vector<bool>& has_scale);

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
