// nmc_decode.glsl: docs/format-spec.md section 8.1-8.7 in GLSL, for engines and for nmc's own compute shaders.
// Include it in any shader stage (GL_GOOGLE_include_directive) after optionally defining:
//   NMC_MODEL_SET, NMC_MODEL_BINDING  the descriptor of the model buffer (default set 0, binding 0)
//   NMC_MAX_WIDTH                     an upper bound of the pack's widest layer (default 256, spec 9's limit;
//                                     GpuModel::max_width on the host gives the pack's own; smaller is faster; a pack
//                                     wider than it decodes to NaN)
//   NMC_CONSTANT_ID                   the first of the NMC_SHAPE_CONSTANTS specialization constant ids this file
//                                     declares (default NMC_DEFAULT_CONSTANT_ID, 100): the network's shape (GpuModel::shape). Set them when
//                                     the pipeline is created and every loop of the network has a fixed trip count:
//                                     the driver unrolls it and keeps each layer's vectors in registers. Left at 0,
//                                     the shape is read from the buffer (any pack; much slower). A buffer of another
//                                     shape than the constants decodes to NaN.
// and call nmc_decode_texel(u, v, mip, channels): the pack's C channel values at (u, v) of mip `mip`, exactly the
// values of the CPU reference decoder's portable kernel (every float32 and binary16 rounding the spec's), or
// nmc_decode_trilinear(u, v, lod, channels) between mips (lod from nmc_level_of_detail(dFdx(uv), dFdy(uv))); then
// nmc_source_channels(texture, channels, values) for a texture's file values (normal Z, inverts, constants). The model
// buffer (runtime/vulkan/gpu_model.h builds it; layout in model_layout.h) is read-only storage, one per pack.
//
// Every arithmetic result below is `precise` (SPIR-V NoContraction): spec 2 forbids fusing a multiply and an add
// that it writes as two operations, and the roundings done with float32 steps rely on each being exact IEEE. The one
// fused operation, fma(w, x, acc) in the layers' sums, is exact as the spec's multiply and add: a product of an E4M3
// input and an E4M3 or Int8 weight has at most 12 significant bits, so float32 holds it without rounding.
#ifndef NMC_DECODE_GLSL
#define NMC_DECODE_GLSL

#extension GL_EXT_control_flow_attributes : require

#include "model_layout.h"

#ifndef NMC_MODEL_SET
#define NMC_MODEL_SET 0
#endif
#ifndef NMC_MODEL_BINDING
#define NMC_MODEL_BINDING 0
#endif
#ifndef NMC_MAX_WIDTH
#define NMC_MAX_WIDTH 256
#endif
#ifndef NMC_CONSTANT_ID
#define NMC_CONSTANT_ID NMC_DEFAULT_CONSTANT_ID
#endif

layout(std430, set = NMC_MODEL_SET, binding = NMC_MODEL_BINDING) readonly restrict buffer NmcModelBuffer {
    uint nmc_model[];
};
// The same buffer read four words at a time (the layers' weight quads).
layout(std430, set = NMC_MODEL_SET, binding = NMC_MODEL_BINDING) readonly restrict buffer NmcModelQuads {
    vec4 nmc_model_quads[];
};

// The network's shape (model_layout.h, NMC_SHAPE_CONSTANTS): the layer count, then the widths between layers.
layout(constant_id = NMC_CONSTANT_ID) const uint nmc_shape_layers = 0u;
layout(constant_id = NMC_CONSTANT_ID + 1) const uint nmc_shape_width0 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 2) const uint nmc_shape_width1 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 3) const uint nmc_shape_width2 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 4) const uint nmc_shape_width3 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 5) const uint nmc_shape_width4 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 6) const uint nmc_shape_width5 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 7) const uint nmc_shape_width6 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 8) const uint nmc_shape_width7 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 9) const uint nmc_shape_width8 = 0u;
layout(constant_id = NMC_CONSTANT_ID + 10) const uint nmc_shape_features = 0u;

