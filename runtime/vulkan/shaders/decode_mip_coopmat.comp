// Whole-mip decoding with each layer's products on tensor cores (GL_NV_cooperative_matrix; docs/runtime.md, "Which
// path runs where"). A workgroup of four subgroups of 32 decodes kBlocks blocks of 128 consecutive texels of the chunk.
// For each block, every invocation samples its texel's latents (8.1-8.5, nmc_decode.glsl) into its column of
// `staging`; then each subgroup runs the network on its 32 texels as two 16-row tiles with the layer vectors held in
// registers as 16 x 16 matrices: sums X * B on tensor cores (binary16 inputs and weights, float32 sums), then element
// by element y = sum * scale + bias and the activation rounded to E4M3 (8.6), converted to the
// binary16 tiles of the next layer's X without leaving registers. The last layer's tiles are transformed (8.7),
// stored to the subgroup's scratch tile and written out a channel plane at a time.
//
// Which row and column an element of a matrix holds is the driver's business: the shader never relies on it. Per-
// column values (scales, biases, channel ranges) are loaded as 16 x 16 matrices of identical rows from the subgroup's
// scratch tile and passed through a product with a zero operand (0 * B + C, exact) so that they come out laid out as
// the sums do; element e of one then pairs with element e of the other.
//
// Values: E4M3 inputs and E4M3 or Int8 weights are exact in binary16 and their products exact in float32, so only the
// order of each layer's float32 sum differs from the spec's (8.6 leaves it free). Every other operation and rounding
// is the spec's, through nmc_decode.glsl's functions.
//
// The shader needs the network's shape as specialization constants (every tile loop has a fixed trip count, so the
// tiles stay in registers) and a widest layer of at most 128 (8 tiles); vulkan_decoder.cpp checks both.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require

const uint kSubgroup = 32;  // invocations of a subgroup (NVIDIA's; the host checks the device's)
const uint kTile = 16;      // the cooperative matrices' M, N and K
const uint kRows = 128;     // texels of a block: four subgroups of 32
layout(local_size_x = 128) in;

// Set when the pipeline is created (vulkan_decoder.cpp), besides nmc_decode.glsl's network shape:
layout(constant_id = 0) const int kMaxWidth = 128;      // the widest layer
layout(constant_id = 1) const uint kInputPadded = 128;  // layer 0's input width rounded up to 16
layout(constant_id = 2) const uint kSharedWeights = 0;  // the binary16 weights' count where they are copied to shared
                                                        // memory, 0 where they do not fit (read from the model buffer)
layout(constant_id = 3) const uint kBlocks = 8;         // blocks of kRows texels a workgroup decodes
#define NMC_MAX_WIDTH kMaxWidth
const uint kMaxTiles = (uint(kMaxWidth) + 15u) / 16u;  // at most 8

// Layer 0's inputs of the block: input i of texel r at i * kRows + r (the invocations write consecutive words).
// Every shared array holds a multiple of 16 bytes: the driver may place them in any order, and the matrix loads
// need 16-byte aligned rows (an array of an odd number of halves ahead of `staging` shifted its loads by one element
// on NVIDIA's driver).
shared float16_t staging[kInputPadded * kRows];
shared float16_t shared_weights[kSharedWeights + 8u];
// Each subgroup's 16 x 16 float32 scratch tile: per-column values spread over 16 rows, the last layer's outputs.
shared float scratch[4 * kTile * kTile];

#define NMC_STORE_INPUT(i, value) staging[(i) * kRows + gl_LocalInvocationID.x] = float16_t(value)
#include "nmc_decode.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Output {
    float output_values[];
};
// The model buffer again, read as binary16 values: the transposed weights of each layer (NMC_LAYER_WEIGHTS_HALF).
layout(std430, set = 0, binding = 2) readonly restrict buffer ModelHalves {
    float16_t model_halves[];
};

layout(push_constant) uniform Range {
    uint mip;
    uint first_row;
    uint row_count;
    uint plane_stride;
} range;

#define NMC_ACCUMULATOR fcoopmatNV<32, gl_ScopeSubgroup, kTile, kTile>
#define NMC_OPERAND fcoopmatNV<16, gl_ScopeSubgroup, kTile, kTile>

// Where a layer's binary16 weights B (NMC_PADDED(inputs) rows of `columns`) are read from.
struct Weights {
    uint shared_first;  // in shared_weights, where kSharedWeights != 0
    uint model_first;   // in model_halves otherwise
    uint columns;
};

