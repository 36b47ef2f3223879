// CpuDecoder: creation (checks and weight conversion), the choice of kernel, and the split of a mip or a list of
// queries into 16-texel tiles spread over worker threads. The per-texel maths lives in the kernels.
#include "decoder/cpu/cpu_decoder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <system_error>
#include <thread>

#include "decoder/common/reference_math.h"
#include "decoder/cpu/decoder_model.h"

namespace nmc {
namespace {

using cpu_detail::kTileTexels;

constexpr size_t kTilesPerTask = 16;  // 256 texels: enough work per atomic increment, small enough to balance

// Runs fn(task) for every task in [0, task_count) on up to `threads` threads, the caller's included. Tasks are
// independent, so the result does not depend on how many threads ran them. If the system refuses to start a
// thread, the ones already running (at least the caller) finish the work.
template <typename Fn>
void parallel_for(int threads, size_t task_count, const Fn& fn) {
    const size_t workers = std::min(static_cast<size_t>(threads), task_count);
    std::atomic<size_t> next{0};
    auto run = [&] {
        for (size_t task = next.fetch_add(1); task < task_count; task = next.fetch_add(1)) fn(task);
    };
    std::vector<std::thread> pool;
    for (size_t i = 1; i < workers; ++i) {
        try {
            pool.emplace_back(run);
        } catch (const std::system_error&) {
            break;
        }
    }
    run();
    for (std::thread& thread : pool) thread.join();
}

// Decodes `count` texels starting at linear index `first`, in tiles; sink(first, count, tile) receives each tile's
// values at tile[c * kTileTexels + t]. `query_of(index)` gives the query of linear index `index`.
template <typename QueryOf, typename DecodeTile, typename Sink>
void for_each_tile(int threads, size_t count, const QueryOf& query_of, const DecodeTile& decode_tile,
                   const Sink& sink) {
    const size_t tiles = (count + kTileTexels - 1) / kTileTexels;
    parallel_for(threads, (tiles + kTilesPerTask - 1) / kTilesPerTask, [&](size_t task) {
        alignas(64) float values[kMaxChannels * kTileTexels];
        TexelQuery queries[kTileTexels];
        const size_t end = std::min(tiles, (task + 1) * kTilesPerTask);
        for (size_t tile = task * kTilesPerTask; tile < end; ++tile) {
            const size_t first = tile * kTileTexels;
            const int n = static_cast<int>(std::min(count - first, static_cast<size_t>(kTileTexels)));
            for (int t = 0; t < n; ++t) queries[t] = query_of(first + static_cast<size_t>(t));
            decode_tile(queries, n, values);
            sink(first, n, values);
        }
    });
}

// Whether this CPU and build run `isa`'s kernel (portable and automatic: always).
bool isa_supported(CpuIsa isa) {
    switch (isa) {
#if NMC_HAVE_X86_KERNELS
        case CpuIsa::avx2:
            return cpu_detail::avx2_supported();
        case CpuIsa::avx512bf16:
            return cpu_detail::avx512bf16_supported();
        case CpuIsa::avx512fp16:
            return cpu_detail::avx512fp16_supported();
#else
        case CpuIsa::avx2:
        case CpuIsa::avx512bf16:
        case CpuIsa::avx512fp16:
            return false;
#endif
        case CpuIsa::automatic:
        case CpuIsa::portable:
            return true;
    }
    return false;
}

// The fastest kernel this CPU and build run (what CpuIsa::automatic means).
CpuIsa fastest_isa() {
    for (CpuIsa isa : {CpuIsa::avx512fp16, CpuIsa::avx512bf16, CpuIsa::avx2})
        if (isa_supported(isa)) return isa;
    return CpuIsa::portable;
}

}  // namespace

const char* to_string(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::automatic:
            return "automatic";
        case CpuIsa::portable:
            return "portable";
        case CpuIsa::avx2:
            return "avx2";
        case CpuIsa::avx512bf16:
            return "avx512bf16";
        case CpuIsa::avx512fp16:
            return "avx512fp16";
    }
    return "unknown";
}

