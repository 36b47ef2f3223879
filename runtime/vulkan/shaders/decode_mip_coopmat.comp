// Whole-mip decoding with each layer's products on tensor cores (GL_NV_cooperative_matrix; docs/runtime.md, "Which
// path runs where"): as decode_mip_scalar.comp, but a workgroup's 64 texels (two subgroups of 32) keep their layer
// inputs as binary16 rows of a shared matrix X, and each subgroup multiplies its 32 rows by the layer's transposed
// weights B (NMC_LAYER_WEIGHTS_HALF) in 16 x 16 x 16 tiles with float32 sums. E4M3 inputs and E4M3 or Int8 weights
// are exact in binary16 and their products exact in float32, so only the order of each layer's sum differs from the
// scalar path (spec 8.6 leaves it free). Sampling (8.1-8.5), scales, biases, the activation and the output transform
// are nmc_decode.glsl's, per texel.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x = 64) in;

// The widest layer of the pack and that width rounded up to 16 (NMC_PADDED), set when the pipeline is created.
layout(constant_id = 0) const int kMaxWidth = 256;
layout(constant_id = 1) const uint kPaddedWidth = 256;
#define NMC_MAX_WIDTH kMaxWidth

const uint kTexels = 64;     // a workgroup's texels: rows of X and of the sums
const uint kSubgroup = 32;   // a subgroup's rows (NVIDIA's subgroup size; the host checks it)
const uint kTile = 16;       // the cooperative matrices' M, N and K

// Both matrices are stored column-major (element (texel, i) at i * kTexels + texel), so that the invocations of a
// subgroup, each touching its own texel's row, reach consecutive words: no shared-memory bank conflicts.
shared float16_t layer_input[kTexels * kPaddedWidth];  // X: row = texel, column = input
shared float layer_sums[kTexels * kPaddedWidth];       // the products' sums: row = texel, column = output

// Layer 0's inputs go straight into this invocation's row of X (E4M3 values are exact in binary16).
#define NMC_STORE_INPUT(i, value) layer_input[(i) * kTexels + gl_LocalInvocationID.x] = float16_t(value)
#include "nmc_decode.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Output {
    float output_values[];
};
// The model buffer again, read as binary16 values (the cooperative-matrix loads of the weights).
layout(std430, set = 0, binding = 2) readonly restrict buffer ModelHalves {
    float16_t model_halves[];
};

layout(push_constant) uniform Range {
    uint mip;
    uint first_row;
    uint row_count;
    uint plane_stride;
} range;

void main() {
    const uint width = max(1u, nmc_word(NMC_HEADER_WIDTH) >> range.mip);
    const uint count = width * range.row_count;
    const uint row = gl_LocalInvocationID.x;
    const uint t = gl_GlobalInvocationID.x;
    // Invocations past the chunk's end decode its last texel and store nothing: every invocation of a subgroup takes
    // part in the matrix operations.
    const uint texel = min(t, count - 1u);
    const uint tables = NMC_HEADER_MIPS + range.mip * NMC_MIP_WORDS;
    const float u = nmc_float(nmc_word(tables + NMC_MIP_U_TABLE) + texel % width);
    const float v = nmc_float(nmc_word(tables + NMC_MIP_V_TABLE) + range.first_row + texel / width);

    // A buffer of another layout or shape (nmc_model_matches) gives NaN, as nmc_decode_texel does.
    const bool matches = nmc_model_matches();
    nmc_layer0_input(u, v, range.mip);
    const uint inputs0 = nmc_width(0u);
    [[unroll]] for (uint i = inputs0; i < NMC_PADDED(inputs0); ++i) layer_input[i * kTexels + row] = float16_t(0.0);
    barrier();

    const uint subgroup_row = gl_SubgroupID * kSubgroup;  // the rows this subgroup multiplies
    const uint layers = nmc_layer_count();
    [[unroll]] for (uint l = 0u; l < layers; ++l) {
        const uint layer = NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS;
        const uint rows_k = NMC_PADDED(nmc_width(l));
        const uint outputs = nmc_width(l + 1u);
        const uint columns = NMC_PADDED(outputs);
        const uint weights = 2u * nmc_word(layer + NMC_LAYER_WEIGHTS_HALF);  // in binary16 elements
        // sums[r][n] = sum over k of X[r][k] * B[k][n], 16 x 16 tiles, float32 accumulation; each tile of B is loaded
        // once for the subgroup's two tiles of rows.
        [[unroll]] for (uint n = 0u; n < columns; n += kTile) {
            fcoopmatNV<32, gl_ScopeSubgroup, kTile, kTile> sum0 = fcoopmatNV<32, gl_ScopeSubgroup, kTile, kTile>(0.0);
            fcoopmatNV<32, gl_ScopeSubgroup, kTile, kTile> sum1 = fcoopmatNV<32, gl_ScopeSubgroup, kTile, kTile>(0.0);
            [[unroll]] for (uint k = 0u; k < rows_k; k += kTile) {
                fcoopmatNV<16, gl_ScopeSubgroup, kTile, kTile> a0;
                fcoopmatNV<16, gl_ScopeSubgroup, kTile, kTile> a1;
                fcoopmatNV<16, gl_ScopeSubgroup, kTile, kTile> b;
                coopMatLoadNV(b, model_halves, weights + k * columns + n, columns, false);
                coopMatLoadNV(a0, layer_input, k * kTexels + subgroup_row, kTexels, true);
                coopMatLoadNV(a1, layer_input, k * kTexels + subgroup_row + kTile, kTexels, true);
                sum0 = coopMatMulAddNV(a0, b, sum0);
                sum1 = coopMatMulAddNV(a1, b, sum1);
            }
            coopMatStoreNV(sum0, layer_sums, n * kTexels + subgroup_row, kTexels, true);
            coopMatStoreNV(sum1, layer_sums, n * kTexels + subgroup_row + kTile, kTexels, true);
        }
        barrier();
        const NmcLayer constants = nmc_layer(layer);
        if (l + 1u < layers) {
            // spec 8.6: y = acc * scale + bias, activated and rounded to E4M3: the next layer's X row (exact).
            [[unroll]] for (uint n = 0u; n < columns; ++n) {
                const float a = n < outputs
                    ? nmc_hidden_activation(constants, nmc_layer_output(constants, n, layer_sums[n * kTexels + row]))
                    : 0.0;
                layer_input[n * kTexels + row] = float16_t(a);
            }
        } else if (t < count) {
            [[unroll]] for (uint n = 0u; n < outputs; ++n) {
                const float value =
                    nmc_output_transform(nmc_layer_output(constants, n, layer_sums[n * kTexels + row]), n);
                output_values[n * range.plane_stride + t] = matches ? value : uintBitsToFloat(0x7FC00000u);
            }
        }
        barrier();
    }
}