// The K x N tile of B whose first row is k and first column n.
void load_weights(out NMC_OPERAND b, Weights w, uint k, uint n) {
    if (kSharedWeights != 0u)
        coopMatLoadNV(b, shared_weights, w.shared_first + k * w.columns + n, w.columns, false);
    else
        coopMatLoadNV(b, model_halves, w.model_first + k * w.columns + n, w.columns, false);
}

// The 16 x 16 matrix whose every row holds value(first + c) in column c (0 past `valid` columns), through the
// subgroup's scratch tile. `kind`: 0 a layer's scales, 1 its biases, 2 the channel ranges' lo, 3 their hi - lo.
NMC_ACCUMULATOR column_values(uint kind, uint first, uint valid) {
    const uint tile = gl_SubgroupID * kTile * kTile;
    subgroupBarrier();  // the tile's previous reads are done
    [[unroll]] for (uint i = gl_SubgroupInvocationID; i < kTile * kTile; i += kSubgroup) {
        const uint c = i % kTile;
        float value = 0.0;
        if (c < valid) {
            if (kind < 2u) {
                value = nmc_float(first + c);
            } else {
                const uint range = nmc_word(NMC_HEADER_CHANNEL_RANGES) + 2u * (first + c);
                precise float span = nmc_float(range + 1u) - nmc_float(range);
                value = kind == 2u ? nmc_float(range) : span;
            }
        }
        scratch[tile + i] = value;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    NMC_ACCUMULATOR m;
    coopMatLoadNV(m, scratch, tile, kTile, false);
    return m;
}

// The 16 texels x 16 channels tile `values` (rows: texels from `first_texel`, columns: channels from
// `first_channel`, `valid` of them) into the output planes, through the subgroup's scratch tile: 16 invocations write
// one channel's 16 consecutive texels.
void store_outputs(NMC_ACCUMULATOR values, uint first_channel, uint valid, uint first_texel, uint count, bool matches) {
    const uint tile = gl_SubgroupID * kTile * kTile;
    subgroupBarrier();
    coopMatStoreNV(values, scratch, tile, kTile, false);  // element (texel r, channel c) at r * 16 + c
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint i = gl_SubgroupInvocationID; i < kTile * kTile; i += kSubgroup) {
        const uint r = i % kTile;
        const uint c = i / kTile;
        const uint t = first_texel + r;
        if (c < valid && t < count)
            output_values[(first_channel + c) * range.plane_stride + t] =
                matches ? scratch[tile + r * kTile + c] : uintBitsToFloat(0x7FC00000u);
    }
}

