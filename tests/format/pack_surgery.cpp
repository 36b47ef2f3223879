// Test-only pack surgery: raw sections of the golden pack, reassembly, checksum repair.
#include "tests/format/pack_surgery.h"

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

}  // namespace nmc::testing