uint nmc_word(uint i) {
    return nmc_model[i];
}
float nmc_float(uint i) {
    return uintBitsToFloat(nmc_model[i]);
}

// The network's layer count L.
uint nmc_layer_count() {
    return nmc_shape_layers != 0u ? nmc_shape_layers : nmc_word(NMC_HEADER_LAYER_COUNT);
}

// The latent feature count F.
uint nmc_feature_count() {
    return nmc_shape_layers != 0u ? nmc_shape_features : nmc_word(NMC_HEADER_FEATURE_COUNT);
}

// Width l of the network: layer l's input width for l < L, the last layer's output width (C) for l = L.
uint nmc_width(uint l) {
    if (nmc_shape_layers == 0u) {
        const uint layers = nmc_word(NMC_HEADER_LAYER_COUNT);
        return l < layers ? nmc_word(NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS + NMC_LAYER_INPUT_WIDTH)
                          : nmc_word(NMC_HEADER_LAYERS + (layers - 1u) * NMC_LAYER_WORDS + NMC_LAYER_OUTPUT_WIDTH);
    }
    switch (l) {
        case 0u: return nmc_shape_width0;
        case 1u: return nmc_shape_width1;
        case 2u: return nmc_shape_width2;
        case 3u: return nmc_shape_width3;
        case 4u: return nmc_shape_width4;
        case 5u: return nmc_shape_width5;
        case 6u: return nmc_shape_width6;
        case 7u: return nmc_shape_width7;
        default: return nmc_shape_width8;
    }
}

// Whether the buffer is one this shader decodes: its layout version, a widest layer within NMC_MAX_WIDTH, and the
// shape of the specialization constants where they are set.
bool nmc_model_matches() {
    if (nmc_word(NMC_HEADER_LAYOUT_VERSION) != NMC_MODEL_LAYOUT_VERSION ||
        nmc_word(NMC_HEADER_MAX_WIDTH) > uint(NMC_MAX_WIDTH))
        return false;
    if (nmc_shape_layers == 0u) return true;
    if (nmc_word(NMC_HEADER_LAYER_COUNT) != nmc_shape_layers ||
        nmc_word(NMC_HEADER_FEATURE_COUNT) != nmc_shape_features)
        return false;
    bool same = true;
    [[unroll]] for (uint l = 0u; l < nmc_shape_layers; ++l) {
        const uint layer = NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS;
        same = same && nmc_word(layer + NMC_LAYER_INPUT_WIDTH) == nmc_width(l) &&
               nmc_word(layer + NMC_LAYER_OUTPUT_WIDTH) == nmc_width(l + 1u);
    }
    return same;
}

// min and max as the reference decoder computes them (the second operand when the two compare equal).
float nmc_min(float a, float b) {
    return a < b ? a : b;
}
float nmc_max(float a, float b) {
    return a > b ? a : b;
}

// spec 2.1's E4M3 rounding of an x with |x| <= 448 or a NaN (kept): the nearest E4M3 value, ties to even, by integer
// operations on the bits. Both roundings are computed and one selected, without branches (a third of the activation's
// time on NVIDIA's tensor-core path: bench/vulkan_peak_bench.cpp). A NaN is returned as it is: the mantissa rounding
// would carry NVIDIA's NaN, 0x7FFFFFFF, into the sign bit.
float nmc_round_fp8_unsaturated(float x) {
    const uint b = floatBitsToUint(x);
    const uint magnitude = b & 0x7FFFFFFFu;
    // below 2^-6: multiples of 2^-9, ties to even; float32's step in [2^14, 2^15) is 2^-9.
    precise float small = (uintBitsToFloat(magnitude) + 16384.0) - 16384.0;
    const uint large = (magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) & ~0xFFFFFu;  // 3 mantissa bits, ties to even
    const uint rounded = (magnitude < 0x3C800000u ? floatBitsToUint(small) : large) | (b & 0x80000000u);
    return magnitude > 0x7F800000u ? x : uintBitsToFloat(rounded);
}

