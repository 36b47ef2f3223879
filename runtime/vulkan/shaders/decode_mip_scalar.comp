// Whole-mip decoding on any Vulkan 1.1 device, one invocation a texel (docs/runtime.md, "Inference on load"): rows
// first_row .. first_row + row_count - 1 of mip `mip`, every texel at its centre (spec 8), channel c of row-major
// texel t at output[c * plane_stride + t].
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

// The widest layer of the pack (gpu_model.h's GpuModel::max_width), set when the pipeline is created.
layout(constant_id = 0) const int kMaxWidth = 256;
#define NMC_MAX_WIDTH kMaxWidth
#include "nmc_decode.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Output {
    float output_values[];
};

layout(push_constant) uniform Range {
    uint mip;
    uint first_row;
    uint row_count;
    uint plane_stride;
} range;

void main() {
    const uint width = max(1u, nmc_word(NMC_HEADER_WIDTH) >> range.mip);
    const uint t = gl_GlobalInvocationID.x;
    if (t >= width * range.row_count) return;
    const uint x = t % width;
    const uint y = range.first_row + t / width;
    const uint tables = NMC_HEADER_MIPS + range.mip * NMC_MIP_WORDS;
    const float u = nmc_float(nmc_word(tables + NMC_MIP_U_TABLE) + x);
    const float v = nmc_float(nmc_word(tables + NMC_MIP_V_TABLE) + y);
    float channels[16];
    nmc_decode_texel(u, v, range.mip, channels);
    const uint count = nmc_word(NMC_HEADER_CHANNEL_COUNT);
    for (uint c = 0u; c < count; ++c) output_values[c * range.plane_stride + t] = channels[c];
}
