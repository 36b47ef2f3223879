// The device's float32 multiply-add rate through Vulkan: each invocation runs eight independent chains of fma.
#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) writeonly restrict buffer Output {
    float values[];
};
layout(push_constant) uniform Work {
    uint iterations;
} work;

void main() {
    const float start = float(gl_GlobalInvocationID.x) * 1e-9;
    float a[8];
    [[unroll]] for (int c = 0; c < 8; ++c) a[c] = start + float(c);
    for (uint i = 0u; i < work.iterations; ++i) {
        [[unroll]] for (int r = 0; r < 4; ++r) {
            [[unroll]] for (int c = 0; c < 8; ++c) a[c] = fma(a[c], 0.9999999, 1e-7);
        }
    }
    float sum = 0.0;
    [[unroll]] for (int c = 0; c < 8; ++c) sum += a[c];
    values[gl_GlobalInvocationID.x] = sum;
}
