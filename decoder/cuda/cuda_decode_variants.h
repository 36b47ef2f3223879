// The CUDA decoder's timing variants, for the benchmark (bench/cuda_decoder_bench.cu) and the CUDA tests only: not
// part of the decoder's API.
#pragma once

#include "core/status.h"
#include "decoder/cuda/cuda_decoder.h"

namespace nmc {

// Timing variants of CudaDecoder::decode_all_mips_to_device: which stages of the decode run, to show what binds, and
// an earlier launch configuration to compare with. They run on packs of the float32 arithmetic only (invalid_argument
// otherwise). Only `full` and `full_3_blocks` write the spec's values; the others need a network whose padded widths
// are at most 64 (the default network).
enum class CudaDecodeVariant {
    full,           // the decoder
    full_3_blocks,  // as full, the fast kernel built for 3 blocks a multiprocessor (up to 168 registers) instead of 4
    network_only,   // layer 0's input synthesised without reading latents (no spec 8.2-8.5), every layer as in full
    matmul_only,    // as network_only with only the E4M3 rounding between the MMAs (no bias, no activation)
    sampling_only,  // spec 8.2-8.5 and the staging of layer 0's input; outputs made from the input codes, no network
    // The binary16 arithmetic (spec 5.6) on a float32 pack, to time it against float32 (values close to the pack's,
    // not equal); built like full_3_blocks, which they compare with:
    binary16_activation,               // as full, the hidden layers' activation in the binary16 arithmetic
    binary16_activation_and_sampling,  // and sampling too: the kernel that decodes binary16 packs
    // The Hopper warpgroup kernel built for 4 blocks a multiprocessor instead of 5 (up to 128 registers a thread
    // instead of 96; the spec's values; invalid_argument where runs_warpgroup_kernel() is false).
    warpgroup_4_blocks,
    // The binary16 arithmetic (docs/design-binary16-decoding.md) on a float32 pack with the tiled kernel that decodes
    // binary16 packs' whole mips: spec 8.3's bilinear sums as tensor-core products over 8 x 8 texel tiles (values
    // close to the float32 pack's; F = 16; invalid_argument where runs_warpgroup_kernel() is false). Mips the tiled
    // kernel does not take (sizes that are not powers of two, levels finer than half the mip's resolution or more
    // than 16 times coarser, mips under 8 x 8) run the float32 warpgroup kernel.
    tensor_sampling_binary16,
    // A breakdown of that tiled kernel's time: each runs it with one part of a tile's work left out, so that the time
    // it saves is that part's cost (same conditions as tensor_sampling_binary16; values not the spec's, timing only):
    tiled_without_activation,  // the hidden layers' activation and E4M3 rounding (their sums go on in fp16)
    tiled_without_stores,      // the output stores (every value still computed, none written)
    tiled_without_sampling,    // the sampling products (layer 0 reads the latent codes' raw bits instead)
};
const char* to_string(CudaDecodeVariant variant);

// CudaDecoder::decode_all_mips_to_device with a timing variant: a variant other than full writes other values (see
// above); invalid_argument where it does not exist.
Status decode_all_mips_to_device(const CudaDecoder& decoder, float* device_out, CudaDecodeVariant variant);

}  // namespace nmc
