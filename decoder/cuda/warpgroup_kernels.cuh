// The Hopper decoder's device code (sm_90a), for whole mips, error sums and random queries: a warpgroup (4 warps, 128
// threads) takes 64 texels at a time and runs every layer as wgmma.mma_async, the tensor-core instruction that Hopper
// issues once per warpgroup and runs asynchronously, instead of a warp's mma.sync per 16 x 8 tile
// (cuda_decoder_kernels.cuh). Its kernels are launch.cu's *_warpgroup_kernel functions, compiled with
// --fmad=false like the rest (spec 2). Shared with the warp kernels: spec 8.2-8.5 sampling (sample_level,
// position_pair), the activation (hgelu_clamped), the E4M3 rounding of every layer input and the staged layer-0 rows.
//
// Operands: A (64 texels x K) comes from registers. Warp w of the warpgroup owns texels 16w .. 16w + 15 of the group,
// and a lane's A fragment of a K chunk of 16 inputs, in[kc][0..3], has the layout of mma.sync's m16n8k16 A fragment for
// those 16 rows, as fp16x2 (E4M3 values, exact in fp16). The accumulators of an m64nN wgmma give lane (g, t) of warp w
// the outputs 8j + 2t, 8j + 2t + 1 of rows 16w + g and 16w + g + 8 for every n8 tile j (the layout of mma.sync's C),
// which is the A fragment of K chunk j / 2 of the next layer: the epilogue rounds them to E4M3 and writes them in
// place as fp16x2 (fp8_rounded_half2), with no shuffle and no staging. Layer 0's A is read from the warp's staged rows.
// B (K x N weights) comes from shared memory through a wgmma matrix descriptor, K-major without swizzling: for each
// K chunk of 16 fp16 inputs (32 bytes a row), N rows cut into core matrices of 8 rows x 16 bytes, each 128 contiguous
// bytes (row r at 16 r); core matrix (n / 8, kb) at (n / 8) * 256 + kb * 128. The host writes this layout once per
// pack (warpgroup_weights in device_model.cu).
//
// Every layer runs on the fp16 wgmma with float32 accumulation, whatever the decoder's path: E4M3 and Int8 weights and
// the E4M3 inputs are exact in fp16, so the sums are the spec's (8.6 leaves their order free), with the bias as the
// sum's first term for layers without scales, as run_layer does. The E4M3 wgmma is not used: on the H200 it did not
// give float32 sums (2026-12-01: every exact-sum test pack decoded with E4M3 roundings flipped here and there, while
// the fp16 wgmma was bit-exact), as reported for Hopper's FP8 tensor cores elsewhere. Layers are padded to 64 inputs
// and a hidden layer to 64 outputs (the last layer to 16), with zero weights; their kinds (layer_kind) have the fp16
// bit set, the scales bit as in the pack.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "decoder/cuda/cuda_decoder_kernels.cuh"

namespace nmc::cuda_detail {

constexpr int kGroupTexels = 64;             // texels a warpgroup decodes at a time (the M of m64nNk*)
constexpr int kGroupThreads = 128;           // one warpgroup a block
constexpr int kGroupWidth = 64;              // every padded layer input, and every hidden layer's padded output
constexpr int kGroupLastWidth = 16;          // the last layer's padded output (channels)
constexpr uint32_t kChunkBytes = 32;         // one K chunk of the B operand a row: 16 fp16 weights
constexpr uint32_t kCoreLeadingBytes = 128;  // between core matrices adjacent in K
constexpr uint32_t kCoreStrideBytes = 256;   // between core matrices adjacent in N (8 output rows)

// Byte offset of weight byte `byte` (0 .. 31) of output row n in one K chunk of the B layout above.
__host__ __device__ constexpr uint32_t warpgroup_b_offset(int n, int byte) {
    return static_cast<uint32_t>(n / 8) * kCoreStrideBytes + static_cast<uint32_t>(byte / 16) * kCoreLeadingBytes +
           static_cast<uint32_t>(n % 8) * 16u + static_cast<uint32_t>(byte % 16);
}

// Whether this compilation pass has wgmma (sm_90a code); the host asks once per device (warpgroup_code_present).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define NMC_HAS_WGMMA 1
#else
#define NMC_HAS_WGMMA 0
#endif

__device__ __forceinline__ uint64_t wgmma_descriptor(const uint8_t* shared_chunk) {
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared_chunk));
    return static_cast<uint64_t>((address & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(kCoreLeadingBytes >> 4) << 16) |
           (static_cast<uint64_t>(kCoreStrideBytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() {
#if NMC_HAS_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit_and_wait() {
#if NMC_HAS_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}

// Keeps the compiler from moving reads or writes of the accumulators across this point (before wgmma.fence and after
// the wait of the asynchronous MMA).
template <int kCount>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[kCount]) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The same for A-fragment registers that a wgmma reads (they must be written before wgmma.fence).
template <int kChunks>
__device__ __forceinline__ void wgmma_fence_operands(uint32_t (&a)[kChunks][4]) {
#pragma unroll
    for (int kc = 0; kc < kChunks; ++kc)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[kc][i])::"memory");
}

#define NMC_WGMMA_D8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define NMC_WGMMA_D32                                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define NMC_WGMMA_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define NMC_WGMMA_D24                                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23}"
#define NMC_WGMMA_OUT8(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define NMC_WGMMA_OUT16(d)                                                                                      \
    NMC_WGMMA_OUT8(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), \
        "+f"(d[15])
#define NMC_WGMMA_OUT24(d)                                                                                         \
    NMC_WGMMA_OUT16(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), \
        "+f"(d[23])
#define NMC_WGMMA_OUT32(d)                                                                                         \
    NMC_WGMMA_OUT24(d), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), \
        "+f"(d[31])

