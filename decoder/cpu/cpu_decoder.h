// The CPU reference decoder: turns a Pack into texel values exactly as docs/format-spec.md section 8 says,
// multi-threaded, with an AVX-512 BF16 kernel chosen at run time and a portable kernel for every other CPU.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "decoder/common/decode_request.h"
#include "format/pack.h"

namespace nmc {

namespace cpu_detail {
struct Model;
}

// Which kernel runs the network. Both compute the spec's maths exactly except the order of each layer's
// float32 sums, which the spec leaves free (section 8.6); everything else is bit-identical between them.
enum class CpuIsa {
    automatic,   // the fastest this CPU runs: avx512fp16, else avx512bf16, else avx2, else portable
    portable,    // plain C++ (auto-vectorised for the build's baseline ISA)
    avx2,        // AVX2 + FMA, float32 products (exact), 8 texels per register: x86-64 Haswell / Zen 1 and newer
    avx512bf16,  // AVX-512F/BW/VL + AVX512-BF16 (vdpbf16ps): x86-64 Zen 4 / Cooper Lake and newer
    avx512fp16,  // the avx512bf16 kernel with AVX512-FP16's binary16 arithmetic for the binary16 activation (spec
                 // 8.6; float32 packs run, and name, avx512bf16): x86-64 Sapphire Rapids and newer
};
const char* to_string(CpuIsa isa);

struct CpuDecoderOptions {
    int threads = 0;                 // worker threads per call; 0: std::thread::hardware_concurrency()
    CpuIsa isa = CpuIsa::automatic;  // for tests and benchmarks; automatic is the fastest available
};

// A pack ready to decode. Weights are converted once, in create(), into the kernels' own layouts; the decoder
// keeps its own copy of the latent codes, so the Pack may be destroyed afterwards. Immutable and safe to use
// from several threads at once after creation; each call runs `threads` worker threads of its own.
// Decoding a texel is the same code path however it is asked for, so decode_mip_channels, decode_texture and
// decode_queries agree bit for bit (for one ISA), and results do not depend on the thread count.
class CpuDecoder {
public:
    // Checks the pack with format's check_pack, the reader's rules (invalid_argument if it breaks one, naming the
    // field) and converts it. backend_unavailable if options.isa is not supported by
    // this CPU or build.
    static Result<CpuDecoder> create(const Pack& pack, const CpuDecoderOptions& options = {});

    // spec 8.1-8.7: decodes every texel of mip `mip` (0 .. mip_count-1) at its centre. out is resized to the
    // pack's channel count C; out[c] is the w_m * h_m plane (row-major) of pack channel c's values.
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const;

    // spec 8.1-8.9: texture `texture` (index into pack.textures) at mip `mip`, as source-channel values
    // (normal maps rebuilt, inverts and constants applied), not yet quantised (see quantize_u8). The Image
    // has the texture's channel count and sample_type.
    Result<Image> decode_texture(int texture, int mip) const;

    // decode_texture() of rows [first_row, first_row + row_count) of the mip only (an Image of row_count rows, the
    // same values): a large texture decoded a band at a time. invalid_argument for rows outside the mip.
    Result<Image> decode_texture_rows(int texture, int mip, int first_row, int row_count) const;

    // spec 8.1-8.7 for each query: out is resized to queries.size() * C, query i's channels at [i * C, i * C + C).
    // invalid_argument (and out untouched) if any query has a mip out of range or coordinates outside the limit.
    Status decode_queries(const std::vector<TexelQuery>& queries, std::vector<float>& out) const;

    // The kernel that runs: "portable", "avx2", "avx512bf16" or "avx512fp16" (to_string of the resolved CpuIsa).
    const char* isa_name() const { return to_string(isa_); }
    CpuIsa isa() const { return isa_; }
    int channel_count() const;
    int threads() const { return threads_; }

private:
    CpuDecoder(std::shared_ptr<const cpu_detail::Model> model, CpuIsa isa, int threads)
        : model_(std::move(model)), isa_(isa), threads_(threads) {}

    // Decodes `count` (1..16) valid queries into out[c * 16 + t] with the selected kernel.
    void decode_tile(const TexelQuery* queries, int count, float* out) const;

    std::shared_ptr<const cpu_detail::Model> model_;
    CpuIsa isa_;
    int threads_;
};

// spec 8.6's activation in the binary16 arithmetic of n float32 values (out may equal in), bit-exact with
// reference_math's hgelu_clamped_binary16 for every input but NaN (which no finite layer sum gives; the SIMD kernels
// return -0 for it, the reference +0), by the fastest of the decoder's kernels this CPU runs (one thread).
// For the trainer's CPU forward pass, which must compute what the decoder computes.
void hgelu_clamped_binary16_values(const float* in, float* out, size_t n);

}  // namespace nmc
