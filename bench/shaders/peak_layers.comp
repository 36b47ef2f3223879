// A 64 -> 64 layer on tensor cores, applied over and over to each subgroup's 32 rows: the ceiling of the
// cooperative-matrix decoder's design choices without its sampling. kStaging 0 keeps the layer vectors in registers
// as 16 x 16 tiles (the float32 sums converted to binary16 tiles for the next layer); 1 passes them through shared
// memory as decode_mip_coopmat.comp does (sums stored, each invocation activating its own row). kActivation 1 applies
// spec 8.6's binary16 activation (nmc_hidden_activation_value) to y = sum * 0.01 + 0.1, 0 none (the sums then grow
// without bound: timing only).
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#include "nmc_decode.glsl"

layout(local_size_x_id = 2) in;  // kRows: 32 rows per subgroup of 32
layout(constant_id = 0) const uint kStaging = 0u;
layout(constant_id = 1) const uint kActivation = 1u;
layout(constant_id = 2) const uint kRows = 128u;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Output {
    float values[];
};
layout(push_constant) uniform Work {
    uint iterations;
} work;

#define ACCUMULATOR fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define OPERAND fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
const uint kWidth = 64u;
const float kOneThird = 0.333251953125;  // f16(1/3)

shared float16_t weights[kWidth * kWidth];       // B: row k, column n at k * 64 + n
shared float16_t staged_inputs[kRows * kWidth];  // kStaging 1: X, input i of row r at i * kRows + r
shared float staged_sums[kStaging * kRows * kWidth + 1u];  // kStaging 1: the sums, output n of row r at n * kRows + r

float activated(float sum) {
    precise float y = sum * 0.01 + 0.1;
    return kActivation != 0u ? nmc_hidden_activation_value(y, true, kOneThird) : sum;
}

void main() {
    const uint local = gl_LocalInvocationID.x;
    for (uint i = local; i < kWidth * kWidth; i += kRows) weights[i] = float16_t(float((i * 37u) % 17u) * 0.002);
    for (uint i = local; i < kWidth * kRows; i += kRows)
        staged_inputs[i] = float16_t(float(((i % kRows) % 32u * 7u + i / kRows) % 5u) * 0.25);
    barrier();
    const uint first_row = gl_SubgroupID * 32u;
    if (kStaging == 0u) {
        OPERAND x0[4];
        OPERAND x1[4];
        [[unroll]] for (uint k = 0u; k < 4u; ++k) {
            coopMatLoadNV(x0[k], staged_inputs, k * 16u * kRows + first_row, kRows, true);
            coopMatLoadNV(x1[k], staged_inputs, k * 16u * kRows + first_row + 16u, kRows, true);
        }
        for (uint it = 0u; it < work.iterations; ++it) {
            OPERAND y0[4];
            OPERAND y1[4];
            [[unroll]] for (uint n = 0u; n < 4u; ++n) {
                ACCUMULATOR s0 = ACCUMULATOR(0.0);
                ACCUMULATOR s1 = ACCUMULATOR(0.0);
                [[unroll]] for (uint k = 0u; k < 4u; ++k) {
                    OPERAND b;
                    coopMatLoadNV(b, weights, k * 16u * kWidth + n * 16u, kWidth, false);
                    s0 = coopMatMulAddNV(x0[k], b, s0);
                    s1 = coopMatMulAddNV(x1[k], b, s1);
                }
                [[unroll]] for (uint e = 0u; e < s0.length(); ++e) {
                    s0[e] = activated(s0[e]);
                    s1[e] = activated(s1[e]);
                }
                y0[n] = OPERAND(s0);
                y1[n] = OPERAND(s1);
            }
            x0 = y0;
            x1 = y1;
        }
        // The rows' final vectors, row-major (row * 64 + input), to compare the variants.
        const uint row = gl_WorkGroupID.x * kRows + first_row;
        [[unroll]] for (uint k = 0u; k < 4u; ++k) {
            coopMatStoreNV(ACCUMULATOR(x0[k]), values, row * kWidth + k * 16u, kWidth, false);
            coopMatStoreNV(ACCUMULATOR(x1[k]), values, (row + 16u) * kWidth + k * 16u, kWidth, false);
        }
    } else {
        for (uint it = 0u; it < work.iterations; ++it) {
            [[unroll]] for (uint n = 0u; n < 4u; ++n) {
                ACCUMULATOR s0 = ACCUMULATOR(0.0);
                ACCUMULATOR s1 = ACCUMULATOR(0.0);
                [[unroll]] for (uint k = 0u; k < 4u; ++k) {
                    OPERAND a0;
                    OPERAND a1;
                    OPERAND b;
                    coopMatLoadNV(b, weights, k * 16u * kWidth + n * 16u, kWidth, false);
                    coopMatLoadNV(a0, staged_inputs, k * 16u * kRows + first_row, kRows, true);
                    coopMatLoadNV(a1, staged_inputs, k * 16u * kRows + first_row + 16u, kRows, true);
                    s0 = coopMatMulAddNV(a0, b, s0);
                    s1 = coopMatMulAddNV(a1, b, s1);
                }
                coopMatStoreNV(s0, staged_sums, n * 16u * kRows + first_row, kRows, true);
                coopMatStoreNV(s1, staged_sums, n * 16u * kRows + first_row + 16u, kRows, true);
            }
            barrier();
            [[unroll]] for (uint n = 0u; n < kWidth; ++n)
                staged_inputs[n * kRows + local] = float16_t(activated(staged_sums[n * kRows + local]));
            barrier();
        }
        [[unroll]] for (uint n = 0u; n < kWidth; ++n)
            values[gl_GlobalInvocationID.x * kWidth + n] = float(staged_inputs[n * kRows + local]);
    }
}
