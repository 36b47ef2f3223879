// Test-only pack surgery: raw sections of the golden pack, reassembly, checksum repair.
#include "tests/format/pack_surgery.h"

#include <algorithm>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "format/payload.h"
#include "tests/format/golden_pack.h"

namespace nmc::testing {

RawSections sections_of(const Pack& pack) {
    Result<std::vector<uint8_t>> bytes = write_pack(pack, golden_write_options());
    ContainerInfo info;
    ProblemList problems(false);
    const std::vector<LoadedSection> sections = read_container(bytes->data(), bytes->size(), info, problems);
    RawSections raw;
    raw.meta = nlohmann::ordered_json::parse(sections[0].raw, sections[0].raw + sections[0].entry.raw_size);
    raw.latn.assign(sections[1].raw, sections[1].raw + sections[1].entry.raw_size);
    raw.wght.assign(sections[2].raw, sections[2].raw + sections[2].entry.raw_size);
    return raw;
}

RawSections golden_sections() {
    return sections_of(make_golden_pack());
}

std::vector<SectionPayload> payloads(const RawSections& sections) {
    const std::string meta = sections.meta.dump();
    return {{"META", true, std::vector<uint8_t>(meta.begin(), meta.end())},
            {"LATN", true, sections.latn},
            {"WGHT", true, sections.wght}};
}

std::vector<uint8_t> assemble(const std::vector<SectionPayload>& sections) {
    return write_container(sections, false, 0).value();
}

std::vector<uint8_t> assemble(const RawSections& sections) {
    return assemble(payloads(sections));
}

void fix_checksums(std::vector<uint8_t>& bytes) {
    const uint32_t count = load_u32_le(bytes.data() + 24);
    store_u32_le(bytes.data() + 40, crc32c(bytes.data() + kHeaderSize, kSectionEntrySize * count));
    store_u32_le(bytes.data() + 60, crc32c(bytes.data(), 60));
}

size_t entry_offset(size_t index) {
    return kHeaderSize + kSectionEntrySize * index;
}

std::vector<uint8_t> zstd_frame_without_content_size(const std::vector<uint8_t>& content, int window_log) {
    std::vector<uint8_t> frame = {0x28, 0xB5, 0x2F, 0xFD};  // RFC 8878 3.1.1: magic 0xFD2FB528, little-endian
    frame.push_back(0x00);  // frame header descriptor: no content size, not single segment, no checksum, no dictionary
    frame.push_back(static_cast<uint8_t>((window_log - 10) << 3));  // window descriptor: exponent, mantissa 0
    constexpr size_t kMaxBlock = size_t{128} << 10;                 // RFC 8878 3.1.1.2.3: Block_Maximum_Size
    size_t at = 0;
    do {
        const size_t n = std::min(kMaxBlock, content.size() - at);
        const bool last = at + n == content.size();
        const uint32_t header = (last ? 1u : 0u) | 0u << 1 | static_cast<uint32_t>(n) << 3;  // type 0: raw block
        for (int i = 0; i < 3; ++i) frame.push_back(static_cast<uint8_t>(header >> (8 * i)));
        frame.insert(frame.end(), content.begin() + static_cast<long>(at), content.begin() + static_cast<long>(at + n));
        at += n;
    } while (at < content.size());
    return frame;
}

std::vector<uint8_t> with_zstd_latn(const std::vector<uint8_t>& frame, uint64_t raw_size) {
    std::vector<SectionPayload> p = payloads(golden_sections());
    p[1].raw = frame;
    std::vector<uint8_t> bytes = assemble(p);
    const size_t e = entry_offset(1);
    bytes[e + 4] = 1 | (1 << 1);
    store_u64_le(bytes.data() + e + 24, raw_size);
    fix_checksums(bytes);
    return bytes;
}

}  // namespace nmc::testing
