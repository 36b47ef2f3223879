// CudaDecoder::create: the pack checked (format's check_pack) and converted for the GPU: latent codes uploaded as they
// are, weights in the MMA fragment order of each kernel (warp, Hopper warpgroup, tiled), each mip's tiled plan.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/number_formats.h"
#include "decoder/common/reference_math.h"
#include "decoder/cuda/device_model.h"
#include "format/limits.h"

namespace nmc {
namespace cuda_detail {
namespace {

float weight_value(const Layer& layer, int n, int k) {
    if (n >= layer.output_width || k >= layer.input_width) return 0.0f;
    const uint8_t code =
        layer.weights[static_cast<size_t>(n) * static_cast<size_t>(layer.input_width) + static_cast<size_t>(k)];
    return layer.weight_type == WeightType::int8 ? static_cast<float>(static_cast<int8_t>(code))
                                                 : fp8_e4m3_to_float(code);
}

uint8_t weight_fp8_code(const Layer& layer, int n, int k) {
    if (n >= layer.output_width || k >= layer.input_width) return 0;
    return layer.weights[static_cast<size_t>(n) * static_cast<size_t>(layer.input_width) + static_cast<size_t>(k)];
}

// spec 7 -> fragment order (see cuda_decoder_kernels.cuh): for pair P of n8 tiles and K chunk kc, 32 lanes x 16 bytes;
// lane (g, t)'s 8 bytes per tile are its B fragment. fp8 (k32): bytes i = 0..3 at K position 4t + i, bytes 4..7 at
// 16 + 4t + i, each position p carrying input perm(p) (every layer: all read the packed form). fp16 (k16): halves
// at K 2t, 2t+1, 2t+8, 2t+9. Output n = 8 * tile + g.
std::vector<uint8_t> fragment_weights(const Layer& layer, int k_pad, int n_pad, bool fp16) {
    const int chunk = fp16 ? 16 : 32;
    const int chunks = k_pad / chunk;
    std::vector<uint8_t> bytes(static_cast<size_t>(n_pad / 16) * static_cast<size_t>(chunks) * 512, 0);
    for (int pair = 0; pair < n_pad / 16; ++pair) {
        for (int kc = 0; kc < chunks; ++kc) {
            for (int lane = 0; lane < 32; ++lane) {
                const int g = lane >> 2;
                const int t = lane & 3;
                uint8_t* dst = &bytes[(static_cast<size_t>(pair * chunks + kc) * 32 + static_cast<size_t>(lane)) * 16];
                for (int tile = 0; tile < 2; ++tile) {
                    const int n = pair * 16 + tile * 8 + g;
                    uint8_t* frag = dst + tile * 8;
                    if (fp16) {
                        const int ks[4] = {2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9};
                        for (int i = 0; i < 4; ++i) {
                            const uint16_t h = float_to_fp16(weight_value(layer, n, kc * chunk + ks[i]));  // exact
                            frag[2 * i] = static_cast<uint8_t>(h & 0xFF);
                            frag[2 * i + 1] = static_cast<uint8_t>(h >> 8);
                        }
                    } else {
                        for (int i = 0; i < 8; ++i) {
                            const int position = (i < 4 ? 4 * t + i : 16 + 4 * t + (i - 4));
                            const int k = kc * chunk + fp8_chunk_permutation(position);
                            frag[i] = weight_fp8_code(layer, n, k);
                        }
                    }
                }
            }
        }
    }
    return bytes;
}

// spec 7 -> the warpgroup kernels' B operand (warpgroup_kernels.cuh): `chunks` K chunks of 16 inputs (4: K padded to
// 64) over N = 64 rows (16 for the last layer), zero padded, fp16 weight (n, 16 kc + q) at chunk kc's
// warpgroup_b_offset(n, 2q). The tiled kernel (tiled_kernel.cuh) also puts a layer's biases as the weights of input
// `bias_input` (-1: none), which it feeds with 1, and reads layer 0's features in tiled_feature_of_column order
// (`tiled_features`: input 16 l + n carries feature 16 l + tiled_feature_of_column(n) of level l).
std::vector<uint8_t> warpgroup_weights(const Layer& layer, bool last, int chunks = 4, int bias_input = -1,
                                       bool tiled_features = false) {
    const int n_pad = last ? kGroupLastWidth : kGroupWidth;
    std::vector<uint8_t> bytes(static_cast<size_t>(chunks) * static_cast<size_t>(n_pad) * kChunkBytes, 0);
    for (int kc = 0; kc < chunks; ++kc) {
        uint8_t* chunk = &bytes[static_cast<size_t>(kc) * static_cast<size_t>(n_pad) * kChunkBytes];
        for (int n = 0; n < n_pad; ++n) {
            for (int q = 0; q < 16; ++q) {
                const int k = 16 * kc + q;
                const int source = tiled_features && kc < 2 ? 16 * kc + tiled_feature_of_column(q) : k;
                uint16_t h = 0;
                if (k == bias_input)
                    h = n < layer.output_width ? layer.biases[static_cast<size_t>(n)] : 0;
                else
                    h = float_to_fp16(weight_value(layer, n, source));  // exact
                chunk[warpgroup_b_offset(n, 2 * q)] = static_cast<uint8_t>(h & 0xFF);
                chunk[warpgroup_b_offset(n, 2 * q + 1)] = static_cast<uint8_t>(h >> 8);
            }
        }
    }
    return bytes;
}

bool is_power_of_two(int x) {
    return x > 0 && (x & (x - 1)) == 0;
}

int log2_of(int x) {
    int s = 0;
    while ((1 << s) < x) ++s;
    return s;
}

// One class of the tiled kernel (tiled_kernel.cuh) on mip `mip` (`tm`: its window origins and k0), taken at tile
// (tx, ty): the pattern
// (A of the sampling product in K-major core matrices, then each window cell's (dx, dy)) and layer 0's K-chunk-2
// fragments of the 128 threads (positional inputs, mip input, and 1 at kTiledBiasInput when `bias_input`), computed
// with the CPU reference's spec 8.2-8.5 arithmetic. False where a level's cells do not fit its window.
struct TiledClass {
    std::vector<uint8_t> pattern = std::vector<uint8_t>(kPatternBytes, 0);
    std::vector<uint32_t> positions = std::vector<uint32_t>(4 * kGroupThreads, 0);
};

bool tiled_class(const Pack& pack, int mip, const TiledMip& tm, int tx, int ty, bool bias_input, TiledClass& out) {
    const int w = pack.material.mip_width(mip);
    const int h = pack.material.mip_height(mip);
    const int k0 = tm.k0;
    for (int l = 0; l < 2; ++l) {
        const LatentLevel& level = pack.latents.levels[static_cast<size_t>(k0 + l)];
        const int ox = tm.origin(l, 0, tx);  // the kernel's (tile_state)
        const int oy = tm.origin(l, 1, ty);
        SamplePosition p[kGroupTexels];
        int window_w = 0;
        int window_h = 0;
        for (int i = 0; i < kGroupTexels; ++i) {
            p[i] = sample_position(texel_centre(kTileSide * tx + tile_row_x(i), w),
                                   texel_centre(kTileSide * ty + tile_row_y(i), h), level.width, level.height);
            const int dx = p[i].x0 - ox;
            const int dy = p[i].y0 - oy;
            if (dx < 0 || dy < 0) return false;
            window_w = std::max(window_w, dx + 2);
            window_h = std::max(window_h, dy + 2);
        }
        if (window_w * window_h > (l ? 16 : kTileLevel0Cells)) return false;
        const int base = l ? 16 * kTileLevel1Chunk : 0;
        for (int cy = 0; cy < window_h; ++cy)
            for (int cx = 0; cx < window_w; ++cx) {
                const int k = base + cy * window_w + cx;
                const int32_t offset[2] = {cx, cy};
                std::memcpy(&out.pattern[kPatternWeightBytes + 8 * static_cast<size_t>(k)], offset, sizeof(offset));
            }
        for (int i = 0; i < kGroupTexels; ++i) {
            const BilinearWeights wt = bilinear_weights_binary16(p[i].fx, p[i].fy);
            const int k = base + (p[i].y0 - oy) * window_w + (p[i].x0 - ox);
            const auto put = [&](int column, float weight) {
                const uint16_t bits = float_to_fp16(weight);  // exact: a binary16 value
                const uint32_t at =
                    static_cast<uint32_t>(column / 16) * kTileAChunkBytes + warpgroup_b_offset(i, 2 * (column % 16));
                out.pattern[at] = static_cast<uint8_t>(bits & 0xFF);
                out.pattern[at + 1] = static_cast<uint8_t>(bits >> 8);
            };
            put(k, wt.w00);
            put(k + 1, wt.w10);
            put(k + window_w, wt.w01);
            put(k + window_w + 1, wt.w11);
        }
    }
    const LatentLevel& first = pack.latents.levels[static_cast<size_t>(k0)];
    for (int thread = 0; thread < kGroupThreads; ++thread) {
        const int warp = thread / 32;
        const int g = (thread % 32) / 4;
        const int t = thread % 4;
        uint16_t in[2][16] = {};  // inputs 32 .. 47 of rows g and g + 8, E4M3 in binary16
        for (int side = 0; side < 2; ++side) {
            const int row = 16 * warp + 8 * side + g;
            const SamplePosition sp =
                sample_position(texel_centre(kTileSide * tx + tile_row_x(row), w),
                                texel_centre(kTileSide * ty + tile_row_y(row), h), first.width, first.height);
            float x[16] = {};
            positional_encoding(sp.px, sp.py, x);
            x[12] = static_cast<float>(mip) * 0.25f;
            for (int j = 0; j < 13; ++j) in[side][j] = float_to_fp16(round_to_fp8_e4m3(x[j]));  // spec 8.6
            if (bias_input) in[side][kTiledBiasInput - 32] = float_to_fp16(1.0f);
        }
        const auto pair = [&](int side, int j) {
            return static_cast<uint32_t>(in[side][j]) | (static_cast<uint32_t>(in[side][j + 1]) << 16);
        };
        uint32_t* fragment = &out.positions[static_cast<size_t>(4 * thread)];
        fragment[0] = pair(0, 2 * t);
        fragment[1] = pair(1, 2 * t);
        fragment[2] = pair(0, 2 * t + 8);
        fragment[3] = pair(1, 2 * t + 8);
    }
    return true;
}

// The tiled kernel's plan for mip `mip` (TiledMipPlan): tiled where the mip and both of its levels have power-of-two
// sizes, the mip is at least 8 x 8 and each level is 2 to 16 times coarser in each direction (then spec 8.2's positions
// are exact and repeat with a period of 1 or 2 tiles: the classes), and every class's cells fit the windows. Each
// class's pattern goes to `patterns` (shared between classes and mips that have the same bytes) and its fragments to
// `positions` (from plan.first_position on; the caller points mip.positions there after the upload).
TiledMipPlan tiled_mip_plan(const Pack& pack, int mip, bool bias_input, std::vector<std::vector<uint8_t>>& patterns,
                            std::vector<uint32_t>& positions) {
    TiledMipPlan plan;
    const int w = pack.material.mip_width(mip);
    const int h = pack.material.mip_height(mip);
    const int level_count = static_cast<int>(pack.latents.levels.size());
    const int k0 = first_level_of_mip(mip, level_count);
    if (!is_power_of_two(w) || !is_power_of_two(h) || w < kTileSide || h < kTileSide) return plan;
    int period_x = 1;
    int period_y = 1;
    TiledMip& tm = plan.mip;
    for (int l = 0; l < 2; ++l) {
        const LatentLevel& level = pack.latents.levels[static_cast<size_t>(k0 + l)];
        if (!is_power_of_two(level.width) || !is_power_of_two(level.height)) return plan;
        if (level.width * 2 > w || level.width * 16 < w || level.height * 2 > h || level.height * 16 < h) return plan;
        const int rx = w / level.width;
        const int ry = h / level.height;
        period_x = std::max(period_x, rx / kTileSide);
        period_y = std::max(period_y, ry / kTileSide);
        tm.origin_bias[l][0] = 1 - rx;
        tm.origin_bias[l][1] = 1 - ry;
        tm.origin_shift[l][0] = log2_of(rx) + 1;
        tm.origin_shift[l][1] = log2_of(ry) + 1;
        tm.step_lo[l] = static_cast<uint32_t>(float_to_fp16(latent_step(level.lo, level.hi, level.bits))) |
                        (static_cast<uint32_t>(float_to_fp16(level.lo)) << 16);
    }
    const int tiles_x = w / kTileSide;
    const int tiles_y = h / kTileSide;
    tm.texels = static_cast<uint32_t>(w) * static_cast<uint32_t>(h);
    tm.width = w;
    tm.tiles_x_shift = log2_of(tiles_x);
    tm.class_mask_x = period_x - 1;
    tm.class_mask_y = period_y - 1;
    tm.k0 = k0;
    // Four classes' fragments, class (x & mask_x) | (y & mask_y) << 1 at that index (unused ones zero).
    std::vector<uint32_t> mip_positions(static_cast<size_t>(4 * 4 * kGroupThreads), 0u);
    for (int cy = 0; cy < period_y; ++cy) {
        for (int cx = 0; cx < period_x; ++cx) {
            TiledClass c;
            if (!tiled_class(pack, mip, tm, cx, cy, bias_input, c)) return plan;
            // The periodicity the kernel relies on (spec 8.2's arithmetic guarantees it), checked again on the class's
            // next tile along the diagonal where the mip has one.
            if (cx + period_x < tiles_x && cy + period_y < tiles_y) {
                TiledClass again;
                if (!tiled_class(pack, mip, tm, cx + period_x, cy + period_y, bias_input, again) ||
                    again.pattern != c.pattern || again.positions != c.positions)
                    return plan;
            }
            const auto known = std::find(patterns.begin(), patterns.end(), c.pattern);
            plan.class_pattern[cx + 2 * cy] = static_cast<int>(known - patterns.begin());
            if (known == patterns.end()) patterns.push_back(std::move(c.pattern));
            std::copy(c.positions.begin(), c.positions.end(),
                      mip_positions.begin() + static_cast<ptrdiff_t>((cx + 2 * cy) * 4 * kGroupThreads));
        }
    }
    plan.first_position = positions.size() / 4;
    positions.insert(positions.end(), mip_positions.begin(), mip_positions.end());
    plan.tiled = true;
    return plan;
}

}  // namespace
}  // namespace cuda_detail

Result<CudaDecoder> CudaDecoder::create(const Pack& pack, const CudaDecoderOptions& options) {
    using namespace cuda_detail;
    NMC_RETURN_IF_ERROR(check_pack(pack));
    Result<CudaDeviceInfo> info = query_cuda_device(options.device);
    if (!info.ok()) return info.status();
    CudaMatmulPath path = options.path;
    if (path == CudaMatmulPath::automatic)
        path = info->fp8_path_is_faster() ? CudaMatmulPath::fp8 : CudaMatmulPath::fp16;
    if (path == CudaMatmulPath::fp8 && !info->has_fp8_mma())
        return Status(StatusCode::backend_unavailable,
                      "CudaDecoder: the fp8 path needs compute capability 8.9 or newer, device " +
                          std::to_string(options.device) + " (" + info->name + ") is " +
                          std::to_string(info->compute_major) + "." + std::to_string(info->compute_minor));
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device));

    auto model = std::make_unique<DeviceModel>();
    model->device = options.device;
    model->path = path;
    model->multiprocessors = info->multiprocessors;
    model->textures = pack.textures;
    ModelDesc& d = model->desc;
    d.width = pack.material.width;
    d.height = pack.material.height;
    d.mip_count = pack.material.mip_count;
    d.wrap = pack.material.address_mode == AddressMode::wrap ? 1 : 0;
    d.feature_count = pack.latents.feature_count;
    d.level_count = static_cast<int>(pack.latents.levels.size());
    d.channel_count = static_cast<int>(pack.channels.size());
    d.layer_count = static_cast<int>(pack.network.layers.size());
    d.binary16 = pack.network.arithmetic == Arithmetic::binary16 ? 1 : 0;
    for (int c = 0; c < d.channel_count; ++c) {
        d.channel_lo[c] = pack.channels[static_cast<size_t>(c)].lo;
        d.channel_hi[c] = pack.channels[static_cast<size_t>(c)].hi;
        d.channel_range[c] = d.channel_hi[c] - d.channel_lo[c];
    }
    // spec 6: latent codes as the Pack holds them (one byte per feature), each level in its own allocation.
    for (int k = 0; k < d.level_count; ++k) {
        const LatentLevel& level = pack.latents.levels[static_cast<size_t>(k)];
        void* p = nullptr;
        NMC_RETURN_IF_ERROR(model->upload(level.codes.data(), level.codes.size(), &p));
        d.levels[k] = {static_cast<const uint8_t*>(p), level.width, level.height, level.lo,
                       latent_step(level.lo, level.hi, level.bits)};
    }
    // spec 7: weights to fragment order, scales and biases to padded float arrays.
    std::vector<uint8_t> weights;
    std::vector<float> params;
    // Each layer's MMA flavour first: the fp8 path runs E4M3 layers on the E4M3 MMA and Int8 layers on the fp16 one
    // (Int8 has no MMA with E4M3, but Int8 and E4M3 are exact in fp16). K is padded to the MMA's chunk, and a hidden
    // layer's outputs to the next layer's chunk.
    std::vector<bool> fp16(static_cast<size_t>(d.layer_count));
    for (int l = 0; l < d.layer_count; ++l)
        fp16[static_cast<size_t>(l)] =
            path == CudaMatmulPath::fp16 || pack.network.layers[static_cast<size_t>(l)].weight_type == WeightType::int8;
    // The fast kernels (every padded width <= 64) run each layer padded to 64 inputs and 64 outputs (16 for the last
    // layer) with zero weights, as straight-line code (see run_layer).
    int max_width = 0;
    for (const Layer& layer : pack.network.layers)
        max_width = std::max({max_width, round_up(layer.input_width, 32), round_up(layer.output_width, 32)});
    model->max_k = max_width <= kSmallK ? kSmallK : kLargeK;
    for (int l = 0; l < d.layer_count; ++l) {
        const Layer& layer = pack.network.layers[static_cast<size_t>(l)];
        const bool last = l + 1 == d.layer_count;
        const bool is_fp16 = fp16[static_cast<size_t>(l)];
        const bool next_fp16 = !last && fp16[static_cast<size_t>(l) + 1];
        LayerDesc& ld = d.layers[l];
        const bool small = model->max_k == kSmallK;
        ld.k_pad = small ? kSmallK : round_up(layer.input_width, is_fp16 ? 16 : 32);
        ld.n_pad = last ? 16 : small ? kSmallK : round_up(layer.output_width, next_fp16 ? 16 : 32);
        ld.kind = layer_kind(is_fp16, layer.has_scale(), last);
        ld.weight_offset = static_cast<uint32_t>(weights.size());
        ld.param_offset = static_cast<uint32_t>(params.size());
        const std::vector<uint8_t> frag = fragment_weights(layer, ld.k_pad, ld.n_pad, is_fp16);
        weights.insert(weights.end(), frag.begin(), frag.end());
        if (layer.has_scale())
            for (int n = 0; n < ld.n_pad; ++n)
                params.push_back(n < layer.output_width ? layer.scales[static_cast<size_t>(n)] : 1.0f);
        for (int n = 0; n < ld.n_pad; ++n)
            params.push_back(n < layer.output_width ? fp16_to_float(layer.biases[static_cast<size_t>(n)]) : 0.0f);
    }
    d.weight_bytes = static_cast<uint32_t>(weights.size());
    d.param_floats = static_cast<uint32_t>(params.size());
    void* p = nullptr;
    NMC_RETURN_IF_ERROR(model->upload(weights.data(), weights.size(), &p));
    d.weights = static_cast<const uint8_t*>(p);
    NMC_RETURN_IF_ERROR(model->upload(params.data(), params.size() * sizeof(float), &p));
    d.params = static_cast<const float*>(p);

    // The Hopper warpgroup kernel's copy of the model: its own weight layout and kinds (fp16 wgmma for every layer,
    // on either path), the rest shared.
    if (options.warpgroup && model->max_k == kSmallK && warpgroup_code_present(*info)) {
        ModelDesc& wd = model->warpgroup_desc;
        wd = d;
        std::vector<uint8_t> group_weights;
        for (int l = 0; l < d.layer_count; ++l) {
            const Layer& layer = pack.network.layers[static_cast<size_t>(l)];
            const bool last = l + 1 == d.layer_count;
            wd.layers[l].weight_offset = static_cast<uint32_t>(group_weights.size());
            wd.layers[l].kind = layer_kind(true, layer.has_scale(), last);  // every layer on the fp16 wgmma
            const std::vector<uint8_t> bytes = warpgroup_weights(layer, last);
            group_weights.insert(group_weights.end(), bytes.begin(), bytes.end());
        }
        wd.weight_bytes = static_cast<uint32_t>(group_weights.size());
        if (warpgroup_shared_bytes(wd) <= info->shared_memory_per_block_optin) {
            NMC_RETURN_IF_ERROR(model->upload(group_weights.data(), group_weights.size(), &p));
            wd.weights = static_cast<const uint8_t*>(p);
            model->warpgroup_ready = true;
        }
    }
    // The tiled kernel's model: the default network's shape (48 inputs, F = 16, three hidden layers all with scales
    // or all without, a last layer with scales). Layer 0 reads 3 K chunks (features in tiled_feature_of_column
    // order; a layer without scales has its biases at input kTiledBiasInput, a zero input of spec 8.5), layers 1 and
    // 2 four and, without scales, the bias chunk; the last layer four. Then each mip's plan and the patterns.
    const auto& layers = pack.network.layers;
    if (model->warpgroup_ready && d.feature_count == 16 && d.layer_count == 4 && layers[0].input_width <= 48 &&
        layers[3].has_scale() && layers[0].has_scale() == layers[1].has_scale() &&
        layers[1].has_scale() == layers[2].has_scale()) {
        ModelDesc& td = model->tiled_desc;
        td = model->warpgroup_desc;
        const bool scaled = layers[0].has_scale();
        std::vector<uint8_t> tiled;
        for (int l = 0; l < 4; ++l) {
            const bool last = l == 3;
            const int chunks = l == 0 ? 3 : last || scaled ? 4 : 5;
            const int bias_input = last || scaled ? -1 : l == 0 ? kTiledBiasInput : 16 * kTiledBiasChunk;
            td.layers[l].weight_offset = static_cast<uint32_t>(tiled.size());
            const std::vector<uint8_t> bytes =
                warpgroup_weights(layers[static_cast<size_t>(l)], last, chunks, bias_input, l == 0);
            tiled.insert(tiled.end(), bytes.begin(), bytes.end());
        }
        td.weight_bytes = static_cast<uint32_t>(tiled.size());
        std::vector<std::vector<uint8_t>> patterns;
        std::vector<uint32_t> positions;
        std::vector<TiledMipPlan> plans;
        for (int m = 0; m < d.mip_count; ++m) plans.push_back(tiled_mip_plan(pack, m, !scaled, patterns, positions));
        std::vector<uint8_t> pattern_bytes;
        for (const std::vector<uint8_t>& pattern : patterns)
            pattern_bytes.insert(pattern_bytes.end(), pattern.begin(), pattern.end());
        // A failed upload leaves whole mips on the warpgroup kernel (and the timing variant unavailable).
        void* pattern_memory = nullptr;
        void* position_memory = nullptr;
        void* tickets = nullptr;
        const uint32_t no_tickets = 0;
        if (model->upload(tiled.data(), tiled.size(), &p).ok() &&
            model->upload(pattern_bytes.data(), pattern_bytes.size(), &pattern_memory).ok() &&
            model->upload(positions.data(), positions.size() * sizeof(uint32_t), &position_memory).ok() &&
            model->upload(&no_tickets, sizeof(no_tickets), &tickets).ok()) {
            td.weights = static_cast<const uint8_t*>(p);
            model->tiled_tickets = static_cast<uint32_t*>(tickets);
            for (size_t i = 0; i < patterns.size(); ++i)
                model->tiled_patterns.push_back(static_cast<const uint8_t*>(pattern_memory) + i * kPatternBytes);
            for (TiledMipPlan& plan : plans)
                plan.mip.positions = static_cast<const uint4*>(position_memory) + plan.first_position;
            model->tiled_mips = std::move(plans);
            model->tiled_ready = true;
            model->tiled_hidden_scaled = scaled;
            // NTC 0.9's widths or narrower: the kernel that leaves the padding out.
            model->tiled_widths = layers[1].output_width <= tiled_hidden_width(TiledWidths::w64_48_32, 1) &&
                                          layers[2].output_width <= tiled_hidden_width(TiledWidths::w64_48_32, 2)
                                      ? TiledWidths::w64_48_32
                                      : TiledWidths::w64_64_64;
        } else {
            cudaGetLastError();
        }
    }
    for (int m = 0; m < d.mip_count; ++m) {
        model->output_offset.push_back(model->output_floats);
        model->output_floats += model->mip_texels(m) * static_cast<size_t>(d.channel_count);
    }
    return CudaDecoder(std::move(model));
}

}  // namespace nmc
