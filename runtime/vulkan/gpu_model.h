// A pack converted, once, into the runtime's GPU model buffer (layout: runtime/vulkan/shaders/model_layout.h; what
// each region holds: docs/runtime.md). No Vulkan in here: an engine that manages its own buffers builds the words
// with build_gpu_model() and uploads them as one read-only storage buffer for nmc_decode.glsl.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "format/pack.h"

namespace nmc {

struct GpuModel {
    std::vector<uint32_t> words;  // the buffer's contents
    int max_width = 0;            // the widest layer input or output: nmc_decode.glsl's NMC_MAX_WIDTH may be this
    // The values of nmc_decode.glsl's NMC_SHAPE_CONSTANTS specialization constants (model_layout.h), in id order from
    // NMC_CONSTANT_ID: the layer count, the widths between layers, the feature count.
    std::vector<uint32_t> shape;
};

// Checks the pack (format's check_pack: every rule a reader checks) and converts it: the latent levels as the LATN
// section's own bit streams, each level's dequantised values in the pack's arithmetic (spec 6), weights as float32
// (E4M3 and Int8 values are exact), scales (1 where a layer has none), biases as float32, channel ranges, the spec's
// constants, the network's shape, and per mip the texel-centre coordinates of whole-mip decoding. invalid_argument for a pack that breaks
// a rule; limit_exceeded when a level holds 2^32 features or more, or the buffer would reach 4 GiB (32-bit indices).
Result<GpuModel> build_gpu_model(const Pack& pack);

}  // namespace nmc
