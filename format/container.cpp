// Reading and writing the .nmc container (spec 3 and 4): header, section table, canonical layout, CRC-32C
// checksums and zstd. Every field of a file is checked before it is used to index or allocate.
#include "format/container.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "format/section_sizes.h"

namespace nmc {
namespace {

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string hex_bytes(const uint8_t* data, size_t size) {
    std::string s;
    for (size_t i = 0; i < size; ++i) {
        char buf[4];
        std::snprintf(buf, sizeof buf, i == 0 ? "%02X" : " %02X", data[i]);
        s += buf;
    }
    return s;
}

// Fuzzing builds do not compare checksums, so that the fuzzer reaches the parsers behind them (libpng and
// zstd do the same); every other check stays. Only fuzzing builds (tests/fuzz, OSS-Fuzz) define this macro.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kCompareChecksums = false;
#else
constexpr bool kCompareChecksums = true;
#endif

// spec 3.3: where the first section starts.
uint64_t first_section_offset(uint64_t section_count) {
    return round_up<uint64_t>(kHeaderSize + kSectionEntrySize * section_count, kSectionAlignment);
}

// The one checker for zstd calls: turns a zstd error code into a Status naming the call.
Status zstd_check(size_t rc, const char* call, const std::string& where) {
    if (!ZSTD_isError(rc)) return Status::success();
    const StatusCode code =
        ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation ? StatusCode::out_of_memory : StatusCode::corrupt;
    return Status(code, where + ": " + call + " failed: " + ZSTD_getErrorName(rc));
}

struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

Status corrupt(const std::string& message) {
    return Status(StatusCode::corrupt, message);
}

std::string section_name(const SectionEntry& e) {
    return "section " + quote_fourcc(e.fourcc);
}

// True when every byte of [begin, end) is zero.
bool all_zero(const uint8_t* data, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i)
        if (data[i] != 0) return false;
    return true;
}

// spec 3.4: decompresses one zstd frame into section.decompressed, in a stream. Neither raw_size nor the frame's
// own content size is trusted for the allocation: the buffer starts small and doubles as bytes arrive, never
// beyond raw_size + 1 (the spare byte shows a frame that runs long), so a frame costs memory for the bytes it
// really produces (at most 3 x, while doubling) plus zstd's window (spec 9), not for what its sizes claim.
Status decompress(const uint8_t* stored, LoadedSection& section) {
    const std::string where = section_name(section.entry);
    const uint64_t stored_size = section.entry.stored_size;
    const uint64_t raw_size = section.entry.raw_size;
    const size_t frame_size = ZSTD_findFrameCompressedSize(stored, stored_size);
    NMC_RETURN_IF_ERROR(zstd_check(frame_size, "ZSTD_findFrameCompressedSize", where));
    if (frame_size != stored_size)
        return corrupt(where + ": expected a single zstd frame of " + std::to_string(stored_size) +
                       " bytes, the first frame is " + std::to_string(frame_size) + " bytes");
    const unsigned long long content_size = ZSTD_getFrameContentSize(stored, stored_size);
    if (content_size == ZSTD_CONTENTSIZE_ERROR) return corrupt(where + ": not a zstd frame");
    if (content_size != ZSTD_CONTENTSIZE_UNKNOWN && content_size != raw_size)
        return corrupt(where + ": zstd frame content size " + std::to_string(content_size) + " differs from raw_size " +
                       std::to_string(raw_size));
    std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
    if (!dctx) return Status(StatusCode::internal, where + ": ZSTD_createDCtx failed");
    NMC_RETURN_IF_ERROR(zstd_check(ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kMaxZstdWindowLog),
                                   "ZSTD_DCtx_setParameter", where));
    constexpr uint64_t kFirstChunk = uint64_t{1} << 20;
    // raw_size was checked against spec 9 (1 GiB, 64 x stored) before, so raw_size + 1 fits a size_t.
    const uint64_t capacity_limit = raw_size + 1;
    std::vector<uint8_t>& out = section.decompressed;
    out.resize(static_cast<size_t>(std::min(capacity_limit, kFirstChunk)));
    ZSTD_inBuffer in{stored, static_cast<size_t>(stored_size), 0};
    size_t produced = 0;
    for (;;) {
        ZSTD_outBuffer o{out.data(), out.size(), produced};
        const size_t consumed_before = in.pos;
        const size_t remaining = ZSTD_decompressStream(dctx.get(), &o, &in);
        NMC_RETURN_IF_ERROR(zstd_check(remaining, "ZSTD_decompressStream", where));
        const bool progressed = o.pos != produced || in.pos != consumed_before;
        produced = o.pos;
        if (remaining == 0) break;  // the frame is complete
        if (produced == out.size()) {
            if (out.size() == capacity_limit)
                return corrupt(where + ": zstd frame decompresses to more than raw_size " + std::to_string(raw_size) +
                               " bytes");
            out.resize(static_cast<size_t>(std::min(capacity_limit, uint64_t{out.size()} * 2)));
        } else if (!progressed || in.pos == in.size) {
            return corrupt(where + ": zstd frame ends after " + std::to_string(produced) +
                           " decompressed bytes, before its last block");
        }
    }
    if (produced != raw_size)
        return corrupt(where + ": zstd frame decompressed to " + std::to_string(produced) + " bytes, raw_size is " +
                       std::to_string(raw_size));
    out.resize(static_cast<size_t>(raw_size));
    section.raw = out.data();
    return Status::success();
}

