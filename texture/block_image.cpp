// Whole-image encoding and decoding through the block codecs.
#include "texture/block_image.h"

#include <algorithm>
#include <cassert>
#include <thread>

#include "core/number_formats.h"
#include "texture/block_codecs.h"

namespace nmc::texture {

namespace {

// ASTC's 2D block sizes, in BlockFormat's order from astc_4x4.
constexpr int kAstcBlockSizes[][2] = {{4, 4}, {5, 4},  {5, 5},  {6, 5},   {6, 6},   {8, 5},   {8, 6},
                                      {8, 8}, {10, 5}, {10, 6}, {10, 8}, {10, 10}, {12, 10}, {12, 12}};
constexpr const char* kAstcNames[] = {"astc-4x4",  "astc-5x4",  "astc-5x5",   "astc-6x5",   "astc-6x6",
                                      "astc-8x5",  "astc-8x6",  "astc-8x8",   "astc-10x5",  "astc-10x6",
                                      "astc-10x8", "astc-10x10", "astc-12x10", "astc-12x12"};

int astc_index(BlockFormat f) { return int(f) - int(BlockFormat::astc_4x4); }

}  // namespace

const char* to_string(BlockFormat f) {
    switch (f) {
        case BlockFormat::bc1: return "bc1";
        case BlockFormat::bc4: return "bc4";
        case BlockFormat::bc5: return "bc5";
        case BlockFormat::bc6h: return "bc6h";
        case BlockFormat::bc7: return "bc7";
        default: return kAstcNames[astc_index(f)];
    }
}

const std::vector<BlockFormat>& all_block_formats() {
    static const std::vector<BlockFormat> formats = [] {
        std::vector<BlockFormat> all = {BlockFormat::bc1, BlockFormat::bc4, BlockFormat::bc5, BlockFormat::bc6h,
                                        BlockFormat::bc7};
        for (int i = 0; i <= int(BlockFormat::astc_12x12) - int(BlockFormat::astc_4x4); ++i)
            all.push_back(BlockFormat(int(BlockFormat::astc_4x4) + i));
        return all;
    }();
    return formats;
}

std::optional<BlockFormat> block_format_from_string(const std::string& s) {
    for (BlockFormat f : all_block_formats())
        if (s == to_string(f)) return f;
    return std::nullopt;
}

bool is_astc(BlockFormat f) { return int(f) >= int(BlockFormat::astc_4x4); }

int block_width(BlockFormat f) { return is_astc(f) ? kAstcBlockSizes[astc_index(f)][0] : 4; }

int block_height(BlockFormat f) { return is_astc(f) ? kAstcBlockSizes[astc_index(f)][1] : 4; }

int block_bytes(BlockFormat f) { return f == BlockFormat::bc1 || f == BlockFormat::bc4 ? 8 : 16; }

int channels_held(BlockFormat f) {
    switch (f) {
        case BlockFormat::bc1: return 3;
        case BlockFormat::bc4: return 1;
        case BlockFormat::bc5: return 2;
        case BlockFormat::bc6h: return 3;
        default: return 4;  // BC7, ASTC
    }
}

double bits_per_texel(BlockFormat f) { return block_bytes(f) * 8.0 / (block_width(f) * block_height(f)); }

bool has_srgb_variant(BlockFormat f) { return f == BlockFormat::bc1 || f == BlockFormat::bc7 || is_astc(f); }

size_t level_bytes(BlockFormat f, int width, int height) {
    const int bw = block_width(f), bh = block_height(f);
    return size_t((width + bw - 1) / bw) * size_t((height + bh - 1) / bh) * size_t(block_bytes(f));
}

Rgba8Image to_rgba8(const Image& image) {
    Rgba8Image out;
    out.width = image.width;
    out.height = image.height;
    out.texels.resize(image.texel_count() * 4);
    const int n = image.channels;
    out.alpha_held = n == 4;
    for (size_t i = 0; i < image.texel_count(); ++i) {
        const float* v = &image.pixels[i * size_t(n)];
        uint8_t* o = &out.texels[i * 4];
        o[0] = quantize_u8(v[0]);
        o[1] = n == 1 ? o[0] : quantize_u8(v[1]);
        o[2] = n == 1 ? o[0] : n == 2 ? 0 : quantize_u8(v[2]);
        o[3] = n == 4 ? quantize_u8(v[3]) : 255;
    }
    return out;
}

namespace {

// The 4x4 tile at block (bx, by), edge texels repeated past the image.
void gather_tile(const Rgba8Image& image, int bx, int by, uint8_t tile[kBlockTexels * 4]) {
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
            const int sx = std::min(bx * 4 + x, image.width - 1), sy = std::min(by * 4 + y, image.height - 1);
            const uint8_t* s = &image.texels[(size_t(sy) * size_t(image.width) + size_t(sx)) * 4];
            std::copy(s, s + 4, tile + (y * 4 + x) * 4);
        }
}

void encode_tile(BlockFormat f, Bc7Effort bc7_effort, bool alpha_held, const uint8_t tile[kBlockTexels * 4],
                 uint8_t* block) {
    uint8_t channel[kBlockTexels];
    switch (f) {
        case BlockFormat::bc1: encode_bc1_block(tile, block); break;
        case BlockFormat::bc4:
            for (int t = 0; t < kBlockTexels; ++t) channel[t] = tile[4 * t];
            encode_bc4_block(channel, block);
            break;
        case BlockFormat::bc5:
            for (int c = 0; c < 2; ++c) {
                for (int t = 0; t < kBlockTexels; ++t) channel[t] = tile[4 * t + c];
                encode_bc4_block(channel, block + 8 * c);
            }
            break;
        case BlockFormat::bc7:
            encode_bc7_block(tile, block, bc7_effort, alpha_held);
            break;
        default: break;  // ASTC, BC6H: encode_blocks() is 8-bit BCn only (texture/astc.h, encode_bc6h_blocks())
    }
}

// The blocks of a width x height level of `f`: encode_block(bx, by, block) writes block (bx, by). Rows of blocks
// are dealt round-robin to `threads` workers (0: every core); each block's bytes depend on its tile alone.
template <typename EncodeBlock>
std::vector<uint8_t> encode_level(BlockFormat f, int width, int height, int threads, const EncodeBlock& encode_block) {
    const int blocks_x = (width + 3) / 4, blocks_y = (height + 3) / 4;
    std::vector<uint8_t> out(level_bytes(f, width, height));
    const size_t stride = size_t(block_bytes(f));
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::min(threads, blocks_y);
    const auto work = [&](int first) {
        for (int by = first; by < blocks_y; by += threads)
            for (int bx = 0; bx < blocks_x; ++bx)
                encode_block(bx, by, &out[(size_t(by) * size_t(blocks_x) + size_t(bx)) * stride]);
    };
    std::vector<std::thread> workers;
    for (int i = 1; i < threads; ++i) workers.emplace_back(work, i);
    work(0);
    for (std::thread& w : workers) w.join();
    return out;
}

}  // namespace

