// Test probe: one of nmc_decode.glsl's arithmetic steps on every input (tests/vulkan/shader_arithmetic_test.cpp).
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
#include "nmc_decode.glsl"  // its model buffer (binding 0) is declared but not used here

layout(std430, binding = 1) readonly restrict buffer Inputs {
    float inputs[];
};
layout(std430, binding = 2) writeonly restrict buffer Outputs {
    float outputs[];
};
layout(push_constant) uniform Probe {
    uint count;
    uint function;  // 0 nmc_round_fp8, 1 nmc_round_f16, 2 and 3 nmc_hidden_activation_value in binary16, float32
    float one_third;
} probe;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= probe.count) return;
    const float x = inputs[i];
    float y;
    if (probe.function == 0u) {
        y = nmc_round_fp8(x);
    } else if (probe.function == 1u) {
        y = nmc_round_f16(x);
    } else if (probe.function == 2u) {
        y = nmc_hidden_activation_value(x, true, probe.one_third);
    } else {
        y = nmc_hidden_activation_value(x, false, probe.one_third);
    }
    outputs[i] = y;
}