// spec 2.1: the nearest E4M3 value of x, ties to even; beyond 448 saturates; a NaN gives 0x7FC00000.
float nmc_round_fp8(float x) {
    const uint b = floatBitsToUint(x);
    const uint magnitude = b & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return uintBitsToFloat(0x7FC00000u);
    if (magnitude > 0x43E00000u) return uintBitsToFloat(0x43E00000u | (b & 0x80000000u));  // above 448: 448
    return nmc_round_fp8_unsaturated(x);
}

// x rounded to 10 mantissa bits (binary16's precision), ties to even, keeping its float32 exponent: f16(x) (spec 2.2)
// wherever 2^-14 <= |x| <= 65504 holds after rounding, by integer operations on the bits.
float nmc_round_mantissa10(float x) {
    const uint b = floatBitsToUint(x);
    return uintBitsToFloat((b + 0xFFFu + ((b >> 13) & 1u)) & ~0x1FFFu);
}

// spec 2.2: f16(x) of a float32 x: nearest, ties to even; magnitudes from 65504 up saturate to 65504. Returned as
// float32 (exact).
float nmc_round_f16(float x) {
    const uint b = floatBitsToUint(x);
    const uint magnitude = b & 0x7FFFFFFFu;
    if (magnitude >= 0x477FE000u) return uintBitsToFloat(0x477FE000u | (b & 0x80000000u));  // 65504
    if (magnitude >= 0x38800000u) return nmc_round_mantissa10(x);
    // below 2^-14: binary16 subnormals, multiples of 2^-24; float32's step in [0.5, 1) is 2^-24.
    precise float t = (uintBitsToFloat(magnitude) + 0.5) - 0.5;
    return uintBitsToFloat(floatBitsToUint(t) | (b & 0x80000000u));
}

// spec 8.6: the activation of a hidden layer's output y, hgelu_clamped, rounded to E4M3 (the next layer's input).
// float32 arithmetic: t = min(max(y * 0.333333343 + 0.5, 0), 1); a = min(y, 3) * t.
// binary16 arithmetic: h = f16(y); t = min(max(f16(h * c + 0.5), 0), 1); a = f16(min(h, 3) * t), with c = f16(1/3).
// The binary16 steps round with nmc_round_mantissa10, exact wherever the result matters:
// - h: y is clamped to +-65504 first (f16's saturation); where |h| < 2^-14 the exact rounding would give a multiple
//   of 2^-24 instead, but then |a| < 2^-14 and the E4M3 rounding gives a zero of h's sign either way;
// - t = f16(min(max(s, 0), 1)), the same value since f16 is monotonic and keeps 0 and 1; s = h * c + 0.5 is rounded to
//   float32 first (h * c is exact), which never changes its binary16 rounding for this c (checked on every binary16 h:
//   tests/vulkan/shader_arithmetic_test.cpp); where 0 < s < 2^-14, h is near -1.5 and |a| < 2^-13 rounds to -0 again;
// - a: min(h, 3) * t is exact in float32 (two 11-bit significands), and below 2^-14 the E4M3 zero follows again.
float nmc_hidden_activation_value(float y, bool binary16, float one_third) {
    float a;
    if (binary16) {
        const float h = nmc_round_mantissa10(nmc_min(nmc_max(y, -65504.0), 65504.0));
        precise float s = h * one_third + 0.5;
        const float t = nmc_round_mantissa10(nmc_min(nmc_max(s, 0.0), 1.0));
        precise float product = nmc_min(h, 3.0) * t;
        a = nmc_round_mantissa10(product);
    } else {
        precise float s = y * one_third + 0.5;
        const float t = nmc_min(nmc_max(s, 0.0), 1.0);
        precise float product = nmc_min(y, 3.0) * t;
        a = product;
    }
    return nmc_round_fp8_unsaturated(a);  // |a| <= 3, or NaN for an infinite y in float32 arithmetic
}