// spec 3.2, 3.3, 9: the checks of one table entry that need no other entry. `expected_offset` is where the
// canonical layout puts it.
Status check_entry(const SectionEntry& e, uint32_t flags, uint64_t reserved, uint64_t expected_offset,
                   uint64_t file_size) {
    const std::string where = section_name(e);
    if (flags & ~uint32_t{7})
        return corrupt(where + ": reserved flag bits set (expected 0, got " + hex32(flags & ~uint32_t{7}) + ")");
    if (e.compression > 1)
        return corrupt(where + ": reserved compression method " + std::to_string(e.compression) +
                       " (expected 0 none or 1 zstd)");
    if (reserved != 0) return corrupt(where + ": reserved field is not zero");
    if (e.offset % kSectionAlignment != 0)
        return corrupt(where + ": offset " + std::to_string(e.offset) + " is not a multiple of " +
                       std::to_string(kSectionAlignment));
    if (e.offset < expected_offset)
        return corrupt(where + ": offset " + std::to_string(e.offset) + " overlaps what precedes it (expected " +
                       std::to_string(expected_offset) + ")");
    if (e.offset > expected_offset)
        return corrupt(where + ": offset " + std::to_string(e.offset) + " breaks the canonical layout (expected " +
                       std::to_string(expected_offset) + ")");
    // offset <= file_size here only if the entry lies inside; compare by subtraction to avoid overflow.
    if (e.offset > file_size || e.stored_size > file_size - e.offset)
        return corrupt(where + ": stored bytes [" + std::to_string(e.offset) + ", +" + std::to_string(e.stored_size) +
                       ") lie outside the file of " + std::to_string(file_size) + " bytes");
    if (e.raw_size > kMaxSectionRawSize)
        return Status(StatusCode::limit_exceeded, where + ": raw_size " + std::to_string(e.raw_size) +
                                                      " exceeds the limit of " + std::to_string(kMaxSectionRawSize));
    if (e.fourcc == "META" && e.raw_size > kMaxMetadataSize)
        return Status(StatusCode::limit_exceeded, where + ": raw_size " + std::to_string(e.raw_size) +
                                                      " exceeds the limit of " + std::to_string(kMaxMetadataSize));
    if (e.compression == 0 && e.raw_size != e.stored_size)
        return corrupt(where + ": uncompressed but raw_size " + std::to_string(e.raw_size) +
                       " differs from stored_size " + std::to_string(e.stored_size));
    if (e.compression == 1 && e.raw_size / kMaxCompressionRatio > e.stored_size)
        return Status(StatusCode::limit_exceeded, where + ": raw_size " + std::to_string(e.raw_size) +
                                                      " is more than " + std::to_string(kMaxCompressionRatio) +
                                                      " x stored_size " + std::to_string(e.stored_size));
    return Status::success();
}