void main() {
    const uint local = gl_LocalInvocationID.x;
    // What every subgroup reads: where they fit, the weights.
    const uint layers = nmc_layer_count();
    if (kSharedWeights != 0u) {
        uint to = 0u;
        [[unroll]] for (uint l = 0u; l < layers; ++l) {
            const uint from = 2u * nmc_word(NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS + NMC_LAYER_WEIGHTS_HALF);
            const uint count = NMC_PADDED(nmc_width(l)) * NMC_PADDED(nmc_width(l + 1u));
            for (uint i = local; i < count; i += kRows) shared_weights[to + i] = model_halves[from + i];
            to += count;
        }
    }
    barrier();
    const uint width = max(1u, nmc_word(NMC_HEADER_WIDTH) >> range.mip);
    const uint count = width * range.row_count;
    const uint tables = NMC_HEADER_MIPS + range.mip * NMC_MIP_WORDS;
    const uint u_table = nmc_word(tables + NMC_MIP_U_TABLE);
    const uint v_table = nmc_word(tables + NMC_MIP_V_TABLE);
    // A buffer of another layout or shape (nmc_model_matches) gives NaN, as nmc_decode_texel does.
    const bool matches = nmc_model_matches();
    const uint input_width = nmc_width(0u);
    const uint outputs = nmc_width(layers);
    const uint subgroup_first = gl_SubgroupID * kSubgroup;  // the subgroup's texels within the block

    for (uint block = 0u; block < kBlocks; ++block) {
        const uint block_first = (gl_WorkGroupID.x * kBlocks + block) * kRows;
        if (block_first >= count) break;  // uniform: the whole workgroup leaves
        // Layer 0's inputs of this invocation's texel (past the chunk's end: its last texel, never stored).
        const uint texel = min(block_first + local, count - 1u);
        nmc_layer0_input(nmc_float(u_table + texel % width), nmc_float(v_table + range.first_row + texel / width),
                         range.mip);
        [[unroll]] for (uint i = input_width; i < kInputPadded; ++i) NMC_STORE_INPUT(i, 0.0);
        barrier();

        // X of the subgroup's rows 0-15 (x0) and 16-31 (x1), a tile per 16 inputs.
        NMC_OPERAND x0[8];
        NMC_OPERAND x1[8];
        [[unroll]] for (uint k = 0u; k < kInputPadded / kTile; ++k) {
            coopMatLoadNV(x0[k], staging, k * kTile * kRows + subgroup_first, kRows, true);
            coopMatLoadNV(x1[k], staging, k * kTile * kRows + subgroup_first + kTile, kRows, true);
        }
        Weights w = Weights(0u, 0u, 0u);
        [[unroll]] for (uint l = 0u; l < layers; ++l) {
            const uint layer = NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS;
            const NmcLayer constants = nmc_layer(layer);
            const uint k_tiles = NMC_PADDED(nmc_width(l)) / kTile;
            const uint width_out = nmc_width(l + 1u);
            const uint n_tiles = NMC_PADDED(width_out) / kTile;
            w.model_first = 2u * nmc_word(layer + NMC_LAYER_WEIGHTS_HALF);
            w.columns = n_tiles * kTile;
            NMC_OPERAND y0[8];
            NMC_OPERAND y1[8];
            [[unroll]] for (uint n = 0u; n < n_tiles; ++n) {
                NMC_ACCUMULATOR s0 = NMC_ACCUMULATOR(0.0);
                NMC_ACCUMULATOR s1 = NMC_ACCUMULATOR(0.0);
                [[unroll]] for (uint k = 0u; k < k_tiles; ++k) {
                    NMC_OPERAND b;
                    load_weights(b, w, k * kTile, n * kTile);
                    s0 = coopMatMulAddNV(x0[k], b, s0);
                    s1 = coopMatMulAddNV(x1[k], b, s1);
                }
                // Per-column values as matrices laid out as the sums are: 0 * B + C, C their rows loaded from
                // the scratch tile (an exact sum), B this tile's weights, the 0 a layer input times 0.
                const uint valid = min(kTile, width_out - min(width_out, n * kTile));
                NMC_OPERAND b_last;
                load_weights(b_last, w, 0u, n * kTile);
                const NMC_OPERAND zero = x0[0] * float16_t(0.0);
                const NMC_ACCUMULATOR scales =
                    coopMatMulAddNV(zero, b_last, column_values(0u, constants.scales + n * kTile, valid));
                const NMC_ACCUMULATOR biases =
                    coopMatMulAddNV(zero, b_last, column_values(1u, constants.biases + n * kTile, valid));
                // spec 8.6: y = acc * scale + bias, a multiply and then an add (columns past the outputs: 0).
                [[unroll]] for (uint e = 0u; e < s0.length(); ++e) {
                    precise float p0 = s0[e] * scales[e];
                    precise float p1 = s1[e] * scales[e];
                    precise float q0 = p0 + biases[e];
                    precise float q1 = p1 + biases[e];
                    s0[e] = q0;
                    s1[e] = q1;
                }
                if (l + 1u < layers) {
                    // Activated and rounded to E4M3: exact in binary16, the next layer's X.
                    [[unroll]] for (uint e = 0u; e < s0.length(); ++e) {
                        s0[e] = nmc_hidden_activation(constants, s0[e]);
                        s1[e] = nmc_hidden_activation(constants, s1[e]);
                    }
                    y0[n] = NMC_OPERAND(s0);
                    y1[n] = NMC_OPERAND(s1);
                } else {
                    // spec 8.7: value = lo + (hi - lo) * min(max(o, 0), 1), then each channel's plane.
                    const NMC_ACCUMULATOR lo = coopMatMulAddNV(zero, b_last, column_values(2u, n * kTile, valid));
                    const NMC_ACCUMULATOR span = coopMatMulAddNV(zero, b_last, column_values(3u, n * kTile, valid));
                    [[unroll]] for (uint e = 0u; e < s0.length(); ++e) {
                        precise float r0 = span[e] * nmc_min(nmc_max(s0[e], 0.0), 1.0);
                        precise float r1 = span[e] * nmc_min(nmc_max(s1[e], 0.0), 1.0);
                        precise float v0 = lo[e] + r0;
                        precise float v1 = lo[e] + r1;
                        s0[e] = v0;
                        s1[e] = v1;
                    }
                    store_outputs(s0, n * kTile, valid, block_first + subgroup_first, count, matches);
                    store_outputs(s1, n * kTile, valid, block_first + subgroup_first + kTile, count, matches);
                }
            }
            if (l + 1u < layers) {
                [[unroll]] for (uint n = 0u; n < n_tiles; ++n) {
                    x0[n] = y0[n];
                    x1[n] = y1[n];
                }
            }
            w.shared_first += k_tiles * kTile * w.columns;
        }
        barrier();  // staging is rewritten by the next block
    }
}