// spec 8.3: a texel coordinate wrapped (x mod size, non-negative) or clamped to 0 .. size-1.
int nmc_address(int x, int size, uint mode) {
    if (mode == NMC_ADDRESS_CLAMP) return clamp(x, 0, size - 1);
    return x >= 0 ? x % size : size - 1 - ((-x - 1) % size);
}

// spec 6: code q of feature i (= texel * F + j) of a level's LSB-first bit stream.
uint nmc_code(uint codes, uint per_word_log2, uint bits, uint i) {
    const uint word = nmc_model[codes + (i >> per_word_log2)];
    const uint shift = (i & ((1u << per_word_log2) - 1u)) * bits;
    return (word >> shift) & ((1u << bits) - 1u);
}

// A layer's input or output vector, and the one before it (8.5-8.6).
// Four values a vec4 (value i at [i / 4][i % 4]), so that the layers' sums read their inputs four at a time.
vec4 nmc_vectors[2][(NMC_MAX_WIDTH + 3) / 4];

// Where nmc_layer0_input puts input i of layer 0 (already rounded to E4M3); a shader that keeps layer inputs elsewhere
// (decode_mip_coopmat.comp: shared memory) defines it before including this file.
#ifndef NMC_STORE_INPUT
#define NMC_STORE_INPUT(i, value) nmc_vectors[0][(i) >> 2][(i) & 3u] = (value)
#endif

// spec 8.2-8.3 for level k at (u, v): the F sampled features, rounded to E4M3 (8.6), as layer 0's inputs first ..
// first + F - 1 (NMC_STORE_INPUT); returns (px, py).
vec2 nmc_sample_level(uint k, float u, float v, uint first) {
    const uint level = NMC_HEADER_LEVELS + k * NMC_LEVEL_WORDS;
    const int width = int(nmc_word(level + NMC_LEVEL_WIDTH));
    const int height = int(nmc_word(level + NMC_LEVEL_HEIGHT));
    const uint bits = nmc_word(level + NMC_LEVEL_BITS);
    const uint per_word_log2 = nmc_word(level + NMC_LEVEL_CODES_PER_WORD_LOG2);
    const uint codes = nmc_word(level + NMC_LEVEL_CODES);
    const uint values = nmc_word(level + NMC_LEVEL_VALUES);
    const uint mode = nmc_word(NMC_HEADER_ADDRESS_MODE);
    const uint features = nmc_feature_count();
    const bool binary16 = nmc_word(NMC_HEADER_ARITHMETIC) == NMC_ARITHMETIC_BINARY16;

    // 8.2: px = u * w_k - 0.5, py = v * h_k - 0.5; x0 = floor(px), fx = px - x0.
    precise float px = u * float(width) - 0.5;
    precise float py = v * float(height) - 0.5;
    const float x0 = floor(px);
    const float y0 = floor(py);
    precise float fx = px - x0;
    precise float fy = py - y0;
    // 8.3: the four texels, wrapped or clamped; the weights (rounded to binary16 in that arithmetic).
    const int xa = nmc_address(int(x0), width, mode);
    const int xb = nmc_address(int(x0) + 1, width, mode);
    const int ya = nmc_address(int(y0), height, mode);
    const int yb = nmc_address(int(y0) + 1, height, mode);
    precise float gx = 1.0 - fx;
    precise float gy = 1.0 - fy;
    precise float w00 = gx * gy;
    precise float w10 = fx * gy;
    precise float w01 = gx * fy;
    precise float w11 = fx * fy;
    if (binary16) {
        w00 = nmc_round_f16(w00);
        w10 = nmc_round_f16(w10);
        w01 = nmc_round_f16(w01);
        w11 = nmc_round_f16(w11);
    }
    const uint ta = (uint(ya) * uint(width) + uint(xa)) * features;
    const uint tb = (uint(ya) * uint(width) + uint(xb)) * features;
    const uint tc = (uint(yb) * uint(width) + uint(xa)) * features;
    const uint td = (uint(yb) * uint(width) + uint(xb)) * features;
    [[unroll]] for (uint j = 0u; j < features; ++j) {
        const float a = nmc_float(values + nmc_code(codes, per_word_log2, bits, ta + j));
        const float b = nmc_float(values + nmc_code(codes, per_word_log2, bits, tb + j));
        const float c = nmc_float(values + nmc_code(codes, per_word_log2, bits, tc + j));
        const float d = nmc_float(values + nmc_code(codes, per_word_log2, bits, td + j));
        // value = ((w00 * a + w10 * b) + w01 * c) + w11 * d, every operation rounded separately.
        precise float value = ((w00 * a + w10 * b) + w01 * c) + w11 * d;
        NMC_STORE_INPUT(first + j, nmc_round_fp8(value));  // 8.6: layer inputs rounded to E4M3
    }
    return vec2(px, py);
}