// spec 4: the sections this version knows, all required.
bool is_known_section(const std::string& fourcc) {
    return fourcc == "META" || fourcc == "LATN" || fourcc == "WGHT";
}

}  // namespace

std::vector<uint64_t> section_offsets(const std::vector<uint64_t>& stored_sizes) {
    std::vector<uint64_t> offsets;
    uint64_t offset = first_section_offset(stored_sizes.size());
    for (const uint64_t size : stored_sizes) {
        offsets.push_back(offset);
        offset = round_up(offset + size, kSectionAlignment);
    }
    return offsets;
}

uint64_t container_size(const std::vector<uint64_t>& stored_sizes) {
    return section_offsets(stored_sizes).back() + stored_sizes.back();
}

uint64_t container_overhead_bound(size_t section_count) {
    return kHeaderSize + section_count * (kSectionEntrySize + kSectionAlignment - 1);
}

std::string quote_fourcc(const std::string& fourcc) {
    for (const char c : fourcc)
        if (c < 0x20 || c > 0x7E)
            return "0x" + hex_bytes(reinterpret_cast<const uint8_t*>(fourcc.data()), fourcc.size());
    return "'" + fourcc + "'";
}

const std::vector<uint8_t>* CompressedSectionCache::find(const std::string& fourcc, const std::vector<uint8_t>& raw,
                                                         int level) const {
    const auto it = entries_.find(fourcc);
    if (it == entries_.end() || it->second.level != level || it->second.raw != raw) return nullptr;
    return &it->second.frame;
}

void CompressedSectionCache::store(const std::string& fourcc, const std::vector<uint8_t>& raw, int level,
                                   std::vector<uint8_t> frame) {
    entries_[fourcc] = Entry{raw, level, std::move(frame)};
}

