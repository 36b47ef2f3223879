// The GPU model buffer: one pack as the runtime's shaders read it (docs/runtime.md, "The model buffer"). Included
// by the C++ that builds the buffer (runtime/vulkan/gpu_model.cpp) and by the GLSL that reads it (nmc_decode.glsl),
// so this file is the one definition of the layout: preprocessor macros only, valid in C++ and GLSL alike.
//
// The buffer is an array of 32-bit words. Words 0 .. NMC_HEADER_WORDS-1 are the header; every region after it
// (tables, weights, the latent bit streams) starts at a word offset the header gives. Floats are stored as their
// IEEE binary32 bits.
#ifndef NMC_RUNTIME_MODEL_LAYOUT_H
#define NMC_RUNTIME_MODEL_LAYOUT_H

// Changes whenever a word below changes meaning; nmc_decode.glsl and the C++ builder must agree on it.
#define NMC_MODEL_LAYOUT_VERSION 3u

// Header words.
#define NMC_HEADER_LAYOUT_VERSION 0    // NMC_MODEL_LAYOUT_VERSION
#define NMC_HEADER_WIDTH 1             // spec 5.2: mip-0 width W
#define NMC_HEADER_HEIGHT 2            // mip-0 height H
#define NMC_HEADER_MIP_COUNT 3         // M
#define NMC_HEADER_ADDRESS_MODE 4      // NMC_ADDRESS_WRAP or NMC_ADDRESS_CLAMP
#define NMC_HEADER_ARITHMETIC 5        // NMC_ARITHMETIC_FLOAT32 or NMC_ARITHMETIC_BINARY16 (spec 5.6)
#define NMC_HEADER_FEATURE_COUNT 6     // spec 5.5: F
#define NMC_HEADER_LEVEL_COUNT 7       // K
#define NMC_HEADER_LAYER_COUNT 8       // spec 5.6: layers
#define NMC_HEADER_CHANNEL_COUNT 9     // spec 5.3: C
#define NMC_HEADER_CHANNEL_RANGES 10   // word offset of C (lo, hi) float pairs (spec 5.3)
#define NMC_HEADER_ONE_THIRD_FLOAT32 11   // spec 8.6: float32(1/3), as float bits
#define NMC_HEADER_ONE_THIRD_BINARY16 12  // spec 8.6: f16(1/3), as float bits
#define NMC_HEADER_MAX_WIDTH 13        // the widest layer input or output

// Per latent level k: NMC_LEVEL_WORDS words at NMC_HEADER_LEVELS + k * NMC_LEVEL_WORDS.
#define NMC_HEADER_LEVELS 16
#define NMC_LEVEL_WORDS 8
#define NMC_LEVEL_WIDTH 0
#define NMC_LEVEL_HEIGHT 1
#define NMC_LEVEL_BITS 2               // b_k: 1, 2, 4 or 8
#define NMC_LEVEL_CODES_PER_WORD_LOG2 3  // log2(32 / b_k)
#define NMC_LEVEL_CODES 4              // word offset of the level's LSB-first bit stream (spec 6, unchanged)
#define NMC_LEVEL_VALUES 5             // word offset of the 2^b_k dequantised values (spec 6, pack's arithmetic)

// Per layer l: NMC_LAYER_WORDS words at NMC_HEADER_LAYERS + l * NMC_LAYER_WORDS.
#define NMC_HEADER_LAYERS (NMC_HEADER_LEVELS + 16 * NMC_LEVEL_WORDS)
#define NMC_LAYER_WORDS 8
#define NMC_LAYER_INPUT_WIDTH 0
#define NMC_LAYER_OUTPUT_WIDTH 1
// Word offset (a multiple of 4: 16-byte aligned) of the float32 weights in groups of four outputs, for vec4 loads: for
// outputs 4q .. 4q + 3 and input i, the four words at 4 * (q * I + i) are W[4q][i] .. W[4q + 3][i] (0 past N).
#define NMC_LAYER_WEIGHT_QUADS 2
#define NMC_LAYER_SCALES 3             // word offset of N float32 scales (1.0 where the layer has none)
#define NMC_LAYER_BIASES 4             // word offset of N float32 biases (the binary16 values, converted)
// Word offset (a multiple of 4: 16-byte aligned) of the weights for cooperative-matrix products: the transposed
// matrix B[k][n] = W[n][k] as binary16 (E4M3 and Int8 values are exact), row-major, NMC_PADDED(I) rows of
// NMC_PADDED(N), zero beyond the matrix.
#define NMC_LAYER_WEIGHTS_HALF 5
// A width rounded up to the cooperative matrices' 16.
#define NMC_PADDED(width) (((width) + 15u) & ~15u)

