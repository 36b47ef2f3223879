// Inference on load (docs/runtime.md): rows first_row .. first_row + row_count - 1 of mip `mip` of texture `texture`,
// every texel decoded (spec 8.1-8.9, the scalar path) and written as its file would hold it (8.10: 8- and 16-bit
// codes, binary16 or float32 values) into `texels`, tightly packed in the layout of the texture's image format: 1, 2
// or 4 samples a texel (a 3-channel texture gets a fourth sample of 1.0: RGBA), row after row. A copy into a VkImage
// of that format (VulkanDecoder::decode_texture_image) then needs no conversion. Each invocation writes whole words:
// 4 / B texels of B < 4 bytes, or one texel of B >= 4 bytes.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(constant_id = 0) const int kMaxWidth = 256;
#define NMC_MAX_WIDTH kMaxWidth
#include "nmc_decode.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Texels {
    uint texels[];
};

layout(push_constant) uniform Range {
    uint mip;
    uint texture;
    uint first_row;
    uint row_count;
} range;

void main() {
    const uint width = max(1u, nmc_word(NMC_HEADER_WIDTH) >> range.mip);
    const uint count = width * range.row_count;
    const uint texture = NMC_HEADER_TEXTURES + range.texture * NMC_TEXTURE_WORDS;
    const uint channels = nmc_word(texture + NMC_TEXTURE_CHANNEL_COUNT);
    const uint samples = channels == 3u ? 4u : channels;
    const uint sample_type = nmc_word(texture + NMC_TEXTURE_SAMPLE_TYPE);
    const uint sample_bytes = sample_type == NMC_SAMPLE_UINT8 ? 1u : (sample_type == NMC_SAMPLE_FLOAT32 ? 4u : 2u);
    const uint texel_bytes = samples * sample_bytes;
    const uint per_invocation = texel_bytes < 4u ? 4u / texel_bytes : 1u;  // texels
    const uint words = texel_bytes < 4u ? 1u : texel_bytes / 4u;           // words written
    const uint group = gl_GlobalInvocationID.x;
    if (group * per_invocation >= count) return;

    const uint tables = NMC_HEADER_MIPS + range.mip * NMC_MIP_WORDS;
    uint out_words[4] = uint[4](0u, 0u, 0u, 0u);
    for (uint j = 0u; j < per_invocation; ++j) {
        const uint t = group * per_invocation + j;
        if (t >= count) break;
        const float u = nmc_float(nmc_word(tables + NMC_MIP_U_TABLE) + t % width);
        const float v = nmc_float(nmc_word(tables + NMC_MIP_V_TABLE) + range.first_row + t / width);
        float pack[16];
        nmc_decode_texel(u, v, range.mip, pack);
        float values[4];
        nmc_source_channels(range.texture, pack, values);
        for (uint s = 0u; s < samples; ++s) {
            const float value = s < channels ? values[s] : 1.0;  // RGB -> RGBA, opaque
            uint code;
            if (sample_type == NMC_SAMPLE_UINT8) {
                code = nmc_quantise_unorm(value, 255.0);
            } else if (sample_type == NMC_SAMPLE_UINT16) {
                code = nmc_quantise_unorm(value, 65535.0);
            } else if (sample_type == NMC_SAMPLE_FLOAT16) {
                code = nmc_half_bits(value);
            } else {
                code = floatBitsToUint(value);
            }
            const uint byte = (j * samples + s) * sample_bytes;  // within this invocation's words
            out_words[byte / 4u] |= code << (8u * (byte % 4u));
        }
    }
    for (uint w = 0u; w < words; ++w) texels[group * words + w] = out_words[w];
}