Result<std::vector<uint8_t>> write_container(const std::vector<SectionPayload>& sections, bool compress, int zstd_level,
                                             CompressedSectionCache* cache, uint16_t version_major) {
    if (sections.empty() || sections.size() > kMaxSectionCount)
        return Status(StatusCode::invalid_argument, "section count " + std::to_string(sections.size()) +
                                                        " outside 1.." + std::to_string(kMaxSectionCount));
    if (compress && (zstd_level < ZSTD_minCLevel() || zstd_level > ZSTD_maxCLevel()))
        return Status(StatusCode::invalid_argument, "zstd level " + std::to_string(zstd_level) + " outside " +
                                                        std::to_string(ZSTD_minCLevel()) + ".." +
                                                        std::to_string(ZSTD_maxCLevel()));
    std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx;
    if (compress) {
        cctx.reset(ZSTD_createCCtx());
        if (!cctx) return Status(StatusCode::internal, "ZSTD_createCCtx failed");
    }

    std::set<std::string> seen;
    std::vector<SectionEntry> entries(sections.size());
    std::vector<std::vector<uint8_t>> compressed(sections.size());
    std::vector<uint64_t> stored_sizes(sections.size());
    for (size_t i = 0; i < sections.size(); ++i) {
        const SectionPayload& s = sections[i];
        if (s.fourcc.size() != 4 || quote_fourcc(s.fourcc).front() != '\'')
            return Status(StatusCode::invalid_argument,
                          "fourcc " + quote_fourcc(s.fourcc) + " is not 4 printable ASCII characters");
        if (!seen.insert(s.fourcc).second)
            return Status(StatusCode::invalid_argument, "section " + quote_fourcc(s.fourcc) + " appears twice");
        if (s.raw.size() > kMaxSectionRawSize)
            return Status(StatusCode::limit_exceeded, "section " + quote_fourcc(s.fourcc) + ": " +
                                                          std::to_string(s.raw.size()) + " bytes exceed the limit of " +
                                                          std::to_string(kMaxSectionRawSize));
        SectionEntry& e = entries[i];
        e.fourcc = s.fourcc;
        e.required = s.required;
        e.raw_size = s.raw.size();
        e.raw_crc = crc32c(s.raw.data(), s.raw.size());
        if (compress && !s.raw.empty()) {
            const std::vector<uint8_t>* cached = cache ? cache->find(s.fourcc, s.raw, zstd_level) : nullptr;
            std::vector<uint8_t> buffer;
            if (cached) {
                buffer = *cached;
            } else {
                buffer.resize(ZSTD_compressBound(s.raw.size()));
                const size_t n =
                    ZSTD_compressCCtx(cctx.get(), buffer.data(), buffer.size(), s.raw.data(), s.raw.size(), zstd_level);
                if (ZSTD_isError(n))
                    return Status(StatusCode::internal, "section " + quote_fourcc(s.fourcc) +
                                                            ": ZSTD_compressCCtx failed: " + ZSTD_getErrorName(n));
                buffer.resize(n);
                if (cache) cache->store(s.fourcc, s.raw, zstd_level, buffer);
            }
            // spec 3.4 and 9: only where smaller, and never beyond the ratio a reader accepts.
            const size_t n = buffer.size();
            if (n < s.raw.size() && s.raw.size() / kMaxCompressionRatio <= n) {
                compressed[i] = std::move(buffer);
                e.compression = static_cast<int>(Compression::zstd);
            }
        }
        const std::vector<uint8_t>& stored = e.compression ? compressed[i] : s.raw;
        e.stored_size = stored.size();
        e.stored_crc = crc32c(stored.data(), stored.size());
        stored_sizes[i] = e.stored_size;
    }
    const std::vector<uint64_t> offsets = section_offsets(stored_sizes);
    for (size_t i = 0; i < entries.size(); ++i) entries[i].offset = offsets[i];
    const uint64_t file_size = container_size(stored_sizes);
    if (file_size > kMaxFileSize)
        return Status(StatusCode::limit_exceeded, "pack would be " + std::to_string(file_size) +
                                                      " bytes, the limit is " + std::to_string(kMaxFileSize));

    // spec 3.1 and 3.2, field by field.
    std::vector<uint8_t> out;
    out.reserve(static_cast<size_t>(file_size));
    ByteWriter w(out);
    w.bytes(kMagic, sizeof kMagic);
    w.u16(version_major);
    w.u16(kFormatVersionMinor);
    w.u32(kHeaderSize);
    w.u64(file_size);
    w.u32(static_cast<uint32_t>(entries.size()));
    w.u32(0);            // flags
    w.u64(kHeaderSize);  // section_table_offset
    w.u32(0);            // section_table_crc, patched below
    for (int i = 0; i < 16; ++i) w.u8(0);
    w.u32(0);  // header_crc, patched below
    for (const SectionEntry& e : entries) {
        w.bytes(e.fourcc.data(), 4);
        w.u32((e.required ? 1u : 0u) | static_cast<uint32_t>(e.compression) << 1);
        w.u64(e.offset);
        w.u64(e.stored_size);
        w.u64(e.raw_size);
        w.u32(e.stored_crc);
        w.u32(e.raw_crc);
        w.u64(0);
    }
    store_u32_le(out.data() + 40, crc32c(out.data() + kHeaderSize, kSectionEntrySize * entries.size()));
    store_u32_le(out.data() + 60, crc32c(out.data(), 60));
    for (size_t i = 0; i < sections.size(); ++i) {
        w.pad_to(kSectionAlignment);
        const std::vector<uint8_t>& stored = entries[i].compression ? compressed[i] : sections[i].raw;
        w.bytes(stored.data(), stored.size());
    }
    return out;
}

