// libFuzzer target for the CPU decoder on packs the reader accepts. This build's reader does not compare checksums,
// so mutations of the latent codes, the weights, the scales and biases and the metadata's numbers (sizes, ranges,
// mip counts, layer widths) reach the decoder whenever the rest of the pack still holds together. Whatever it
// accepts must decode, with every kernel this CPU runs, without a crash, hang, out-of-bounds access or undefined
// behaviour: every texture at every mip, and texel queries at the corners of the coordinate range.
// Seed corpus: data/golden (an uncompressed pack of 32 x 16 texels, 3 mips).
// Run: cpu_decoder_fuzzer -max_total_time=60 CORPUS_DIR data/golden
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "decoder/cpu/cpu_decoder.h"
#include "format/pack.h"

namespace {

// Larger materials are skipped: decoding time grows with the texel count, and a few thousand texels reach every
// branch of sampling and the network. The reader bounds sizes on its own (tested by pack_reader_fuzzer).
constexpr uint64_t kMaxDecodedTexels = 1 << 14;

uint64_t texel_count(const nmc::MaterialInfo& material) {
    uint64_t texels = 0;
    for (int mip = 0; mip < material.mip_count; ++mip)
        texels += static_cast<uint64_t>(material.mip_width(mip)) * static_cast<uint64_t>(material.mip_height(mip));
    return texels;
}

void decode_everything(const nmc::CpuDecoder& decoder, const nmc::Pack& pack) {
    const int mips = pack.material.mip_count;
    for (int mip = 0; mip < mips; ++mip) {
        std::vector<std::vector<float>> planes;
        if (!decoder.decode_mip_channels(mip, planes).ok()) std::abort();
        for (int texture = 0; texture < static_cast<int>(pack.textures.size()); ++texture)
            if (!decoder.decode_texture(texture, mip).ok()) std::abort();
    }
    constexpr float m = nmc::kMaxQueryCoordinate;
    const std::vector<nmc::TexelQuery> queries = {{0.0f, 0.0f, 0},   {m, m, mips - 1},      {-m, -m, 0},
                                                  {m, -m, mips - 1}, {0.5f, 0.999999f, 0}, {-1e-30f, 1.0f, mips - 1}};
    std::vector<float> values;
    if (!decoder.decode_queries(queries, values).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const nmc::Result<nmc::Pack> pack = nmc::read_pack(data, size);
    if (!pack.ok() || texel_count(pack->material) > kMaxDecodedTexels) return 0;
    for (nmc::CpuIsa isa : {nmc::CpuIsa::portable, nmc::CpuIsa::avx2, nmc::CpuIsa::avx512bf16,
                            nmc::CpuIsa::avx512fp16}) {
        nmc::CpuDecoderOptions options;
        options.isa = isa;
        options.threads = 1;
        const nmc::Result<nmc::CpuDecoder> decoder = nmc::CpuDecoder::create(*pack, options);
        if (decoder.ok()) {
            decode_everything(*decoder, *pack);
        } else if (decoder.status().code() != nmc::StatusCode::backend_unavailable &&
                   decoder.status().code() != nmc::StatusCode::invalid_argument) {
            std::abort();
        }
    }
    return 0;
}