// Per mip m: NMC_MIP_WORDS words at NMC_HEADER_MIPS + m * NMC_MIP_WORDS: the texel-centre tables of whole-mip
// decoding (spec 8: u = (x + 0.5) / w_m, computed on the host, where division is correctly rounded).
#define NMC_HEADER_MIPS (NMC_HEADER_LAYERS + 8 * NMC_LAYER_WORDS)
#define NMC_MIP_WORDS 2
#define NMC_MIP_U_TABLE 0              // word offset of w_m floats
#define NMC_MIP_V_TABLE 1              // word offset of h_m floats

// spec 8.9: the HLG curve's constants a, b, c as float bits, after the 15 mips' words.
#define NMC_HEADER_HLG (NMC_HEADER_MIPS + 15 * NMC_MIP_WORDS)

// Per texture t (spec 5.4, what spec 8.8-8.10 needs): NMC_TEXTURE_WORDS words at NMC_HEADER_TEXTURES + t *
// NMC_TEXTURE_WORDS; NMC_HEADER_TEXTURE_COUNT textures.
#define NMC_HEADER_TEXTURE_COUNT 14
#define NMC_HEADER_TEXTURES 256
#define NMC_TEXTURE_WORDS 16
#define NMC_TEXTURE_CHANNEL_COUNT 0    // 1..4 source channels
#define NMC_TEXTURE_NORMAL_MODE 1      // NMC_NORMAL_NONE, NMC_NORMAL_XY or NMC_NORMAL_XYZ
#define NMC_TEXTURE_SAMPLE_TYPE 2      // NMC_SAMPLE_UINT8, _UINT16, _FLOAT16 or _FLOAT32
#define NMC_TEXTURE_COLOR_SPACE 3      // NMC_COLOR_LINEAR or NMC_COLOR_SRGB
// Source channel i (0..3): three words at NMC_TEXTURE_CHANNELS + 3 * i.
#define NMC_TEXTURE_CHANNELS 4
#define NMC_CHANNEL_KIND 0             // NMC_SOURCE_PACK, NMC_SOURCE_CONSTANT or NMC_SOURCE_NORMAL_Z, plus
                                       // NMC_SOURCE_INVERT when the file value is 1 - v, or NMC_SOURCE_HLG when it
                                       // is peak * hlg_decode(v) (an HLG-encoded texture, spec 8.9)
#define NMC_CHANNEL_PACK_CHANNEL 1     // NMC_SOURCE_PACK: the pack channel
#define NMC_CHANNEL_CONSTANT 2         // NMC_SOURCE_CONSTANT: the value; with NMC_SOURCE_HLG: the peak; float bits

#define NMC_HEADER_WORDS 512

// nmc_decode.glsl's specialization constants of the network's shape (docs/runtime.md, "Specialization"): constant
// NMC_CONSTANT_ID + 0 is the layer count L (0: read the shape from the buffer at run time), NMC_CONSTANT_ID + 1 + l
// the input width of layer l (l < L) and NMC_CONSTANT_ID + 1 + L the last layer's output width, 0 beyond;
// NMC_CONSTANT_ID + 10 the feature count F.
#define NMC_SHAPE_CONSTANTS 11
#define NMC_DEFAULT_CONSTANT_ID 100  // NMC_CONSTANT_ID where a shader does not define it

#define NMC_ADDRESS_WRAP 0u
#define NMC_ADDRESS_CLAMP 1u
#define NMC_ARITHMETIC_FLOAT32 0u
#define NMC_ARITHMETIC_BINARY16 1u
#define NMC_NORMAL_NONE 0u
#define NMC_NORMAL_XY 1u
#define NMC_NORMAL_XYZ 2u
#define NMC_SAMPLE_UINT8 0u
#define NMC_SAMPLE_UINT16 1u
#define NMC_SAMPLE_FLOAT16 2u
#define NMC_SAMPLE_FLOAT32 3u
#define NMC_COLOR_LINEAR 0u
#define NMC_COLOR_SRGB 1u
#define NMC_SOURCE_PACK 0u
#define NMC_SOURCE_CONSTANT 1u
#define NMC_SOURCE_NORMAL_Z 2u
#define NMC_SOURCE_INVERT 256u
#define NMC_SOURCE_HLG 512u

#endif