std::vector<LoadedSection> read_container(const uint8_t* data, size_t size, ContainerInfo& info,
                                          ProblemList& problems) {
    std::vector<LoadedSection> sections;
    // spec 3.1: the magic first, so that a file of another kind is "not a pack" rather than "corrupt".
    if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0) {
        const size_t n = size < sizeof kMagic ? size : sizeof kMagic;
        problems.add(
            Status(StatusCode::not_recognized, "not an nmc pack (expected magic 89 4E 4D 43 0D 0A 1A 0A, got " +
                                                   (n ? hex_bytes(data, n) : std::string("an empty file")) + ")"));
        return sections;
    }
    if (size < kHeaderSize) {
        problems.add(corrupt("truncated: the file is " + std::to_string(size) + " bytes, the header alone is " +
                             std::to_string(kHeaderSize)));
        return sections;
    }
    ByteReader r(data + sizeof kMagic, kHeaderSize - sizeof kMagic);
    info.version_major = r.u16();
    info.version_minor = r.u16();
    const uint32_t header_size = r.u32();
    info.file_size = r.u64();
    const uint32_t section_count = r.u32();
    const uint32_t flags = r.u32();
    const uint64_t table_offset = r.u64();
    const uint32_t table_crc = r.u32();
    const uint8_t* reserved = r.bytes(16);
    const uint32_t header_crc = r.u32();

    // spec 11: the version before the checksum, since another major may lay its header out differently.
    if (info.version_major < kFormatVersionMajorFloat32 || info.version_major > kFormatVersionMajorValueEncoding) {
        problems.add(Status(StatusCode::version_unsupported,
                            "format version " + std::to_string(info.version_major) + "." +
                                std::to_string(info.version_minor) + " is not supported (this reader reads " +
                                std::to_string(kFormatVersionMajorFloat32) + ".x to " +
                                std::to_string(kFormatVersionMajorValueEncoding) + ".x)"));
        return sections;
    }
    const uint32_t computed_header_crc = crc32c(data, 60);
    if (kCompareChecksums && header_crc != computed_header_crc) {
        problems.add(corrupt("header checksum mismatch (expected " + hex32(header_crc) + ", got " +
                             hex32(computed_header_crc) + ")"));
        return sections;
    }
    if (header_size != kHeaderSize &&
        problems.add(corrupt("header_size: expected 64, got " + std::to_string(header_size))))
        return sections;
    if (flags != 0 && problems.add(corrupt("header: reserved flags set (expected 0, got " + hex32(flags) + ")")))
        return sections;
    if (!all_zero(reserved, 0, 16) && problems.add(corrupt("header: reserved bytes 44..59 are not zero")))
        return sections;
    if (info.file_size > kMaxFileSize || size > kMaxFileSize) {
        problems.add(Status(StatusCode::limit_exceeded, "file_size " + std::to_string(info.file_size) +
                                                            " exceeds the limit of " + std::to_string(kMaxFileSize)));
        return sections;
    }
    if (info.file_size != size &&
        problems.add(corrupt("file_size: the header says " + std::to_string(info.file_size) + " bytes, the file has " +
                             std::to_string(size) + (size < info.file_size ? " (truncated)" : " (trailing bytes)"))))
        return sections;
    if (section_count == 0 || section_count > kMaxSectionCount) {
        problems.add(Status(section_count == 0 ? StatusCode::corrupt : StatusCode::limit_exceeded,
                            "section_count: expected 1.." + std::to_string(kMaxSectionCount) + ", got " +
                                std::to_string(section_count)));
        return sections;
    }
    if (table_offset != kHeaderSize) {
        problems.add(corrupt("section_table_offset: expected 64, got " + std::to_string(table_offset)));
        return sections;
    }
    const uint64_t table_size = kSectionEntrySize * section_count;
    if (kHeaderSize + table_size > size) {
        problems.add(corrupt("truncated: the section table of " + std::to_string(section_count) +
                             " entries ends at byte " + std::to_string(kHeaderSize + table_size) + ", the file has " +
                             std::to_string(size)));
        return sections;
    }
    const uint32_t computed_table_crc = crc32c(data + kHeaderSize, table_size);
    if (kCompareChecksums && table_crc != computed_table_crc) {
        problems.add(corrupt("section table checksum mismatch (expected " + hex32(table_crc) + ", got " +
                             hex32(computed_table_crc) + ")"));
        return sections;
    }

    // spec 3.2 and 3.3: entries, layout and padding.
    ByteReader t(data + kHeaderSize, table_size);
    std::set<std::string> seen;
    uint64_t expected_offset = first_section_offset(section_count);
    uint64_t gap_begin = kHeaderSize + table_size;  // where the zero padding before the next section starts
    bool layout_ok = true;
    for (uint32_t i = 0; i < section_count; ++i) {
        LoadedSection s;
        SectionEntry& e = s.entry;
        const uint8_t* fourcc = t.bytes(4);
        e.fourcc.assign(reinterpret_cast<const char*>(fourcc), 4);
        const uint32_t entry_flags = t.u32();
        e.required = (entry_flags & 1u) != 0;
        e.compression = static_cast<int>((entry_flags >> 1) & 3u);
        e.offset = t.u64();
        e.stored_size = t.u64();
        e.raw_size = t.u64();
        e.stored_crc = t.u32();
        e.raw_crc = t.u32();
        const uint64_t entry_reserved = t.u64();
        info.sections.push_back(e);

        if (!seen.insert(e.fourcc).second && problems.add(corrupt(section_name(e) + ": duplicate fourcc"))) return {};
        Status entry_status = check_entry(e, entry_flags, entry_reserved, expected_offset, size);
        if (!entry_status.ok()) {
            if (problems.add(entry_status)) return {};
            // Without a trustworthy offset and size the layout of the following sections cannot be checked.
            if (e.offset != expected_offset || e.offset > size || e.stored_size > size - e.offset) {
                layout_ok = false;
                break;
            }
        } else {
            s.usable = true;
        }
        if (!all_zero(data, gap_begin, e.offset) &&
            problems.add(corrupt(section_name(e) + ": non-zero padding in bytes " + std::to_string(gap_begin) + ".." +
                                 std::to_string(e.offset - 1))))
            return {};
        gap_begin = e.offset + e.stored_size;
        expected_offset = round_up<uint64_t>(gap_begin, kSectionAlignment);
        sections.push_back(std::move(s));
    }
    if (layout_ok && gap_begin != size &&
        problems.add(corrupt("the last section ends at byte " + std::to_string(gap_begin) + ", the file has " +
                             std::to_string(size) + " bytes (trailing bytes)")))
        return {};

    // spec 3.4: checksums and decompression, section by section.
    for (LoadedSection& s : sections) {
        if (!s.usable) continue;
        s.usable = false;
        const SectionEntry& e = s.entry;
        const uint8_t* stored = data + e.offset;
        const uint32_t stored_crc = crc32c(stored, e.stored_size);
        if (kCompareChecksums && stored_crc != e.stored_crc) {
            if (problems.add(corrupt(section_name(e) + ": stored checksum mismatch (expected " + hex32(e.stored_crc) +
                                     ", got " + hex32(stored_crc) + ")")))
                return {};
            continue;
        }
        if (e.compression == static_cast<int>(Compression::zstd)) {
            Status status = decompress(stored, s);
            if (!status.ok()) {
                if (problems.add(status)) return {};
                continue;
            }
        } else {
            s.raw = stored;
        }
        const uint32_t raw_crc = crc32c(s.raw, e.raw_size);
        if (kCompareChecksums && raw_crc != e.raw_crc) {
            if (problems.add(corrupt(section_name(e) + ": raw checksum mismatch (expected " + hex32(e.raw_crc) +
                                     ", got " + hex32(raw_crc) + ")")))
                return {};
            continue;
        }
        s.usable = true;
    }

    // spec 4: required sections.
    for (const LoadedSection& s : sections) {
        const SectionEntry& e = s.entry;
        if (is_known_section(e.fourcc) && !e.required &&
            problems.add(corrupt(section_name(e) + ": the required flag must be set")))
            return {};
        if (!is_known_section(e.fourcc) && e.required &&
            problems.add(corrupt(section_name(e) + ": unknown required section")))
            return {};
    }
    if (layout_ok) {
        for (const char* fourcc : {"META", "LATN", "WGHT"})
            if (!seen.count(fourcc) && problems.add(corrupt(std::string("missing required section '") + fourcc + "'")))
                return {};
    }
    return sections;
}

}  // namespace nmc