// spec 8.4: saw(t) = 2 * (t - floor(t)) - 1.
float nmc_saw(float t) {
    precise float r = 2.0 * (t - floor(t)) - 1.0;
    return r;
}

bool nmc_binary16() {
    return nmc_word(NMC_HEADER_ARITHMETIC) == NMC_ARITHMETIC_BINARY16;
}

// spec 8.1-8.6: layer 0's input x' (rounded to E4M3) of query (u, v, mip), inputs 0 .. input_width-1 stored with
// NMC_STORE_INPUT (by default into nmc_vectors[0]).
void nmc_layer0_input(float u, float v, uint mip) {
    const uint features = nmc_feature_count();
    const uint levels = nmc_word(NMC_HEADER_LEVEL_COUNT);
    // 8.1: k0 = min(m, K - 2), k1 = k0 + 1. 8.5: x = features of k0, features of k1, the positional encoding of
    // k0's position (8.4), the LOD input m * 0.25, zeros; 8.6: each rounded to E4M3.
    const uint k0 = min(mip, levels - 2u);
    const vec2 position = nmc_sample_level(k0, u, v, 0u);
    nmc_sample_level(k0 + 1u, u, v, features);
    [[unroll]] for (uint o = 0u; o < 3u; ++o) {
        const float s = float(1u << o);
        precise float px = position.x * s;
        precise float py = position.y * s;
        precise float px4 = px + 0.25;
        precise float py4 = py + 0.25;
        NMC_STORE_INPUT(2u * features + 4u * o + 0u, nmc_round_fp8(nmc_saw(px)));
        NMC_STORE_INPUT(2u * features + 4u * o + 1u, nmc_round_fp8(nmc_saw(py)));
        NMC_STORE_INPUT(2u * features + 4u * o + 2u, nmc_round_fp8(nmc_saw(px4)));
        NMC_STORE_INPUT(2u * features + 4u * o + 3u, nmc_round_fp8(nmc_saw(py4)));
    }
    precise float lod = float(mip) * 0.25;
    NMC_STORE_INPUT(2u * features + 12u, nmc_round_fp8(lod));
    const uint input_width = nmc_width(0u);
    [[unroll]] for (uint i = 2u * features + 13u; i < input_width; ++i) NMC_STORE_INPUT(i, 0.0);
}

// A layer's per-output constants and the activation's arithmetic, read from the model buffer once per layer rather than
// once per output.
struct NmcLayer {
    uint scales;      // word offsets of the layer's scales and biases
    uint biases;
    bool binary16;    // the activation's arithmetic (spec 5.6)
    float one_third;  // its constant c
};

