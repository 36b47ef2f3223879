// The device's tensor-core rate through GL_NV_cooperative_matrix: each subgroup multiplies two 16 x 16 binary16
// matrices into eight independent float32 accumulators, over and over.
#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) restrict buffer Output {
    float values[];
};
layout(std430, set = 0, binding = 1) readonly restrict buffer Operands {
    float16_t operands[];
};
layout(push_constant) uniform Work {
    uint iterations;
} work;

#define ACCUMULATOR fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define OPERAND fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>

void main() {
    OPERAND a;
    OPERAND b;
    coopMatLoadNV(a, operands, 0u, 16u, false);
    coopMatLoadNV(b, operands, 256u, 16u, false);
    ACCUMULATOR sums[8];
    [[unroll]] for (int c = 0; c < 8; ++c) sums[c] = ACCUMULATOR(float(c));
    for (uint i = 0u; i < work.iterations; ++i) {
        [[unroll]] for (int c = 0; c < 8; ++c) sums[c] = coopMatMulAddNV(a, b, sums[c]);
    }
    ACCUMULATOR total = sums[0];
    [[unroll]] for (int c = 1; c < 8; ++c) total = total + sums[c];
    const uint subgroup = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopMatStoreNV(total, values, subgroup * 256u, 16u, false);
}