std::vector<uint8_t> encode_blocks(BlockFormat f, const Rgba8Image& image, int threads, Bc7Effort bc7_effort) {
    assert(!is_astc(f) && f != BlockFormat::bc6h);
    return encode_level(f, image.width, image.height, threads, [&](int bx, int by, uint8_t* block) {
        uint8_t tile[kBlockTexels * 4];
        gather_tile(image, bx, by, tile);
        encode_tile(f, bc7_effort, image.alpha_held, tile, block);
    });
}

std::vector<uint8_t> encode_bc6h_blocks(const Image& image, int threads) {
    const int n = image.channels;
    return encode_level(BlockFormat::bc6h, image.width, image.height, threads, [&](int bx, int by, uint8_t* block) {
        float tile[kBlockTexels * 3];
        for (int t = 0; t < kBlockTexels; ++t) {
            const int sx = std::min(bx * 4 + t % 4, image.width - 1), sy = std::min(by * 4 + t / 4, image.height - 1);
            const float* v = &image.pixels[(size_t(sy) * size_t(image.width) + size_t(sx)) * size_t(n)];
            tile[3 * t] = v[0];
            tile[3 * t + 1] = n == 1 ? v[0] : v[1];
            tile[3 * t + 2] = n == 1 ? v[0] : n == 2 ? 0.0f : v[2];
        }
        encode_bc6h_block(tile, block);
    });
}