NmcLayer nmc_layer(uint layer) {
    const bool binary16 = nmc_binary16();
    return NmcLayer(nmc_word(layer + NMC_LAYER_SCALES), nmc_word(layer + NMC_LAYER_BIASES), binary16,
                    nmc_float(binary16 ? NMC_HEADER_ONE_THIRD_BINARY16 : NMC_HEADER_ONE_THIRD_FLOAT32));
}

// spec 8.6 after a layer's sum: y = acc * scale + bias (a multiply, then an add) for output n.
float nmc_layer_output(NmcLayer layer, uint n, float acc) {
    precise float y = acc * nmc_float(layer.scales + n) + nmc_float(layer.biases + n);
    return y;
}

// spec 8.6: a hidden layer's output y activated and rounded to E4M3, the next layer's input.
float nmc_hidden_activation(NmcLayer layer, float y) {
    return nmc_hidden_activation_value(y, layer.binary16, layer.one_third);
}

// spec 8.7: value = lo + (hi - lo) * min(max(o, 0), 1) for pack channel c.
float nmc_output_transform(float o, uint c) {
    const uint range = nmc_word(NMC_HEADER_CHANNEL_RANGES) + 2u * c;
    const float lo = nmc_float(range);
    const float hi = nmc_float(range + 1u);
    precise float value = lo + (hi - lo) * nmc_min(nmc_max(o, 0.0), 1.0);
    return value;
}

// spec 8.1-8.7: the C pack-channel values of query (u, v, mip) into channels[0 .. C-1]. mip must be below the
// pack's mip count and |u|, |v| at most 65536.
void nmc_decode_texel(float u, float v, uint mip, out float channels[16]) {
    // A buffer of another layout or shape, or a pack wider than NMC_MAX_WIDTH, decodes to NaN, not out of bounds.
    if (!nmc_model_matches()) {
        for (uint c = 0u; c < 16u; ++c) channels[c] = uintBitsToFloat(0x7FC00000u);
        return;
    }
    nmc_layer0_input(u, v, mip);
    const uint layers = nmc_layer_count();
    [[unroll]] for (uint l = 0u; l < layers; ++l) {
        const uint layer = NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS;
        const uint inputs = nmc_width(l);
        const uint outputs = nmc_width(l + 1u);
        const uint quads = nmc_word(layer + NMC_LAYER_WEIGHT_QUADS) >> 2;
        const NmcLayer constants = nmc_layer(layer);
        const uint from = l & 1u;
        // Four outputs at a time, one vec4 of weights per input; each output's sum runs in input order:
        // acc[n] = sum over i of W[n][i] * x'[i] (float32). The inputs come four at a time, then the last I mod 4. The
        // loops over outputs stay loops: unrolled, a layer is thousands of instructions, and decoding then waits on
        // instruction fetches (measured on the H200: docs/benchmarks.md).
        const uint groups = inputs >> 2;
        for (uint q = 0u; q < (outputs + 3u) / 4u; ++q) {
            const uint w = quads + q * inputs;
            precise vec4 acc = vec4(0.0);
            for (uint g = 0u; g < groups; ++g) {
                const vec4 x = nmc_vectors[from][g];
                acc = fma(nmc_model_quads[w + 4u * g], vec4(x.x), acc);
                acc = fma(nmc_model_quads[w + 4u * g + 1u], vec4(x.y), acc);
                acc = fma(nmc_model_quads[w + 4u * g + 2u], vec4(x.z), acc);
                acc = fma(nmc_model_quads[w + 4u * g + 3u], vec4(x.w), acc);
            }
            [[unroll]] for (uint i = 4u * groups; i < inputs; ++i)
                acc = fma(nmc_model_quads[w + i], vec4(nmc_vectors[from][i >> 2][i & 3u]), acc);
            vec4 next = vec4(0.0);
            [[unroll]] for (uint k = 0u; k < 4u; ++k) {
                const uint n = 4u * q + k;
                if (n >= outputs) break;
                const float y = nmc_layer_output(constants, n, acc[k]);
                if (l + 1u < layers) {
                    next[k] = nmc_hidden_activation(constants, y);
                } else {
                    channels[n] = nmc_output_transform(y, n);
                }
            }
            if (l + 1u < layers) nmc_vectors[from ^ 1u][q] = next;
        }
    }
}