// wgmma_fp16's instruction for N columns, on its d, a, b and kAccumulate: the N / 2 accumulators are operands %0 ..,
// then A's four registers (A0 .. A3), the descriptor (B) and the scale-d immediate (SCALE_D).
#define NMC_WGMMA_FP16_RS(N, D, OUT, A0, A1, A2, A3, B, SCALE_D)                                                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SCALE_D                                                        \
                 ", 0;\n"                                                                                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 " D ", {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 \
                 "}, %" #B ", p, 1, 1, 0;\n}\n"                                                                       \
                 : OUT(d)                                                                                             \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(kAccumulate ? 1 : 0))

// d = (kAccumulate ? d : 0) + A (64 x 16 fp16, registers) * B (descriptor, K-major: no transpose), N = 64 (hidden
// layers), 48 or 32 (the tiled kernel's NTC 0.9 widths) or 16 (the last layer) (scale-d = kAccumulate).
template <int kN, bool kAccumulate = true>
__device__ __forceinline__ void wgmma_fp16(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t b) {
#if NMC_HAS_WGMMA
    if constexpr (kN == 64) {
        NMC_WGMMA_FP16_RS(64, NMC_WGMMA_D32, NMC_WGMMA_OUT32, 32, 33, 34, 35, 36, 37);
    } else if constexpr (kN == 48) {
        NMC_WGMMA_FP16_RS(48, NMC_WGMMA_D24, NMC_WGMMA_OUT24, 24, 25, 26, 27, 28, 29);
    } else if constexpr (kN == 32) {
        NMC_WGMMA_FP16_RS(32, NMC_WGMMA_D16, NMC_WGMMA_OUT16, 16, 17, 18, 19, 20, 21);
    } else {
        static_assert(kN == 16, "N is 64, 48, 32 or 16");
        NMC_WGMMA_FP16_RS(16, NMC_WGMMA_D8, NMC_WGMMA_OUT8, 8, 9, 10, 11, 12, 13);
    }
#else
    (void)d, (void)a, (void)b;
    __trap();  // the host runs this kernel only where the build has sm_90a code (warpgroup_code_present)
#endif
}

// d = (kAccumulate ? d : 0) + A (64 x 16 fp16, descriptor, K-major) * B (16 x 16 fp16, descriptor, K-major): both
// operands from shared memory, in the layout above (rows of A = texels, of B = outputs). The tiled kernel's bilinear
// products (tiled_kernel.cuh).
template <bool kAccumulate>
__device__ __forceinline__ void wgmma_fp16_shared_n16(float (&d)[8], uint64_t a, uint64_t b) {
#if NMC_HAS_WGMMA
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " NMC_WGMMA_D8 ", %8, %9, p, 1, 1, 0, 0;\n}\n"
        : NMC_WGMMA_OUT8(d)
        : "l"(a), "l"(b), "n"(kAccumulate ? 1 : 0));
#else
    (void)d, (void)a, (void)b;
    __trap();
#endif
}

#undef NMC_WGMMA_D8
#undef NMC_WGMMA_D16
#undef NMC_WGMMA_D24
#undef NMC_WGMMA_D32
#undef NMC_WGMMA_OUT8
#undef NMC_WGMMA_OUT16
#undef NMC_WGMMA_OUT24
#undef NMC_WGMMA_OUT32
#undef NMC_WGMMA_FP16_RS

// A pair of E4M3 codes (low byte first) of spec 8.6's rounding of (a, b), as the fp16x2 A-operand register (exact).
__device__ __forceinline__ uint32_t fp8_rounded_half2(float a, float b) {
    return fp8x2_to_half2(fp8x2_codes(a, b));
}

