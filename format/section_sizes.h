// The sizes the spec's layouts imply (sections 3.3, 6 and 7), from metadata alone: the reader checks files against
// them, the writer lays packs out by them, and the compressor's rate control estimates file sizes with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/pack.h"

namespace nmc {

// spec 3.3: the offset of each section of a container whose sections have these stored sizes, in file order.
std::vector<uint64_t> section_offsets(const std::vector<uint64_t>& stored_sizes);

// spec 3.3: the file size of that container (at least one section): the last section's offset + stored size.
uint64_t container_size(const std::vector<uint64_t>& stored_sizes);

// The most bytes a container of `section_count` sections adds to their stored bytes: header, section table and up to
// kSectionAlignment - 1 zero bytes before each section. For estimates made before the stored sizes are known.
uint64_t container_overhead_bound(size_t section_count);

// spec 6: the exact LATN size the levels' metadata implies (widths, heights, bits, feature_count; codes unused).
uint64_t latent_section_size(const LatentGrids& latents);

// spec 6: the byte offset o_k of each level's bit stream in the LATN section (o_0 = 0, o_{k+1} = align16(o_k + n_k)).
std::vector<uint64_t> latent_level_offsets(const LatentGrids& latents);

// spec 7: the exact WGHT size the layers' metadata implies (widths and has_scale; weights unused).
uint64_t weight_section_size(const Network& network, const std::vector<bool>& has_scale);

}  // namespace nmc