// Inference on sample: the level of detail of a sample whose uv changes by duv_dx and duv_dy from one pixel to the
// next (dFdx(uv), dFdy(uv) in a fragment shader), as GPUs choose a texture's mip: log2 of the larger footprint in
// mip-0 texels, clamped to 0 .. M-1.
float nmc_level_of_detail(vec2 duv_dx, vec2 duv_dy) {
    const vec2 size = vec2(float(nmc_word(NMC_HEADER_WIDTH)), float(nmc_word(NMC_HEADER_HEIGHT)));
    const vec2 dx = duv_dx * size;
    const vec2 dy = duv_dy * size;
    const float mips = float(nmc_word(NMC_HEADER_MIP_COUNT));
    return clamp(0.5 * log2(max(max(dot(dx, dx), dot(dy, dy)), 1e-12)), 0.0, mips - 1.0);
}

// Inference on sample with trilinear filtering: the pack's C channel values at (u, v) decoded at the two mips around
// `lod` (0 .. M-1) and blended by its fraction, as a GPU filters a texture across its mips (within a mip the decoded
// values already vary smoothly with u and v: the latents are sampled bilinearly). Two decodes where
// lod has a fraction, one where it is whole. Not part of the spec's bit-exact decoding (section 8 decodes whole mips).
void nmc_decode_trilinear(float u, float v, float lod, out float channels[16]) {
    const uint mips = nmc_word(NMC_HEADER_MIP_COUNT);
    const uint m0 = min(uint(floor(lod)), mips - 1u);
    const float f = lod - float(m0);
    const uint decodes = f > 0.0 && m0 + 1u < mips ? 2u : 1u;
    const uint count = nmc_word(NMC_HEADER_CHANNEL_COUNT);
    // A loop, not two calls: one copy of the decoding code in the compiled shader (it is large).
    [[dont_unroll]] for (uint i = 0u; i < decodes; ++i) {
        float values[16];
        nmc_decode_texel(u, v, m0 + i, values);
        for (uint c = 0u; c < count; ++c) channels[c] = i == 0u ? values[c] : mix(channels[c], values[c], f);
    }
}

// spec 8.8: a normal's channel values x*0.5 + 0.5, y*0.5 + 0.5, z*0.5 + 0.5 after renormalising (x, y, z). GPUs'
// square roots and divisions are not correctly rounded as spec 2 asks, so these may differ from the reference
// decoder's by a few float32 steps (at most one code of an 8-bit file, and only rarely).
vec3 nmc_normal_channels(float x, float y, float z) {
    precise float len2 = (x * x + y * y) + z * z;
    vec3 n = vec3(0.0, 0.0, 1.0);
    if (len2 > 0.0) {
        precise float r = 1.0 / sqrt(len2);
        precise vec3 scaled = vec3(x * r, y * r, z * r);
        n = scaled;
    }
    precise vec3 channels = n * 0.5 + 0.5;
    return channels;
}

// spec 8.9: an HLG-encoded texture's value peak * hlg_decode(e), hlg_decode(e) = e <= 0.5 ? (e * e) / 3
// : (exp((e - c) / a) + b) / 12. GPUs' exp and division are not correctly rounded, so this may differ from the
// reference decoder's by a few float32 steps.
float nmc_hlg_value(float e, float peak) {
    const float a = nmc_float(NMC_HEADER_HLG), b = nmc_float(NMC_HEADER_HLG + 1u), c = nmc_float(NMC_HEADER_HLG + 2u);
    precise float low = (e * e) / 3.0;
    precise float high = (exp((e - c) / a) + b) / 12.0;
    precise float value = peak * (e <= 0.5 ? low : high);
    return value;
}

