// spec 6: latent grid levels as LSB-first bit streams, each level starting on a 16-byte boundary.
#include "format/payload.h"

namespace nmc {
namespace {

uint64_t code_count(const LatentLevel& l, int feature_count) {
    return static_cast<uint64_t>(l.width) * static_cast<uint64_t>(l.height) * static_cast<uint64_t>(feature_count);
}

// n_k = ceil(w_k * h_k * F * b_k / 8). At most 16384^2 * 16 * 8 bits: no overflow in 64 bits.
uint64_t level_bytes(const LatentLevel& l, int feature_count) {
    return (code_count(l, feature_count) * static_cast<uint64_t>(l.bits) + 7) / 8;
}

std::string level_name(size_t k) {
    return "section 'LATN': level " + std::to_string(k);
}

}  // namespace

int latent_level_size(int size, int grid_scale, int level) {
    const int64_t divisor = static_cast<int64_t>(grid_scale) << level;
    const int64_t n = (static_cast<int64_t>(size) + divisor - 1) / divisor;
    return n > 1 ? static_cast<int>(n) : 1;
}

std::vector<uint64_t> latent_level_offsets(const LatentGrids& latents) {
    std::vector<uint64_t> offsets;
    uint64_t end = 0;
    for (const LatentLevel& l : latents.levels) {
        offsets.push_back(round_up(end, kLatentLevelAlignment));
        end = offsets.back() + level_bytes(l, latents.feature_count);
    }
    return offsets;
}

uint64_t latent_section_size(const LatentGrids& latents) {
    if (latents.levels.empty()) return 0;
    return latent_level_offsets(latents).back() + level_bytes(latents.levels.back(), latents.feature_count);
}

Status check_latent_codes(const LatentGrids& latents) {
    for (size_t k = 0; k < latents.levels.size(); ++k) {
        const LatentLevel& l = latents.levels[k];
        const uint64_t expected = code_count(l, latents.feature_count);
        if (l.codes.size() != expected)
            return Status(StatusCode::invalid_argument, "latent level " + std::to_string(k) + ": expected " +
                                                            std::to_string(expected) + " codes, got " +
                                                            std::to_string(l.codes.size()));
        const unsigned limit = 1u << l.bits;
        for (size_t i = 0; i < l.codes.size(); ++i)
            if (l.codes[i] >= limit)
                return Status(StatusCode::invalid_argument,
                              "latent level " + std::to_string(k) + ": code " + std::to_string(i) + " is " +
                                  std::to_string(l.codes[i]) + ", beyond " + std::to_string(l.bits) + " bits");
    }
    return Status::success();
}

std::vector<uint8_t> pack_latents(const LatentGrids& latents) {
    std::vector<uint8_t> out(static_cast<size_t>(latent_section_size(latents)), 0);
    const std::vector<uint64_t> offsets = latent_level_offsets(latents);
    for (size_t k = 0; k < latents.levels.size(); ++k) {
        const LatentLevel& l = latents.levels[k];
        const auto begin = static_cast<size_t>(offsets[k]);
        const auto bits = static_cast<size_t>(l.bits);
        for (size_t i = 0; i < l.codes.size(); ++i) {
            const size_t p = i * bits;  // bit p of the stream is bit p mod 8 of byte p div 8
            out[begin + p / 8] = static_cast<uint8_t>(out[begin + p / 8] | l.codes[i] << (p % 8));
        }
    }
    return out;
}

Status unpack_latents(const uint8_t* data, size_t size, LatentGrids& latents) {
    const uint64_t expected = latent_section_size(latents);
    if (expected != size)
        return Status(StatusCode::corrupt, "section 'LATN': expected " + std::to_string(expected) +
                                               " bytes from the metadata, got " + std::to_string(size));
    const std::vector<uint64_t> offsets = latent_level_offsets(latents);
    uint64_t offset = 0;  // the end of the level before
    for (size_t k = 0; k < latents.levels.size(); ++k) {
        LatentLevel& l = latents.levels[k];
        const uint64_t begin = offsets[k];
        for (uint64_t i = offset; i < begin; ++i)
            if (data[i] != 0)
                return Status(StatusCode::corrupt,
                              level_name(k) + ": non-zero padding byte at offset " + std::to_string(i));
        const uint64_t count = code_count(l, latents.feature_count);
        const uint8_t* stream = data + begin;
        const auto bits = static_cast<uint64_t>(l.bits);
        const unsigned mask = (1u << l.bits) - 1u;
        // The section size matched the metadata, so count bytes (<= 8 x the section) fit memory bounds.
        l.codes.resize(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i) {
            const uint64_t p = i * bits;
            l.codes[static_cast<size_t>(i)] = static_cast<uint8_t>((stream[p / 8] >> (p % 8)) & mask);
        }
        const uint64_t used_bits = count * bits;
        const uint64_t bytes = level_bytes(l, latents.feature_count);
        if (used_bits % 8 != 0 && (stream[bytes - 1] >> (used_bits % 8)) != 0)
            return Status(StatusCode::corrupt, level_name(k) + ": unused bits at the end of the level are not zero");
        offset = begin + bytes;
    }
    return Status::success();
}

}  // namespace nmc
