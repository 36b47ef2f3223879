// The CPU decoder's load-time form of a pack (weights converted to each kernel's layout, latent dequantisation
// tables) and the kernels that decode one tile of texel queries with it. Internal to decoder/cpu and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "decoder/common/reference_math.h"
#include "decoder/cpu/cpu_decoder.h"
#include "format/pack.h"

namespace nmc::cpu_detail {

// Texels decoded together: one AVX-512 register of float32 per value, so each weight load serves 16 texels.
constexpr int kTileTexels = 16;

struct ModelLayer {
    int input_width = 0;
    int output_width = 0;
    int padded_output_width = 0;  // output_width rounded up to a multiple of kTileTexels
    // Portable and AVX2 kernels: W[n][i] as float at [i * padded_output_width + n], zero beyond the matrix, so
    // the loop over outputs vectorises and the AVX2 kernel's blocks of outputs stay in bounds.
    std::vector<float> weights;
    // AVX-512 BF16 kernel: at [p * padded_output_width + n] the bf16 codes of W[n][2p] (low half) and
    // W[n][2p+1] (high half), zero beyond the matrix. E4M3 and Int8 values are exact in bf16.
    std::vector<uint32_t> weight_pairs;
    std::vector<float> scales;  // padded_output_width entries; 1 where the layer has no scales (exact)
    std::vector<float> biases;  // padded_output_width entries, binary16 converted to float32; 0 padding

    int input_pairs() const { return (input_width + 1) / 2; }
};

// Bytes after a level's last code, so a 32-bit load of four codes (the AVX-512 sampler's gathers) starting at any
// code stays inside the array.
constexpr size_t kCodePadding = 3;

struct ModelLevel {
    int width = 0;
    int height = 0;
    int bits = 0;
    float lo = 0;  // spec 6: value = lo + q * step
    float step = 0;
    std::vector<uint8_t> codes;  // one byte per feature, as in the Pack, then kCodePadding zero bytes
    std::vector<float> values;   // spec 6: the dequantised value of each code in the pack's arithmetic
};

struct Model {
    int width = 0;
    int height = 0;
    int mip_count = 0;
    AddressMode address_mode = AddressMode::wrap;
    Arithmetic arithmetic = Arithmetic::float32;  // spec 5.6: of sampling (8.3) and the activation (8.6)
    int feature_count = 0;
    std::vector<ModelLevel> levels;
    std::vector<ModelLayer> layers;
    std::vector<float> channel_lo;
    std::vector<float> channel_hi;
    std::vector<TextureLayout> textures;

    int channel_count() const { return static_cast<int>(channel_lo.size()); }
    int mip_width(int mip) const { return width >> mip > 0 ? width >> mip : 1; }
    int mip_height(int mip) const { return height >> mip > 0 ? height >> mip : 1; }

    LatentLevelView level_view(int k) const {
        const ModelLevel& l = levels[static_cast<size_t>(k)];
        return {l.width, l.height, feature_count, l.codes.data(), l.values.data(), arithmetic};
    }
    // spec 8.1-8.5: layer 0's input for one valid query, layers[0].input_width floats.
    void assemble_input(const TexelQuery& q, float* x) const {
        const int k0 = first_level_of_mip(q.mip, static_cast<int>(levels.size()));
        nmc::assemble_input(level_view(k0), level_view(k0 + 1), address_mode, q.u, q.v, q.mip, layers[0].input_width,
                            x);
    }
};

// Checks the pack (format's check_pack) and converts it. invalid_argument naming the field if it breaks a rule.
Result<Model> build_model(const Pack& pack);

// spec 8.1-8.7 for `count` (1..kTileTexels) valid queries: out[c * kTileTexels + t] is pack channel c of query t.
void decode_tile_portable(const Model& model, const TexelQuery* queries, int count, float* out);

// spec 2.1 FP8 rounding of n floats (out may equal in), bit-exact with round_to_fp8_e4m3 of core, with integer
// operations on the float32 bits. The portable version auto-vectorises.
void round_to_fp8_portable(const float* in, float* out, size_t n);

#if NMC_HAVE_X86_KERNELS
// Whether this CPU runs the AVX2 kernel (AVX2, FMA and F16C).
bool avx2_supported();
// As decode_tile_portable, 8 texels per register; the caller checks avx2_supported() first.
void decode_tile_avx2(const Model& model, const TexelQuery* queries, int count, float* out);
// As round_to_fp8_portable, with AVX2; the caller checks avx2_supported() first.
void round_to_fp8_avx2(const float* in, float* out, size_t n);
// The binary16 arithmetic's activation (reference_math's hgelu_clamped_binary16) of n floats as the AVX2 kernel
// computes it (tests, nmc::hgelu_clamped_binary16_values); the caller checks avx2_supported() first.
void hgelu_clamped_binary16_avx2(const float* in, float* out, size_t n);

// Whether this CPU runs the AVX-512 BF16 kernel (AVX-512F/BW/VL/DQ and AVX512-BF16).
bool avx512bf16_supported();
// Whether it also has AVX512-FP16 (and the build the instructions: NMC_HAVE_AVX512FP16).
bool avx512fp16_supported();
// As decode_tile_portable; the caller checks avx512bf16_supported() first, and avx512fp16_supported() for
// fp16_activation (the binary16 activation in AVX512-FP16's binary16 arithmetic; float32 packs ignore it).
void decode_tile_avx512bf16(const Model& model, const TexelQuery* queries, int count, float* out,
                            bool fp16_activation);
// As round_to_fp8_portable, with AVX-512; the caller checks avx512bf16_supported() first.
void round_to_fp8_avx512(const float* in, float* out, size_t n);
// As hgelu_clamped_binary16_avx2, as the AVX-512 kernel computes it; the caller checks avx512bf16_supported() first.
void hgelu_clamped_binary16_avx512(const float* in, float* out, size_t n);
#if NMC_HAVE_AVX512FP16
// As hgelu_clamped_binary16_avx2, as the AVX-512 kernel computes it with fp16_activation; the caller checks
// avx512fp16_supported() first.
void hgelu_clamped_binary16_avx512fp16(const float* in, float* out, size_t n);
#endif
#endif

}  // namespace nmc::cpu_detail