Result<Image> decode_bc6h_blocks(int width, int height, const std::vector<uint8_t>& blocks) {
    if (width < 1 || height < 1 || blocks.size() != level_bytes(BlockFormat::bc6h, width, height))
        return Status(StatusCode::invalid_argument,
                      "bc6h level of " + std::to_string(width) + "x" + std::to_string(height) + ": expected " +
                          std::to_string(level_bytes(BlockFormat::bc6h, std::max(width, 1), std::max(height, 1))) +
                          " bytes, got " + std::to_string(blocks.size()));
    Image out(width, height, 3, SampleType::float16);
    const int blocks_x = (width + 3) / 4;
    for (size_t b = 0; b < blocks.size() / 16; ++b) {
        const int bx = int(b % size_t(blocks_x)), by = int(b / size_t(blocks_x));
        uint16_t halves[kBlockTexels * 3];
        if (!decode_bc6h_block(&blocks[b * 16], halves, Bc6hType::uf16))
            return Status(StatusCode::not_recognized,
                          "bc6h block " + std::to_string(bx) + "," + std::to_string(by) + ": reserved mode");
        for (int t = 0; t < kBlockTexels; ++t) {
            const int px = bx * 4 + t % 4, py = by * 4 + t / 4;
            if (px >= width || py >= height) continue;
            for (int c = 0; c < 3; ++c)
                out.pixels[(size_t(py) * size_t(width) + size_t(px)) * 3 + size_t(c)] =
                    fp16_to_float(halves[3 * t + c]);
        }
    }
    return out;
}

Result<Rgba8Image> decode_blocks(BlockFormat f, int width, int height, const std::vector<uint8_t>& blocks) {
    if (is_astc(f))
        return Status(StatusCode::invalid_argument,
                      std::string(to_string(f)) + ": ASTC levels are decoded through texture/astc.h");
    if (f == BlockFormat::bc6h)
        return Status(StatusCode::invalid_argument, "bc6h levels are decoded by decode_bc6h_blocks()");
    if (width < 1 || height < 1 || blocks.size() != level_bytes(f, width, height))
        return Status(StatusCode::invalid_argument,
                      std::string(to_string(f)) + " level of " + std::to_string(width) + "x" + std::to_string(height) +
                          ": expected " + std::to_string(level_bytes(f, std::max(width, 1), std::max(height, 1))) +
                          " bytes, got " + std::to_string(blocks.size()));
    Rgba8Image out;
    out.width = width;
    out.height = height;
    out.texels.resize(size_t(width) * size_t(height) * 4);
    const int blocks_x = (width + 3) / 4, blocks_y = (height + 3) / 4;
    const size_t stride = size_t(block_bytes(f));
    for (int by = 0; by < blocks_y; ++by)
        for (int bx = 0; bx < blocks_x; ++bx) {
            const uint8_t* block = &blocks[(size_t(by) * size_t(blocks_x) + size_t(bx)) * stride];
            uint8_t tile[kBlockTexels * 4];
            uint8_t channel[kBlockTexels];
            switch (f) {
                case BlockFormat::bc1: decode_bc1_block(block, tile); break;
                case BlockFormat::bc4:
                    decode_bc4_block(block, channel);
                    for (int t = 0; t < kBlockTexels; ++t)
                        tile[4 * t] = channel[t], tile[4 * t + 1] = 0, tile[4 * t + 2] = 0, tile[4 * t + 3] = 255;
                    break;
                case BlockFormat::bc5:
                    for (int c = 0; c < 2; ++c) {
                        decode_bc4_block(block + 8 * c, channel);
                        for (int t = 0; t < kBlockTexels; ++t) tile[4 * t + c] = channel[t];
                    }
                    for (int t = 0; t < kBlockTexels; ++t) tile[4 * t + 2] = 0, tile[4 * t + 3] = 255;
                    break;
                case BlockFormat::bc7:
                    if (!decode_bc7_block(block, tile))
                        return Status(StatusCode::not_recognized, "bc7 block " + std::to_string(bx) + "," +
                                                                      std::to_string(by) +
                                                                      ": reserved mode (first byte 0)");
                    break;
                default: break;  // ASTC: refused above
            }
            for (int y = 0; y < 4; ++y)
                for (int x = 0; x < 4; ++x) {
                    const int px = bx * 4 + x, py = by * 4 + y;
                    if (px >= width || py >= height) continue;
                    std::copy(tile + (y * 4 + x) * 4, tile + (y * 4 + x) * 4 + 4,
                              &out.texels[(size_t(py) * size_t(width) + size_t(px)) * 4]);
                }
        }
    return out;
}

double mean_squared_error8(const Rgba8Image& a, const Rgba8Image& b, int channels) {
    double sse = 0;
    const size_t texels = size_t(a.width) * size_t(a.height);
    for (size_t i = 0; i < texels; ++i)
        for (int c = 0; c < channels; ++c) {
            const double d = double(a.texels[i * 4 + size_t(c)]) - double(b.texels[i * 4 + size_t(c)]);
            sse += d * d;
        }
    return sse / (255.0 * 255.0) / double(std::max<size_t>(texels * size_t(channels), 1));
}

}  // namespace nmc::texture
