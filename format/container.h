// The .nmc container (spec 3 and 4): header, section table, canonical layout, checksums and zstd. Knows
// nothing of what the sections hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "format/limits.h"
#include "format/pack.h"
#include "format/problems.h"

namespace nmc {

// spec 3.1
constexpr uint8_t kMagic[8] = {0x89, 'N', 'M', 'C', 0x0D, 0x0A, 0x1A, 0x0A};

enum class Compression { none = 0, zstd = 1 };

// One section's raw (uncompressed) bytes, as handed to the container writer.
struct SectionPayload {
    std::string fourcc;  // four ASCII characters
    bool required = true;
    std::vector<uint8_t> raw;
};

// zstd's output for sections written before, reused when a section's raw bytes and level are the same: the
// compressor serialises a pack several times while only its metadata changes (compressor's finish_compression),
// and zstd at level 19 takes about a second on a 2K material's latents. One entry per fourcc, the last written.
class CompressedSectionCache {
public:
    // The zstd frame of `raw` at `level` if this cache holds it (the raw bytes are compared in full).
    const std::vector<uint8_t>* find(const std::string& fourcc, const std::vector<uint8_t>& raw, int level) const;
    void store(const std::string& fourcc, const std::vector<uint8_t>& raw, int level, std::vector<uint8_t> frame);

private:
    struct Entry {
        std::vector<uint8_t> raw;
        int level = 0;
        std::vector<uint8_t> frame;
    };
    std::map<std::string, Entry> entries_;
};

// Lays the sections out canonically (spec 3.3) in the order given, under format version `version_major`.0 (spec 3.1),
// compressing each with zstd where
// `compress` is set and that makes it smaller without breaking the 64:1 ratio limit of spec 9. With a `cache`,
// sections it holds are not compressed again (the file is the same byte for byte) and new ones are stored in it.
// Fails with invalid_argument for a bad fourcc or zstd level, limit_exceeded beyond spec 9.
Result<std::vector<uint8_t>> write_container(const std::vector<SectionPayload>& sections, bool compress, int zstd_level,
                                             CompressedSectionCache* cache = nullptr,
                                             uint16_t version_major = kFormatVersionMajorFloat32);

// One section of a parsed file. `raw` points into the file (uncompressed) or into `decompressed`.
struct LoadedSection {
    SectionEntry entry;
    std::vector<uint8_t> decompressed;
    const uint8_t* raw = nullptr;
    bool usable = false;  // every check of spec 3 passed: raw holds entry.raw_size verified bytes
};

// Checks the header, table, layout, padding and every checksum (spec 3, 4 and the container rules of 10),
// decompressing compressed sections. Records problems in `problems`; returns the sections that could be
// loaded (all of them when no problem was found). Fills `info` once the header and table were read.
std::vector<LoadedSection> read_container(const uint8_t* data, size_t size, ContainerInfo& info, ProblemList& problems);

// "'META'", or a hex form for fourccs that are not printable ASCII, for messages.
std::string quote_fourcc(const std::string& fourcc);

}  // namespace nmc