// One layer for the warpgroup's 64 texels, of kind kKind (layer_kind): in = this lane's A fragments, fp16x2, for K
// chunk kc (inputs 16kc .. 16kc + 15) in[kc][0..3] = rows g, g + 8 of inputs 16kc + 2t, 2t + 1, then rows g, g + 8
// of inputs 16kc + 2t + 8, 2t + 9 (mma.sync's m16n8k16 A layout for the warp's 16 rows); out = the next layer's, in
// the same form (hidden layers), or result = the last layer's y for channels 8j + 2t + (e & 1) of row g + 8 (e >> 1),
// at result[4j + e]. Outputs 8j .. 8j + 7 of a hidden layer are exactly the next layer's K chunk j / 2, half j % 2,
// so the accumulators become A fragments in place. `weights` is this layer's B operand in shared memory, `params`
// its scales (when scaled) then biases. kBinary16: the binary16 arithmetic's activation (spec 5.6, 8.6). All 128
// threads must call it together (wgmma is warpgroup-wide).
template <int kKind, bool kBinary16>
__device__ __forceinline__ void warpgroup_layer(const uint8_t* weights, const float* params, const uint32_t (&in)[4][4],
                                                uint32_t (&out)[4][4], float (&result)[8]) {
    static_assert((kKind & kKindFp16) != 0, "the warpgroup kernel runs every layer on the fp16 wgmma");
    constexpr bool kScaled = (kKind & kKindScaled) != 0;
    constexpr bool kLast = (kKind & kKindLast) != 0;
    constexpr int kN = kLast ? kGroupLastWidth : kGroupWidth;
    constexpr int kTiles = kN / 8;
    const int t = static_cast<int>(threadIdx.x) & 3;
    const float* scale = params;
    const float* bias = kScaled ? params + kN : params;
    // spec 8.6: a layer without scales starts its float32 sum at the bias; one with scales adds it after the multiply.
    float acc[kN / 2];
#pragma unroll
    for (int j = 0; j < kTiles; ++j) {
        const float2 start = kScaled ? make_float2(0.0f, 0.0f) : *reinterpret_cast<const float2*>(bias + 8 * j + 2 * t);
        acc[4 * j + 0] = start.x;
        acc[4 * j + 1] = start.y;
        acc[4 * j + 2] = start.x;
        acc[4 * j + 3] = start.y;
    }
    // The accumulators' and A's register writes come before the fence (wgmma reads them asynchronously).
    wgmma_fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kc = 0; kc < 4; ++kc) wgmma_fp16<kN>(acc, in[kc], wgmma_descriptor(weights + kc * kN * kChunkBytes));
    wgmma_commit_and_wait();
    wgmma_fence_operands(acc);
    // spec 8.6: y = acc * scale + bias with scales (a multiply, then an add); hidden layers then the activation and
    // the E4M3 rounding of the next layer's input.
#pragma unroll
    for (int j = 0; j < kTiles; ++j) {
        const int n = 8 * j + 2 * t;
        const float2 s = kScaled ? *reinterpret_cast<const float2*>(scale + n) : make_float2(1.0f, 1.0f);
        const float2 b = kScaled ? *reinterpret_cast<const float2*>(bias + n) : make_float2(0.0f, 0.0f);
        float y[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float v = acc[4 * j + e];
            if (kScaled) v = v * ((e & 1) ? s.y : s.x) + ((e & 1) ? b.y : b.x);
            y[e] = kLast || kBinary16 ? v : hgelu_clamped(v);
        }
        if constexpr (kLast) {
#pragma unroll
            for (int e = 0; e < 4; ++e) result[4 * j + e] = y[e];
        } else if constexpr (kBinary16) {
            out[j / 2][2 * (j % 2)] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[0], y[1]));      // row g
            out[j / 2][2 * (j % 2) + 1] = fp8x2_to_half2(hgelu_clamped_binary16_codes(y[2], y[3]));  // row g + 8
        } else {
            out[j / 2][2 * (j % 2)] = fp8_rounded_half2(y[0], y[1]);      // row g
            out[j / 2][2 * (j % 2) + 1] = fp8_rounded_half2(y[2], y[3]);  // row g + 8
        }
    }
}

// warpgroup_layer with kKind = kind among the fp16 kinds kFirst .. kLayerKinds - 1 that are hidden (kLast false) or
// last.
template <bool kLast, bool kBinary16, int kFirst = 0>
__device__ __forceinline__ void warpgroup_layer_of_kind(int kind, const uint8_t* weights, const float* params,
                                                        const uint32_t (&in)[4][4], uint32_t (&out)[4][4],
                                                        float (&result)[8]) {
    if constexpr (kFirst < kLayerKinds) {
        if constexpr (((kFirst & kKindLast) != 0) == kLast && (kFirst & kKindFp16) != 0) {
            if (kind == kFirst) {
                warpgroup_layer<kFirst, kBinary16>(weights, params, in, out, result);
                return;
            }
        }
        warpgroup_layer_of_kind<kLast, kBinary16, kFirst + 1>(kind, weights, params, in, out, result);
    }
}

}  // namespace nmc::cuda_detail