Result<CpuDecoder> CpuDecoder::create(const Pack& pack, const CpuDecoderOptions& options) {
    if (options.threads < 0) {
        return Status(StatusCode::invalid_argument,
                      "CpuDecoder: threads must be 0 (all cores) or positive, got " + std::to_string(options.threads));
    }
    CpuIsa isa = options.isa == CpuIsa::automatic ? fastest_isa() : options.isa;
    if (!isa_supported(isa)) {
        return Status(StatusCode::backend_unavailable,
                      std::string("CpuDecoder: this CPU or build cannot run the ") + to_string(isa) +
                          " kernel (avx2 needs AVX2 and FMA, avx512bf16 AVX-512F/BW/VL/DQ and AVX512-BF16, "
                          "avx512fp16 those and AVX512-FP16, all an x86-64 build); use isa automatic or portable");
    }
    // avx512fp16 differs from avx512bf16 only in the binary16 activation: float32 packs run (and name) avx512bf16.
    if (isa == CpuIsa::avx512fp16 && pack.network.arithmetic == Arithmetic::float32) isa = CpuIsa::avx512bf16;
    Result<cpu_detail::Model> model = cpu_detail::build_model(pack);
    if (!model.ok()) return model.status();
    const int threads =
        options.threads > 0 ? options.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return CpuDecoder(std::make_shared<const cpu_detail::Model>(std::move(model).value()), isa, threads);
}

void hgelu_clamped_binary16_values(const float* in, float* out, size_t n) {
    switch (fastest_isa()) {
#if NMC_HAVE_AVX512FP16
        case CpuIsa::avx512fp16:
            return cpu_detail::hgelu_clamped_binary16_avx512fp16(in, out, n);
#endif
#if NMC_HAVE_X86_KERNELS
        case CpuIsa::avx512bf16:
            return cpu_detail::hgelu_clamped_binary16_avx512(in, out, n);
        case CpuIsa::avx2:
            return cpu_detail::hgelu_clamped_binary16_avx2(in, out, n);
#endif
        default:
            for (size_t i = 0; i < n; ++i) out[i] = hgelu_clamped_binary16(in[i]);
    }
}

int CpuDecoder::channel_count() const {
    return model_->channel_count();
}

void CpuDecoder::decode_tile(const TexelQuery* queries, int count, float* out) const {
#if NMC_HAVE_X86_KERNELS
    if (isa_ == CpuIsa::avx512bf16 || isa_ == CpuIsa::avx512fp16) {
        cpu_detail::decode_tile_avx512bf16(*model_, queries, count, out, isa_ == CpuIsa::avx512fp16);
        return;
    }
    if (isa_ == CpuIsa::avx2) {
        cpu_detail::decode_tile_avx2(*model_, queries, count, out);
        return;
    }
#endif
    cpu_detail::decode_tile_portable(*model_, queries, count, out);
}

Status CpuDecoder::decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const {
    const cpu_detail::Model& model = *model_;
    NMC_RETURN_IF_ERROR(check_index("decode_mip_channels", "mip", mip, model.mip_count));
    // spec 8: every texel (x, y) of the mip at its centre, u = (x + 0.5) / w_m, v = (y + 0.5) / h_m.
    const int w = model.mip_width(mip);
    const int h = model.mip_height(mip);
    const size_t texels = static_cast<size_t>(w) * static_cast<size_t>(h);
    out.assign(static_cast<size_t>(model.channel_count()), std::vector<float>(texels));
    const auto query_of = [&](size_t i) {
        return TexelQuery{texel_centre(static_cast<int>(i % static_cast<size_t>(w)), w),
                          texel_centre(static_cast<int>(i / static_cast<size_t>(w)), h), mip};
    };
    const auto sink = [&](size_t first, int count, const float* values) {
        for (size_t c = 0; c < out.size(); ++c) {
            std::copy(values + c * kTileTexels, values + c * kTileTexels + count, out[c].begin() + first);
        }
    };
    for_each_tile(
        threads_, texels, query_of, [this](auto... args) { decode_tile(args...); }, sink);
    return Status::success();
}