// spec 8.8-8.9: the source-channel values of texture `t` (NMC_HEADER_TEXTURES) from one texel's pack values (8.7).
void nmc_source_channels(uint t, float pack[16], out float values[4]) {
    const uint texture = NMC_HEADER_TEXTURES + t * NMC_TEXTURE_WORDS;
    const uint count = nmc_word(texture + NMC_TEXTURE_CHANNEL_COUNT);
    const uint mode = nmc_word(texture + NMC_TEXTURE_NORMAL_MODE);
    vec3 normal = vec3(0.0);
    if (mode != NMC_NORMAL_NONE) {
        // x = 2 * value[a] - 1, y = 2 * value[b] - 1; z = sqrt(max((1 - x*x) - y*y, 0)) (xy) or 2 * value[c] - 1.
        precise float x = 2.0 * pack[nmc_word(texture + NMC_TEXTURE_CHANNELS + NMC_CHANNEL_PACK_CHANNEL)] - 1.0;
        precise float y = 2.0 * pack[nmc_word(texture + NMC_TEXTURE_CHANNELS + 3u + NMC_CHANNEL_PACK_CHANNEL)] - 1.0;
        precise float z_xy = sqrt(nmc_max((1.0 - x * x) - y * y, 0.0));
        precise float z_xyz = 2.0 * pack[nmc_word(texture + NMC_TEXTURE_CHANNELS + 6u + NMC_CHANNEL_PACK_CHANNEL)] - 1.0;
        normal = nmc_normal_channels(x, y, mode == NMC_NORMAL_XY ? z_xy : z_xyz);
    }
    for (uint i = 0u; i < 4u; ++i) {
        values[i] = 0.0;
        if (i >= count) continue;
        const uint channel = texture + NMC_TEXTURE_CHANNELS + 3u * i;
        const uint kind = nmc_word(channel + NMC_CHANNEL_KIND);
        float v;
        if ((kind & 0xFFu) == NMC_SOURCE_CONSTANT) {
            v = nmc_float(channel + NMC_CHANNEL_CONSTANT);
        } else if ((kind & 0xFFu) == NMC_SOURCE_NORMAL_Z) {
            v = normal.z;
        } else {
            v = mode != NMC_NORMAL_NONE && i < 3u ? normal[i] : pack[nmc_word(channel + NMC_CHANNEL_PACK_CHANNEL)];
            if ((kind & NMC_SOURCE_INVERT) != 0u) {
                precise float inverted = 1.0 - v;
                v = inverted;
            }
            if ((kind & NMC_SOURCE_HLG) != 0u) v = nmc_hlg_value(v, nmc_float(channel + NMC_CHANNEL_CONSTANT));
        }
        values[i] = v;
    }
}

// spec 8.10: the code a uint8 (max_code 255) or uint16 (65535) file stores: floor(min(max(v, 0), 1) * max + 0.5).
uint nmc_quantise_unorm(float v, float max_code) {
    precise float scaled = nmc_min(nmc_max(v, 0.0), 1.0) * max_code + 0.5;
    return uint(floor(scaled));
}

// The binary16 bits of v, rounded to nearest even; beyond binary16's range an infinity (a float16 file's value).
uint nmc_half_bits(float v) {
    const uint b = floatBitsToUint(v);
    const uint sign = (b >> 16) & 0x8000u;
    if ((b & 0x7FFFFFFFu) >= 0x477FF000u) return sign | 0x7C00u;  // 65520 and beyond round to infinity
    const float h = abs(nmc_round_f16(v));
    const uint hb = floatBitsToUint(h);
    if (h < 6.103515625e-05) return sign | uint(h * 16777216.0);  // subnormal: a multiple of 2^-24, exact
    return sign | ((((hb >> 23) - 112u) << 10) | ((hb >> 13) & 0x3FFu));
}

#endif
