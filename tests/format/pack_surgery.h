// Test helpers that build packs breaking exactly one rule while every checksum stays valid, so a test sees
// the specific error for that rule rather than a checksum mismatch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "format/container.h"

namespace nmc::testing {

// The golden pack's three raw sections.
struct RawSections {
    nlohmann::ordered_json meta;
    std::vector<uint8_t> latn;
    std::vector<uint8_t> wght;
};
RawSections sections_of(const Pack& pack);
RawSections golden_sections();

// A canonical, uncompressed container of META, LATN and WGHT (all required).
std::vector<uint8_t> assemble(const RawSections& sections);
std::vector<uint8_t> assemble(const std::vector<SectionPayload>& sections);
std::vector<SectionPayload> payloads(const RawSections& sections);

// Recomputes the section-table and header checksums after a test patched header or table bytes.
void fix_checksums(std::vector<uint8_t>& bytes);

// File offset of table entry `index` (spec 3.2).
size_t entry_offset(size_t index);

// A zstd frame (RFC 8878) written by hand that holds `content` in raw blocks, with no content size in its header
// and a window of 2^window_log bytes (10..41): the frame a writer that streams makes, which zstd's own API writes
// only on request.
std::vector<uint8_t> zstd_frame_without_content_size(const std::vector<uint8_t>& content, int window_log);

// The golden pack whose LATN section holds `frame` as its stored bytes, flagged zstd with the given raw_size
// (the header, table and stored checksums made consistent; the raw checksum is the stored one).
std::vector<uint8_t> with_zstd_latn(const std::vector<uint8_t>& frame, uint64_t raw_size);

}  // namespace nmc::testing