Result<Image> CpuDecoder::decode_texture(int texture, int mip) const {
    NMC_RETURN_IF_ERROR(check_index("decode_texture", "mip", mip, model_->mip_count));
    return decode_texture_rows(texture, mip, 0, model_->mip_height(mip));
}

Result<Image> CpuDecoder::decode_texture_rows(int texture, int mip, int first_row, int row_count) const {
    const cpu_detail::Model& model = *model_;
    NMC_RETURN_IF_ERROR(check_index("decode_texture", "texture", texture, static_cast<int>(model.textures.size())));
    NMC_RETURN_IF_ERROR(check_index("decode_texture", "mip", mip, model.mip_count));
    const TextureLayout& layout = model.textures[static_cast<size_t>(texture)];
    const int w = model.mip_width(mip);
    const int h = model.mip_height(mip);
    if (first_row < 0 || row_count < 1 || first_row > h - row_count) {
        return Status(StatusCode::invalid_argument, "decode_texture_rows: rows " + std::to_string(first_row) + " + " +
                                                        std::to_string(row_count) + " outside the mip's " +
                                                        std::to_string(h));
    }
    const int channels = static_cast<int>(layout.channels.size());
    Image image(w, row_count, channels, layout.sample_type);
    const auto query_of = [&](size_t i) {
        return TexelQuery{texel_centre(static_cast<int>(i % static_cast<size_t>(w)), w),
                          texel_centre(first_row + static_cast<int>(i / static_cast<size_t>(w)), h), mip};
    };
    // spec 8.8-8.9 per texel, straight from the tile into the image.
    const auto sink = [&](size_t first, int count, const float* values) {
        float pack_values[kMaxChannels];
        for (int t = 0; t < count; ++t) {
            for (int c = 0; c < model.channel_count(); ++c) pack_values[c] = values[c * kTileTexels + t];
            source_channel_values(layout, pack_values,
                                  &image.pixels[(first + static_cast<size_t>(t)) * static_cast<size_t>(channels)]);
        }
    };
    for_each_tile(
        threads_, image.texel_count(), query_of, [this](auto... args) { decode_tile(args...); }, sink);
    return image;
}

Status CpuDecoder::decode_queries(const std::vector<TexelQuery>& queries, std::vector<float>& out) const {
    const cpu_detail::Model& model = *model_;
    NMC_RETURN_IF_ERROR(check_texel_queries(queries, model.mip_count));
    // Queries grouped by mip (a stable counting sort), so that tiles share a mip and the kernels can sample 16
    // texels at a time. A texel's values do not depend on the tile it is decoded in, so no value changes.
    std::vector<size_t> order(queries.size());
    std::vector<size_t> next(static_cast<size_t>(model.mip_count) + 1, 0);
    for (const TexelQuery& q : queries) ++next[static_cast<size_t>(q.mip) + 1];
    for (size_t m = 1; m < next.size(); ++m) next[m] += next[m - 1];
    for (size_t i = 0; i < queries.size(); ++i) order[next[static_cast<size_t>(queries[i].mip)]++] = i;

    const size_t c_count = static_cast<size_t>(model.channel_count());
    out.resize(queries.size() * c_count);
    const auto sink = [&](size_t first, int count, const float* values) {
        for (size_t t = 0; t < static_cast<size_t>(count); ++t) {
            float* texel = &out[order[first + t] * c_count];
            for (size_t c = 0; c < c_count; ++c) texel[c] = values[c * kTileTexels + t];
        }
    };
    for_each_tile(
        threads_, queries.size(), [&](size_t i) { return queries[order[i]]; },
        [this](auto... args) { decode_tile(args...); }, sink);
    return Status::success();
}

}  // namespace nmc
