// One targeted test per rule of spec section 10: the reader rejects the pack with a specific StatusCode and a
// message naming the problem. Each pack breaks exactly one rule; checksums are recomputed so they pass.
#include <gtest/gtest.h>

#include <cstring>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "core/file_io.h"
#include "tests/format/golden_pack.h"
#include "tests/format/pack_equality.h"
#include "tests/format/pack_surgery.h"

namespace nmc {
namespace {

using nlohmann::ordered_json;
using testing::RawSections;

void expect_rejected(const std::vector<uint8_t>& bytes, StatusCode code, const std::string& fragment) {
    Result<Pack> pack = read_pack(bytes.data(), bytes.size());
    ASSERT_FALSE(pack.ok()) << "accepted; expected " << to_string(code) << " with '" << fragment << "'";
    EXPECT_EQ(pack.status().code(), code) << pack.status().to_string();
    EXPECT_NE(pack.status().message().find(fragment), std::string::npos)
        << "message '" << pack.status().message() << "' lacks '" << fragment << "'";
}

void expect_accepted(const std::vector<uint8_t>& bytes) {
    Result<Pack> pack = read_pack(bytes.data(), bytes.size());
    EXPECT_TRUE(pack.ok()) << pack.status().to_string();
}

std::vector<uint8_t> golden() {
    return write_pack(testing::make_golden_pack(), testing::golden_write_options()).value();
}

// The golden pack with its metadata edited by `edit`.
std::vector<uint8_t> with_meta(void (*edit)(ordered_json&)) {
    RawSections s = testing::golden_sections();
    edit(s.meta);
    return testing::assemble(s);
}

// The golden pack with the raw META bytes replaced.
std::vector<uint8_t> with_meta_text(const std::string& text) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p[0].raw.assign(text.begin(), text.end());
    return testing::assemble(p);
}

// ---- spec 3.1: header -----------------------------------------------------------------------------------

TEST(ReaderRules, BadMagicIsNotRecognized) {
    std::vector<uint8_t> bytes = golden();
    bytes[1] = 'X';
    expect_rejected(bytes, StatusCode::not_recognized, "not an nmc pack");
    const std::string png = "\x89PNG\r\n\x1a\n";
    expect_rejected(std::vector<uint8_t>(png.begin(), png.end()), StatusCode::not_recognized, "magic");
    expect_rejected({}, StatusCode::not_recognized, "empty file");
}

TEST(ReaderRules, MajorVersion4IsUnsupported) {
    std::vector<uint8_t> bytes = golden();
    bytes[8] = 4;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::version_unsupported, "format version 4.0 is not supported");
    bytes[8] = 0;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::version_unsupported, "format version 0.0 is not supported");
}

// `bytes` under another major version, checksums fixed.
std::vector<uint8_t> as_major(std::vector<uint8_t> bytes, uint8_t major) {
    bytes[8] = major;
    testing::fix_checksums(bytes);
    return bytes;
}

// spec 5.6, 10 and 11: network.arithmetic and the major version agree.
TEST(ReaderRules, ArithmeticAndMajorVersionAgree) {
    auto binary16 = [](ordered_json& j) { j["network"]["arithmetic"] = "binary16"; };
    auto float32 = [](ordered_json& j) { j["network"]["arithmetic"] = "float32"; };
    expect_rejected(with_meta(binary16), StatusCode::corrupt,
                    "'network.arithmetic': a format 1.x pack decodes with 'float32', got 'binary16'");
    expect_rejected(as_major(golden(), 2), StatusCode::corrupt,
                    "'network.arithmetic': missing, required in a format 2.x pack");
    expect_rejected(as_major(with_meta([](ordered_json& j) { j["network"]["arithmetic"] = "bfloat16"; }), 2),
                    StatusCode::corrupt, "'network.arithmetic': expected 'float32' or 'binary16', got 'bfloat16'");
    expect_rejected(as_major(with_meta([](ordered_json& j) { j["network"]["arithmetic"] = 16; }), 2),
                    StatusCode::corrupt, "'network.arithmetic'");

    const std::vector<uint8_t> v2 = as_major(with_meta(binary16), 2);
    Result<Pack> pack = read_pack(v2.data(), v2.size());
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    EXPECT_EQ(pack->network.arithmetic, Arithmetic::binary16);
    expect_accepted(with_meta(float32));               // 1.x saying what it is anyway
    expect_accepted(as_major(with_meta(float32), 2));  // 2.x may name float32 (a writer would write 1.0)
}

// spec 5.4, 10 and 11: the golden pack's height map (texture 3, pack channel 6) stored HLG-encoded, as format 3.0.
void hlg_height(ordered_json& j) {
    j["network"]["arithmetic"] = "float32";
    j["channels"][6]["range"] = {0.0, 1.0};
    j["textures"][3]["value_encoding"] = "hlg";
    j["textures"][3]["peak"] = 16.0;
}

TEST(ReaderRules, HlgTexturesOnlyInFormat3) {
    const std::vector<uint8_t> v3 = as_major(with_meta(hlg_height), 3);
    Result<Pack> pack = read_pack(v3.data(), v3.size());
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    EXPECT_EQ(pack->textures[3].value_encoding, ValueEncoding::hlg);
    EXPECT_EQ(pack->textures[3].peak, 16.0f);
    EXPECT_EQ(pack->textures[0].value_encoding, ValueEncoding::none);
    // An older major would decode the map's values wrongly, so they refuse it (a 2.0 reader by its version alone).
    for (uint8_t major : {1, 2})
        expect_rejected(as_major(with_meta(hlg_height), major), StatusCode::corrupt,
                        "'textures[3].value_encoding': 'hlg' in a format " + std::to_string(major) +
                            ".x pack (a format 3.0 feature)");
    expect_rejected(as_major(golden(), 3), StatusCode::corrupt,
                    "'network.arithmetic': missing, required in a format 3.x pack");
    // 'none' may be written out; a 3.x pack need not encode anything.
    expect_accepted(with_meta([](ordered_json& j) { j["textures"][0]["value_encoding"] = "none"; }));
    expect_accepted(as_major(with_meta([](ordered_json& j) { j["network"]["arithmetic"] = "binary16"; }), 3));
}

TEST(ReaderRules, HlgTextureRules) {
    auto rejected = [](void (*edit)(ordered_json&), const std::string& fragment) {
        RawSections s = testing::golden_sections();
        hlg_height(s.meta);
        edit(s.meta);
        expect_rejected(as_major(testing::assemble(s), 3), StatusCode::corrupt, fragment);
    };
    rejected([](ordered_json& j) { j["textures"][3]["value_encoding"] = "pq"; },
             "'textures[3].value_encoding': expected 'none' or 'hlg', got 'pq'");
    rejected([](ordered_json& j) { j["textures"][3].erase("peak"); }, "'textures[3].peak': missing required key");
    rejected([](ordered_json& j) { j["textures"][3]["peak"] = 0.0; }, "'textures[3].peak': expected a finite number > 0");
    rejected([](ordered_json& j) { j["textures"][3]["peak"] = 1e39; }, "'textures[3].peak'");
    rejected([](ordered_json& j) { j["textures"][3]["channels"][0]["invert"] = true; },
             "'textures[3].channels[0].invert': must be false in an 'hlg' texture");
    rejected([](ordered_json& j) { j["channels"][6]["range"] = {0.0, 2.5}; },
             "'channels[6].range': pack channel 6 holds HLG-encoded values of textures[3]: its range must lie within "
             "[0, 1]");
    rejected(
        [](ordered_json& j) {
            j["textures"][2]["channels"][0] = {{"semantic", "ambient_occlusion"}, {"source", "pack"}, {"pack_channel", 6}};
        },
        "pack channel 6 holds HLG-encoded values of textures[3] and must be used by no other texture");
    rejected([](ordered_json& j) {
                 j["textures"][1]["value_encoding"] = "hlg";
                 j["textures"][1]["peak"] = 2.0;
             },
             "'textures[1].value_encoding': 'hlg' on a normal map");
}

// spec 9: binary16 dequantisation stays far from binary16's largest value.
TEST(ReaderRules, Binary16LatentRangeLimit) {
    expect_rejected(as_major(with_meta([](ordered_json& j) {
                                 j["network"]["arithmetic"] = "binary16";
                                 j["latents"]["levels"][2]["range"] = {-1.0, 16385.0};
                             }),
                             2),
                    StatusCode::limit_exceeded,
                    "'latents.levels[2].range': [-1.000000, 16385.000000] outside [-16384, 16384]");
    expect_accepted(as_major(with_meta([](ordered_json& j) {
                                 j["network"]["arithmetic"] = "binary16";
                                 j["latents"]["levels"][2]["range"] = {-16384.0, 16384.0};
                             }),
                             2));
    expect_accepted(with_meta([](ordered_json& j) { j["latents"]["levels"][2]["range"] = {-1.0, 40000.0}; }));
}

TEST(ReaderRules, AnyMinorVersionIsAccepted) {
    std::vector<uint8_t> bytes = golden();
    bytes[10] = 7;
    testing::fix_checksums(bytes);
    ContainerInfo info;
    ASSERT_TRUE(read_pack(bytes.data(), bytes.size(), &info).ok());
    EXPECT_EQ(info.version_minor, 7);
}

TEST(ReaderRules, HeaderChecksumMismatch) {
    std::vector<uint8_t> bytes = golden();
    bytes[60] ^= 1;
    expect_rejected(bytes, StatusCode::corrupt, "header checksum mismatch (expected 0x");
}

TEST(ReaderRules, ReservedHeaderFlag) {
    std::vector<uint8_t> bytes = golden();
    bytes[28] = 4;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "reserved flags set (expected 0, got 0x00000004)");
}

TEST(ReaderRules, ReservedHeaderBytes) {
    std::vector<uint8_t> bytes = golden();
    bytes[50] = 1;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "reserved bytes");
}

TEST(ReaderRules, HeaderSizeOtherThan64) {
    std::vector<uint8_t> bytes = golden();
    bytes[12] = 80;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "header_size: expected 64, got 80");
}

TEST(ReaderRules, FileSizeFieldDiffersFromTheFile) {
    std::vector<uint8_t> bytes = golden();
    store_u64_le(bytes.data() + 16, bytes.size() + 64);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "(truncated)");
}

TEST(ReaderRules, TrailingBytesCoveredByFileSize) {
    std::vector<uint8_t> bytes = golden();
    bytes.push_back(0);
    store_u64_le(bytes.data() + 16, bytes.size());
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "the last section ends at byte");
}

TEST(ReaderRules, FileSizeBeyondTheLimit) {
    std::vector<uint8_t> bytes = golden();
    store_u64_le(bytes.data() + 16, uint64_t{5} << 30);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::limit_exceeded, "file_size");
}

TEST(ReaderRules, SectionCountOutOfRange) {
    std::vector<uint8_t> bytes = golden();
    store_u32_le(bytes.data() + 24, 65);
    store_u32_le(bytes.data() + 60, crc32c(bytes.data(), 60));
    expect_rejected(bytes, StatusCode::limit_exceeded, "section_count: expected 1..64, got 65");
    store_u32_le(bytes.data() + 24, 0);
    store_u32_le(bytes.data() + 60, crc32c(bytes.data(), 60));
    expect_rejected(bytes, StatusCode::corrupt, "section_count: expected 1..64, got 0");
}

TEST(ReaderRules, SectionTableOffsetOtherThan64) {
    std::vector<uint8_t> bytes = golden();
    bytes[32] = 128;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section_table_offset");
}

TEST(ReaderRules, SectionTableChecksumMismatch) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(1) + 32] ^= 1;  // LATN stored_crc
    expect_rejected(bytes, StatusCode::corrupt, "section table checksum mismatch");
}

// ---- spec 3.2, 3.3: table entries and layout ---------------------------------------------------------------

TEST(ReaderRules, OverlappingSection) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t meta_offset = load_u64_le(bytes.data() + testing::entry_offset(0) + 8);
    store_u64_le(bytes.data() + testing::entry_offset(1) + 8, meta_offset);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section 'LATN': offset 256 overlaps");
}

TEST(ReaderRules, NonCanonicalGap) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t offset = load_u64_le(bytes.data() + testing::entry_offset(2) + 8);
    store_u64_le(bytes.data() + testing::entry_offset(2) + 8, offset + 64);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "breaks the canonical layout");
}

TEST(ReaderRules, UnalignedSection) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t offset = load_u64_le(bytes.data() + testing::entry_offset(2) + 8);
    store_u64_le(bytes.data() + testing::entry_offset(2) + 8, offset + 1);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "is not a multiple of 64");
}

TEST(ReaderRules, SectionOutsideTheFile) {
    std::vector<uint8_t> bytes = golden();
    store_u64_le(bytes.data() + testing::entry_offset(2) + 16, uint64_t{1} << 62);  // WGHT stored_size
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "lie outside the file");
}

TEST(ReaderRules, DuplicateFourcc) {
    std::vector<uint8_t> bytes = golden();
    std::memcpy(bytes.data() + testing::entry_offset(1), "META", 4);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section 'META': duplicate fourcc");
}

TEST(ReaderRules, ReservedCompressionMethod) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(1) + 4] = 1 | (2 << 1);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "reserved compression method 2");
}

TEST(ReaderRules, ReservedEntryFlagBits) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(0) + 4] |= 8;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section 'META': reserved flag bits set");
}

TEST(ReaderRules, ReservedEntryField) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(2) + 44] = 1;
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section 'WGHT': reserved field is not zero");
}

TEST(ReaderRules, NonZeroPaddingBetweenSections) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t wght_offset = load_u64_le(bytes.data() + testing::entry_offset(2) + 8);
    bytes[wght_offset - 1] = 1;  // LATN is 312 bytes: 8 bytes of padding follow it
    expect_rejected(bytes, StatusCode::corrupt, "section 'WGHT': non-zero padding");
    bytes = golden();
    bytes[64 + 3 * 48] = 1;  // between the table and the first section
    expect_rejected(bytes, StatusCode::corrupt, "section 'META': non-zero padding in bytes 208..255");
}

TEST(ReaderRules, UncompressedSizesDisagree) {
    std::vector<uint8_t> bytes = golden();
    store_u64_le(bytes.data() + testing::entry_offset(1) + 24, 1);  // LATN raw_size
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "uncompressed but raw_size 1 differs");
}

TEST(ReaderRules, RawSizeBeyondTheLimit) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(1) + 4] = 1 | (1 << 1);
    store_u64_le(bytes.data() + testing::entry_offset(1) + 24, uint64_t{2} << 30);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::limit_exceeded, "exceeds the limit of 1073741824");
}

TEST(ReaderRules, CompressionRatioBeyond64) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t stored = load_u64_le(bytes.data() + testing::entry_offset(1) + 16);
    bytes[testing::entry_offset(1) + 4] = 1 | (1 << 1);
    store_u64_le(bytes.data() + testing::entry_offset(1) + 24, stored * 64 + 64);
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::limit_exceeded, "more than 64 x stored_size");
}

// ---- spec 3.4: checksums and zstd --------------------------------------------------------------------------

TEST(ReaderRules, StoredChecksumMismatch) {
    std::vector<uint8_t> bytes = golden();
    const uint64_t offset = load_u64_le(bytes.data() + testing::entry_offset(1) + 8);
    bytes[offset + 3] ^= 0x10;
    expect_rejected(bytes, StatusCode::corrupt, "section 'LATN': stored checksum mismatch (expected 0x");
}

TEST(ReaderRules, RawChecksumMismatch) {
    std::vector<uint8_t> bytes = golden();
    bytes[testing::entry_offset(2) + 36] ^= 1;  // WGHT raw_crc
    testing::fix_checksums(bytes);
    expect_rejected(bytes, StatusCode::corrupt, "section 'WGHT': raw checksum mismatch");
}

TEST(ReaderRules, BrokenZstdFrame) {
    expect_rejected(testing::with_zstd_latn(std::vector<uint8_t>(40, 0xAB), 312), StatusCode::corrupt,
                    "section 'LATN': ZSTD_findFrameCompressedSize failed");
}

TEST(ReaderRules, ZstdContentSizeDiffersFromRawSize) {
    // A real zstd frame of the golden LATN, written by the container writer, then given a wrong raw_size.
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p[1].raw.assign(312, 0);
    p[1].raw[0] = 1;
    const std::vector<uint8_t> compressed = write_container({p[1]}, true, 3).value();
    const uint64_t stored_size = load_u64_le(compressed.data() + testing::entry_offset(0) + 16);
    ASSERT_EQ(compressed[testing::entry_offset(0) + 4] >> 1, 1);
    const std::vector<uint8_t> frame(compressed.begin() + 128,
                                     compressed.begin() + 128 + static_cast<long>(stored_size));
    expect_rejected(testing::with_zstd_latn(frame, 300), StatusCode::corrupt,
                    "content size 312 differs from raw_size 300");
}

// A frame without a content size whose blocks hold more than raw_size: refused once raw_size + 1 bytes arrived.
TEST(ReaderRules, ZstdFrameLongerThanRawSize) {
    const std::vector<uint8_t> frame = testing::zstd_frame_without_content_size(std::vector<uint8_t>(400, 7), 20);
    expect_rejected(testing::with_zstd_latn(frame, 312), StatusCode::corrupt,
                    "section 'LATN': zstd frame decompresses to more than raw_size 312 bytes");
}

TEST(ReaderRules, ZstdFrameShorterThanRawSize) {
    const std::vector<uint8_t> frame = testing::zstd_frame_without_content_size(std::vector<uint8_t>(200, 7), 20);
    expect_rejected(testing::with_zstd_latn(frame, 312), StatusCode::corrupt,
                    "section 'LATN': zstd frame decompressed to 200 bytes, raw_size is 312");
}

// spec 9: a window beyond 128 MiB is refused before zstd allocates it.
TEST(ReaderRules, ZstdWindowBeyondTheLimit) {
    const std::vector<uint8_t> frame =
        testing::zstd_frame_without_content_size(std::vector<uint8_t>(312, 7), kMaxZstdWindowLog + 1);
    expect_rejected(testing::with_zstd_latn(frame, 312), StatusCode::corrupt,
                    "section 'LATN': ZSTD_decompressStream failed: ");
}

// ---- spec 4: sections --------------------------------------------------------------------------------------

TEST(ReaderRules, UnknownRequiredSectionIsRejected) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p.push_back({"XTRA", true, {1, 2, 3}});
    expect_rejected(testing::assemble(p), StatusCode::corrupt, "section 'XTRA': unknown required section");
}

TEST(ReaderRules, UnknownOptionalSectionIsSkipped) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p.insert(p.begin() + 1, SectionPayload{"XTRA", false, {1, 2, 3}});
    const std::vector<uint8_t> bytes = testing::assemble(p);
    ContainerInfo info;
    Result<Pack> pack = read_pack(bytes.data(), bytes.size(), &info);
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    EXPECT_EQ(info.sections.size(), 4u);
    EXPECT_TRUE(testing::expect_same_pack(testing::make_golden_pack(), *pack));
}

TEST(ReaderRules, UnknownOptionalSectionStillHasItsChecksumChecked) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p.push_back({"XTRA", false, {1, 2, 3}});
    std::vector<uint8_t> bytes = testing::assemble(p);
    bytes.back() ^= 1;
    expect_rejected(bytes, StatusCode::corrupt, "section 'XTRA': stored checksum mismatch");
}

TEST(ReaderRules, MissingRequiredSection) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p.pop_back();
    expect_rejected(testing::assemble(p), StatusCode::corrupt, "missing required section 'WGHT'");
}

TEST(ReaderRules, KnownSectionWithoutRequiredFlag) {
    std::vector<SectionPayload> p = testing::payloads(testing::golden_sections());
    p[1].required = false;
    expect_rejected(testing::assemble(p), StatusCode::corrupt, "section 'LATN': the required flag must be set");
}

// ---- spec 5: metadata --------------------------------------------------------------------------------------

TEST(ReaderRules, MetadataThatIsNotJson) {
    expect_rejected(with_meta_text("{\"schema_version\": 1,"), StatusCode::corrupt, "section 'META': not valid JSON");
    expect_rejected(with_meta_text("[1, 2]"), StatusCode::corrupt, "expected a JSON object, got array");
}

TEST(ReaderRules, MetadataThatIsNotUtf8) {
    const std::string text = testing::golden_sections().meta.dump();
    std::string bad = text;
    bad.replace(bad.find("golden_small"), 1, "\xC3\x28");
    expect_rejected(with_meta_text(bad), StatusCode::corrupt, "section 'META': not valid UTF-8 at offset 40");
    bad = text;
    bad.replace(bad.find("golden_Color.png"), 1, "\xED\xA0\x80");  // a UTF-16 surrogate in a file_name
    expect_rejected(with_meta_text(bad), StatusCode::corrupt, "section 'META': not valid UTF-8 at offset");
    expect_rejected(with_meta_text(text + " \xFF"), StatusCode::corrupt,
                    "section 'META': not valid UTF-8 at offset " + std::to_string(text.size() + 1));
    expect_rejected(with_meta_text("\xEF\xBB\xBF" + text), StatusCode::corrupt,
                    "section 'META': starts with a byte order mark");
}

// spec 5: the section is exactly one JSON text. The JSON parser stops at a NUL byte, so a text, a NUL and anything
// after it (invalid UTF-8 too) used to read as the text alone.
TEST(ReaderRules, MetadataWithBytesAfterTheJsonText) {
    const std::string text = testing::golden_sections().meta.dump();
    const std::string nul_at = "section 'META': a NUL byte at offset " + std::to_string(text.size());
    expect_rejected(with_meta_text(text + std::string(1, '\0')), StatusCode::corrupt, nul_at);
    expect_rejected(with_meta_text(text + std::string("\0junk", 5)), StatusCode::corrupt, nul_at);
    expect_rejected(with_meta_text(text + std::string("\0\xFF\xFE\x80{}\0", 7)), StatusCode::corrupt, nul_at);
    expect_rejected(with_meta_text(text + std::string("\n\0\xC3", 3)), StatusCode::corrupt,
                    "a NUL byte at offset " + std::to_string(text.size() + 1) +
                        " (the section must be exactly one JSON text; only whitespace may follow it)");
    expect_rejected(with_meta_text(text + "{}"), StatusCode::corrupt, "section 'META': not valid JSON");
    expect_rejected(with_meta_text(text + " x"), StatusCode::corrupt, "section 'META': not valid JSON");
    // A NUL inside the text is refused the same way (a string may hold U+0000 only as the escape \u0000).
    std::string inside = text;
    inside[inside.find("golden_small") + 3] = '\0';
    expect_rejected(with_meta_text(inside), StatusCode::corrupt, "section 'META': a NUL byte at offset");
    // JSON whitespace around the text is allowed.
    expect_accepted(with_meta_text(text + " \t\r\n"));
    expect_accepted(with_meta_text("\n " + text + "\n"));
}

TEST(ReaderRules, MetadataBeyond1MiB) {
    std::string text = testing::golden_sections().meta.dump();
    text.insert(text.size() - 1, ",\"padding\":\"" + std::string(1 << 20, 'x') + "\"");
    expect_rejected(with_meta_text(text), StatusCode::limit_exceeded,
                    "section 'META': raw_size 1051981 exceeds the limit of 1048576");
}

// spec 9: at most 64 members per META object. The bug this fixes: ordered_json finds a key by a linear search, so a
// valid META of 90,000 keys in `encoder` (850 KB) took 6 s to read; now it is refused after one linear pass.
TEST(ReaderRules, MetadataObjectsOf64MembersAtMost) {
    // `encoder`, an informational object of any keys, filled with extra keys to `members` in all.
    const auto encoder_of = [](size_t members) {
        RawSections s = testing::golden_sections();
        for (size_t i = 0; s.meta["encoder"].size() < members; ++i) s.meta["encoder"]["extra" + std::to_string(i)] = i;
        return testing::assemble(s);
    };
    expect_accepted(encoder_of(kMaxMetadataMembers));
    expect_rejected(encoder_of(kMaxMetadataMembers + 1), StatusCode::limit_exceeded,
                    "section 'META': 'encoder' has more than 64 members (the limit of spec 9)");
    // The pack of the bug report, written as text (ordered_json would take seconds to build it).
    std::string keys;
    for (int i = 0; i < 90000; ++i) keys += "\"k" + std::to_string(i) + "\":0,";
    std::string report = testing::golden_sections().meta.dump();
    report.insert(report.find("\"tool\""), keys);
    ASSERT_GT(report.size(), 800000u);
    expect_rejected(with_meta_text(report), StatusCode::limit_exceeded, "'encoder' has more than 64 members");
    // The message names the object wherever it is: inside arrays, keyed by texture name, at the top level.
    expect_rejected(with_meta([](ordered_json& j) {
                        for (int i = 0; i < 64; ++i) j["textures"][1]["channels"][0]["x" + std::to_string(i)] = 0;
                    }),
                    StatusCode::limit_exceeded, "'textures[1].channels[0]' has more than 64 members");
    expect_rejected(with_meta([](ordered_json& j) {
                        for (int i = 0; i < 65; ++i) j["quality"]["textures"]["t" + std::to_string(i)] = {};
                    }),
                    StatusCode::limit_exceeded, "'quality.textures' has more than 64 members");
    expect_rejected(with_meta([](ordered_json& j) {
                        for (int i = 0; i < 64; ++i) j["future" + std::to_string(i)] = 0;
                    }),
                    StatusCode::limit_exceeded, "section 'META': the top-level object has more than 64 members");
    // A key that repeats is a member each time it is written.
    std::string repeated = testing::golden_sections().meta.dump();
    for (size_t i = 0; i < kMaxMetadataMembers; ++i) repeated.insert(repeated.find("\"tool\""), "\"again\":0,");
    expect_rejected(with_meta_text(repeated), StatusCode::limit_exceeded, "'encoder' has more than 64 members");
}

// spec 9: objects and arrays nest at most 16 deep. The bug this fixes: a META of 200,000 nested arrays crashed the
// reader (a stack overflow while the JSON library copied the nesting).
TEST(ReaderRules, MetadataNestedAtMost16Deep) {
    // The top-level object is level 1, its "future" value level 2: `arrays` more arrays inside it.
    const auto nested = [](size_t arrays) {
        std::string text = testing::golden_sections().meta.dump();
        text.pop_back();
        return with_meta_text(text + ",\"future\":" + std::string(arrays + 1, '[') + std::string(arrays + 1, ']') + "}");
    };
    expect_accepted(nested(kMaxMetadataDepth - 2));
    std::string seventeenth = "future";  // the array at level 17, inside 15 arrays
    for (int i = 0; i < 15; ++i) seventeenth += "[0]";
    expect_rejected(nested(kMaxMetadataDepth - 1), StatusCode::limit_exceeded,
                    "section 'META': '" + seventeenth + "' is nested deeper than 16 levels (the limit of spec 9)");
    // The pack of the crash: channels[0].range of 200,000 nested arrays.
    std::string crash = testing::golden_sections().meta.dump();
    const size_t range = crash.find("\"range\":") + 8;
    crash.replace(range, crash.find(']', range) + 1 - range, std::string(200000, '[') + std::string(200000, ']'));
    expect_rejected(with_meta_text(crash), StatusCode::limit_exceeded,
                    "'channels[0].range[0][0][0][0][0][0][0][0][0][0][0][0][0]' is nested deeper than 16 levels");
    expect_rejected(with_meta([](ordered_json& j) {
                        ordered_json deep = 1;
                        for (int i = 0; i < 14; ++i) deep = {{"d", deep}};
                        j["latents"]["levels"][1]["range"] = {0, deep};
                    }),
                    StatusCode::limit_exceeded, "'latents.levels[1].range[1].d.d.d.d.d.d.d.d.d.d.d' is nested deeper");
}

TEST(ReaderRules, MissingKey) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"].erase("width"); }), StatusCode::corrupt,
                    "'material.width': missing required key");
    expect_rejected(with_meta([](ordered_json& j) { j.erase("latents"); }), StatusCode::corrupt,
                    "'latents': missing required key");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][1]["channels"][0].erase("pack_channel"); }),
                    StatusCode::corrupt, "'textures[1].channels[0].pack_channel': missing required key");
}

TEST(ReaderRules, WrongType) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["width"] = "32"; }), StatusCode::corrupt,
                    "'material.width': expected an integer, got string");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["width"] = 32.0; }), StatusCode::corrupt,
                    "'material.width': expected an integer, got number");
    expect_rejected(with_meta([](ordered_json& j) { j["channels"] = ordered_json::object(); }), StatusCode::corrupt,
                    "'channels': expected an array, got object");
    expect_rejected(with_meta([](ordered_json& j) {
                        j["channels"][0]["range"] = {0, 1, 2};
                    }),
                    StatusCode::corrupt, "'channels[0].range': expected [lo, hi]");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][0]["has_scale"] = 1; }), StatusCode::corrupt,
                    "'network.layers[0].has_scale': expected a boolean, got number");
}

TEST(ReaderRules, InformationalKeysAreTypeCheckedOnly) {
    // Unexpected content in informational keys is accepted...
    expect_accepted(with_meta([](ordered_json& j) {
        j["textures"][1]["normal_convention"] = "left-handed";
        j["textures"][0]["semantic"] = "whatever";
        j["textures"][0]["source_sha256"] = "not hex";
        j["encoder"]["preset"] = "";
        j["quality"]["channels"] = {1.0};
        j.erase("encoder");
    }));
    // ...but a wrong type is not.
    expect_rejected(with_meta([](ordered_json& j) { j["encoder"]["steps"] = "many"; }), StatusCode::corrupt,
                    "'encoder.steps': expected an integer, got string");
    expect_rejected(with_meta([](ordered_json& j) { j["quality"]["mips"][1] = "x"; }), StatusCode::corrupt,
                    "'quality.mips[1]': expected a number, got string");
}

TEST(ReaderRules, UnknownKeysAreIgnored) {
    expect_accepted(with_meta([](ordered_json& j) {
        j["future_key"] = {{"anything", 1}};
        j["material"]["future"] = true;
        j["network"]["layers"][0]["sparsity"] = 0.5;
    }));
}

TEST(ReaderRules, SchemaVersion) {
    expect_rejected(with_meta([](ordered_json& j) { j["schema_version"] = 2; }), StatusCode::corrupt,
                    "'schema_version': expected 1, got 2");
}

TEST(ReaderRules, OutOfRangeWidth) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["width"] = 16385; }), StatusCode::limit_exceeded,
                    "'material.width': expected 1..16384, got 16385");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["width"] = 0; }), StatusCode::corrupt,
                    "'material.width': expected 1..16384, got 0");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["height"] = uint64_t{1} << 40; }),
                    StatusCode::limit_exceeded, "'material.height': 1099511627776 is out of range");
}

TEST(ReaderRules, MipCountBeyondTheChain) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["mip_count"] = 7; }), StatusCode::limit_exceeded,
                    "'material.mip_count': expected 1..6, got 7");
}

TEST(ReaderRules, MaterialNameLength) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["name"] = ""; }), StatusCode::corrupt,
                    "'material.name': expected 1..256 bytes, got 0");
}

// spec 5.2: the material name is shown, not used as a file name: anything but control characters.
TEST(ReaderRules, MaterialNameWithoutControlCharacters) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["name"] = "golden\nsmall"; }), StatusCode::corrupt,
                    "'material.name': expected UTF-8 text without control characters, got 'golden\\x0Asmall'");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["name"] = std::string("cut\0here", 8); }),
                    StatusCode::corrupt, "got 'cut\\x00here'");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["name"] = "\x1B[2Jclear"; }), StatusCode::corrupt,
                    "got '\\x1B[2Jclear'");
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["name"] = "del\x7F"; }), StatusCode::corrupt,
                    "got 'del\\x7F'");
    expect_accepted(with_meta([](ordered_json& j) { j["material"]["name"] = "Ziegel Wand/Größe ../.. CON."; }));
}

TEST(ReaderRules, AddressModeValue) {
    expect_rejected(with_meta([](ordered_json& j) { j["material"]["address_mode"] = "mirror"; }), StatusCode::corrupt,
                    "'material.address_mode': expected 'wrap' or 'clamp', got 'mirror'");
}

TEST(ReaderRules, ChannelRange) {
    expect_rejected(with_meta([](ordered_json& j) {
                        j["channels"][2]["range"] = {1.0, 1.0};
                    }),
                    StatusCode::corrupt, "'channels[2].range': expected finite [lo, hi] with lo < hi");
    expect_rejected(with_meta([](ordered_json& j) {
                        j["channels"][2]["range"] = {0.0, 1e300};
                    }),
                    StatusCode::corrupt, "'channels[2].range'");
}

TEST(ReaderRules, ChannelCount) {
    expect_rejected(with_meta([](ordered_json& j) { j["channels"] = ordered_json::array(); }), StatusCode::corrupt,
                    "'channels (count)': expected 1..16, got 0");
}

TEST(ReaderRules, PackChannelOutOfRange) {
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][0]["channels"][0]["pack_channel"] = 7; }),
                    StatusCode::limit_exceeded, "'textures[0].channels[0].pack_channel': expected 0..6, got 7");
}

TEST(ReaderRules, UnusedPackChannel) {
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][0]["channels"][2]["pack_channel"] = 1; }),
                    StatusCode::corrupt, "pack channel 2 is used by no texture");
}

// The golden pack with texture 1's `field` set to `value`.
std::vector<uint8_t> with_texture_1(const char* field, const std::string& value) {
    RawSections s = testing::golden_sections();
    s.meta["textures"][1][field] = value;
    return testing::assemble(s);
}

// spec 5.4: a texture's name and file_name are plain file names (decompress writes files named from file_name, validate
// heat maps named from name). Each hostile name, in either field, is refused naming the field and showing the name
// with its control characters escaped.
TEST(ReaderRules, TextureNamesAndFileNamesArePlainFileNames) {
    struct Case {
        std::string name;
        const char* shown;
        const char* why;
    };
    const Case cases[] = {
        {".", "'.'", "it is '.' or '..'"},
        {"..", "'..'", "it is '.' or '..'"},
        {"../../../x/escaped", "'../../../x/escaped'", "it contains '/' or '\\'"},
        {"/etc/passwd", "'/etc/passwd'", "it contains '/' or '\\'"},
        {"maps/a.png", "'maps/a.png'", "it contains '/' or '\\'"},
        {"..\\x.png", "'..\\\\x.png'", "it contains '/' or '\\'"},
        {"C:\\a.png", "'C:\\\\a.png'", "it contains '/' or '\\'"},
        {"a..b.png", "'a..b.png'", "it contains '..'"},
        {std::string("cut\0here.png", 12), "'cut\\x00here.png'", "it contains a control character"},
        {"line\nbreak.png", "'line\\x0Abreak.png'", "it contains a control character"},
        {"tab\t.png", "'tab\\x09.png'", "it contains a control character"},
        {"\x1B[31mred.png", "'\\x1B[31mred.png'", "it contains a control character"},
        {"del\x7F.png", "'del\\x7F.png'", "it contains a control character"},
        {"CON", "'CON'", "it is a device name reserved on Windows"},
        {"con.png", "'con.png'", "it is a device name reserved on Windows"},
        {"Prn.tar.gz", "'Prn.tar.gz'", "it is a device name reserved on Windows"},
        {"aux", "'aux'", "it is a device name reserved on Windows"},
        {"NUL.exr", "'NUL.exr'", "it is a device name reserved on Windows"},
        {"nul .png", "'nul .png'", "it is a device name reserved on Windows"},
        {"COM1.png", "'COM1.png'", "it is a device name reserved on Windows"},
        {"com9", "'com9'", "it is a device name reserved on Windows"},
        {"LPT1.jpg", "'LPT1.jpg'", "it is a device name reserved on Windows"},
        {"lpt9.PNG", "'lpt9.PNG'", "it is a device name reserved on Windows"},
        {"COM\xC2\xB9.png", "'COM\xC2\xB9.png'", "it is a device name reserved on Windows"},
        {"a.png ", "'a.png '", "it ends in a space or a dot"},
        {"a.png.", "'a.png.'", "it ends in a space or a dot"},
        {" ", "' '", "it ends in a space or a dot"},
    };
    for (const char* field : {"name", "file_name"}) {
        const std::string path = std::string("'textures[1].") + field + "': ";
        expect_rejected(with_texture_1(field, ""), StatusCode::corrupt, path + "expected 1..256 bytes, got 0");
        for (const Case& c : cases) {
            SCOPED_TRACE(field + std::string(" = ") + c.shown);
            expect_rejected(with_texture_1(field, c.name), StatusCode::corrupt,
                            path + "expected a plain file name, got " + c.shown + " (" + c.why + ")");
        }
    }
}

TEST(ReaderRules, TextureNamesAndFileNamesAreUnique) {
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][1]["name"] = "golden_Color"; }), StatusCode::corrupt,
                    "'textures[1].name': 'golden_Color' is not unique");
    expect_accepted(with_meta([](ordered_json& j) { j["textures"][1]["name"] = "GOLDEN_color"; }));
    // Decoded files may land on a case-insensitive file system: file names differ in more than ASCII case.
    expect_rejected(with_texture_1("file_name", "golden_Color.png"), StatusCode::corrupt,
                    "'textures[1].file_name': 'golden_Color.png' is also the file name of textures[0] (file names "
                    "must differ in more than ASCII case)");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][3]["file_name"] = "GOLDEN_color.PNG"; }),
                    StatusCode::corrupt,
                    "'textures[3].file_name': 'GOLDEN_color.PNG' is also the file name of textures[0]");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][2]["file_name"] = "golden_normaldx.png"; }),
                    StatusCode::corrupt,
                    "'textures[2].file_name': 'golden_normaldx.png' is also the file name of "
                    "textures[1]");
}

// Names of real materials (and a few more shapes a file name can take) stay accepted.
TEST(ReaderRules, OrdinaryTextureNamesAndFileNamesAreAccepted) {
    const char* names[] = {"Metal009_2K-JPG_Color.jpg",
                           "T_Crate_D.png",
                           "beige_wall_001_nor_gl_2k.jpg",
                           "FlightHelmet_Materials_LeatherPartsMat_OcclusionRoughMetal.png",
                           "My Texture (1) [final].png",
                           "wall.001_diff.png",
                           "Ziegel_Wand_Größe.png",
                           "木材_albedo.png",
                           "\xF0\x9F\xA7\xB1 brick.png",
                           ".hidden.png",
                           " leading space.png",
                           "no_extension",
                           "CONSOLE.png",
                           "con_color.png",
                           "COM10.png",
                           "LPT.png",
                           "auxiliary.tga",
                           "a'b,c;d=e+f@g#h$i%j&k!l~m^n.png"};
    for (const char* name : names) {
        SCOPED_TRACE(name);
        expect_accepted(with_texture_1("name", name));
        expect_accepted(with_texture_1("file_name", name));
    }
    // 256 bytes is the longest name.
    expect_accepted(with_texture_1("file_name", std::string(252, 'x') + ".png"));
    expect_rejected(with_texture_1("file_name", std::string(253, 'x') + ".png"), StatusCode::corrupt,
                    "'textures[1].file_name': expected 1..256 bytes, got 257");
}

TEST(ReaderRules, ChannelSourceValues) {
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][0]["channels"][0]["source"] = "file"; }),
                    StatusCode::corrupt, "'textures[0].channels[0].source': expected 'pack', 'constant' or 'normal_z'");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][0]["channels"][0]["semantic"] = "colour"; }),
                    StatusCode::corrupt, "'textures[0].channels[0].semantic'");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][2]["channels"][0].erase("value"); }),
                    StatusCode::corrupt, "'textures[2].channels[0].value': missing required key");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"].erase(3); }), StatusCode::corrupt,
                    "pack channel 6 is used by no texture");
}

TEST(ReaderRules, NormalModeRules) {
    // xy: exactly 3 channels, pack, pack, normal_z.
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][1]["channels"].erase(2); }), StatusCode::corrupt,
                    "an 'xy' normal map has 3 channels: pack, pack, normal_z, got 2");
    expect_rejected(
        with_meta([](ordered_json& j) {
            j["textures"][1]["channels"][2] = {{"semantic", "normal"}, {"source", "constant"}, {"value", 1}};
        }),
        StatusCode::corrupt, "'textures[1].channels[2].source': an 'xy' normal map");
    // xyz: 3 pack channels, so the normal_z of the golden pack is out of place.
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][1]["normal_mode"] = "xyz"; }), StatusCode::corrupt,
                    "'normal_z' is allowed only as the third channel of an 'xy' normal map");
    // normal_z outside a normal map.
    expect_rejected(with_meta([](ordered_json& j) {
                        j["textures"][2]["channels"][0] = {{"semantic", "normal"}, {"source", "normal_z"}};
                    }),
                    StatusCode::corrupt, "'textures[2].channels[0].source': 'normal_z' is allowed only");
    // A pack channel of a normal map used by another texture.
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][3]["channels"][0]["pack_channel"] = 3; }),
                    StatusCode::corrupt, "pack channel 3 belongs to a normal map");
    expect_rejected(
        with_meta([](ordered_json& j) {
            j["textures"][0]["channels"].push_back({{"semantic", "opacity"}, {"source", "pack"}, {"pack_channel", 4}});
        }),
        StatusCode::corrupt, "pack channel 4 belongs to a normal map and must be used by no other texture");
    expect_rejected(with_meta([](ordered_json& j) { j["textures"][1]["normal_mode"] = "yes"; }), StatusCode::corrupt,
                    "'textures[1].normal_mode': expected 'none', 'xy' or 'xyz', got 'yes'");
}

TEST(ReaderRules, XyzNormalMapIsAccepted) {
    expect_accepted(with_meta([](ordered_json& j) {
        j["textures"][1]["normal_mode"] = "xyz";
        j["textures"][1]["channels"][2] = {{"semantic", "normal"}, {"source", "pack"}, {"pack_channel", 5}};
        j["textures"][2]["channels"][1] = {{"semantic", "roughness"}, {"source", "constant"}, {"value", 0.5}};
    }));
}

TEST(ReaderRules, LatentRules) {
    expect_rejected(with_meta([](ordered_json& j) { j["latents"]["levels"][1]["bits"] = 3; }), StatusCode::corrupt,
                    "'latents.levels[1].bits': expected 1, 2, 4 or 8, got 3");
    expect_rejected(with_meta([](ordered_json& j) { j["latents"]["levels"][1]["width"] = 9; }), StatusCode::corrupt,
                    "'latents.levels[1]': expected 8 x 4 latent texels, got 9 x 4");
    expect_rejected(with_meta([](ordered_json& j) { j["latents"]["feature_count"] = 17; }), StatusCode::limit_exceeded,
                    "'latents.feature_count': expected 1..16, got 17");
    expect_rejected(with_meta([](ordered_json& j) { j["latents"]["grid_scale"] = 0; }), StatusCode::corrupt,
                    "'latents.grid_scale': expected 1..16, got 0");
    expect_rejected(with_meta([](ordered_json& j) {
                        j["latents"]["levels"].erase(1);
                        j["latents"]["levels"].erase(1);
                        j["latents"]["levels"].erase(1);
                    }),
                    StatusCode::corrupt, "'latents.levels (count)': expected 2..16, got 1");
    expect_rejected(with_meta([](ordered_json& j) {
                        j["latents"]["levels"][0]["range"] = {2.0, -2.0};
                    }),
                    StatusCode::corrupt, "'latents.levels[0].range'");
}

TEST(ReaderRules, NetworkRules) {
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["activation"] = "relu"; }), StatusCode::corrupt,
                    "'network.activation': expected 'hgelu_clamped', got 'relu'");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][2]["has_scale"] = false; }),
                    StatusCode::corrupt, "'network.layers[2].has_scale': an 'int8' layer must have scales");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][1]["input_width"] = 17; }),
                    StatusCode::corrupt,
                    "'network.layers[1].input_width': expected the previous layer's output_width 16");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][2]["output_width"] = 6; }),
                    StatusCode::corrupt, "'network.layers[2].output_width': expected the pack channel count 7, got 6");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][0]["input_width"] = 20; }),
                    StatusCode::corrupt,
                    "'network.layers[0].input_width': expected at least 2 * feature_count + 13 = 21");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][0]["output_width"] = 257; }),
                    StatusCode::limit_exceeded, "'network.layers[0].output_width': expected 1..256, got 257");
    expect_rejected(with_meta([](ordered_json& j) { j["network"]["layers"][0]["weight_type"] = "fp4"; }),
                    StatusCode::corrupt, "'network.layers[0].weight_type': expected 'e4m3' or 'int8'");
}

// ---- spec 6, 7: binary sections against the metadata -------------------------------------------------------

TEST(ReaderRules, LatnSizeMismatch) {
    expect_rejected(with_meta([](ordered_json& j) { j["latents"]["levels"][1]["bits"] = 4; }), StatusCode::corrupt,
                    "section 'LATN': expected 344 bytes from the metadata, got 312");
}

TEST(ReaderRules, LatnPadding) {
    RawSections s = testing::golden_sections();
    s.latn[300] = 1;  // padding after level 2 (bytes 292..303)
    expect_rejected(testing::assemble(s), StatusCode::corrupt,
                    "section 'LATN': level 3: non-zero padding byte at offset 300");
}

TEST(ReaderRules, LatnUnusedBits) {
    // A 34 x 16 material: level 3 is 3 x 1 texels of 4 features at 1 bit, 12 bits in 2 bytes, 4 of them unused.
    Pack pack = testing::make_golden_pack();
    pack.material.width = 34;
    pack.latents.levels[3].bits = 1;
    for (size_t k = 0; k < pack.latents.levels.size(); ++k) {
        LatentLevel& l = pack.latents.levels[k];
        l.width = latent_level_size(34, pack.latents.grid_scale, static_cast<int>(k));
        l.codes.assign(static_cast<size_t>(l.width * l.height * pack.latents.feature_count), 1);
    }
    RawSections s = testing::sections_of(pack);
    ASSERT_EQ(s.latn.size(), 338u);  // 272, 36 -> 320, 5 -> 336, 2
    expect_accepted(testing::assemble(s));
    s.latn[337] |= 0x80;
    expect_rejected(testing::assemble(s), StatusCode::corrupt,
                    "section 'LATN': level 3: unused bits at the end of the level are not zero");
}

TEST(ReaderRules, NanWeightCode) {
    RawSections s = testing::golden_sections();
    s.wght[5] = 0xFF;
    expect_rejected(testing::assemble(s), StatusCode::corrupt, "section 'WGHT': layer 0: weight 5 is an E4M3 NaN code");
    s.wght[5] = 0x7F;
    expect_rejected(testing::assemble(s), StatusCode::corrupt, "E4M3 NaN code (127)");
}

TEST(ReaderRules, Int8Minus128) {
    RawSections s = testing::golden_sections();
    s.wght[896 + 9] = 0x80;  // layer 2 starts at 896
    expect_rejected(testing::assemble(s), StatusCode::corrupt,
                    "section 'WGHT': layer 2: weight 9 is the reserved Int8 -128");
}

TEST(ReaderRules, NonFiniteScale) {
    RawSections s = testing::golden_sections();
    store_u32_le(s.wght.data() + 800 + 4 * 3, 0x7F800000u);  // layer 1 scale 3 = +inf
    expect_rejected(testing::assemble(s), StatusCode::corrupt, "section 'WGHT': layer 1: scale 3 is not finite");
    store_u32_le(s.wght.data() + 800 + 4 * 3, 0x7FC00000u);  // NaN
    expect_rejected(testing::assemble(s), StatusCode::corrupt, "scale 3 is not finite");
}

TEST(ReaderRules, NonFiniteBias) {
    RawSections s = testing::golden_sections();
    s.wght[512 + 2 * 4] = 0x00;
    s.wght[512 + 2 * 4 + 1] = 0x7C;  // layer 0 bias 4 = +inf
    expect_rejected(testing::assemble(s), StatusCode::corrupt, "section 'WGHT': layer 0: bias 4 is not finite");
}

TEST(ReaderRules, WghtSizeAndPadding) {
    RawSections s = testing::golden_sections();
    s.wght[1050] = 1;  // padding after layer 2's biases (1036 + 14 = 1050 .. 1055)
    expect_rejected(testing::assemble(s), StatusCode::corrupt,
                    "section 'WGHT': layer 2: non-zero padding after the biases");
    s = testing::golden_sections();
    s.wght.resize(s.wght.size() + 16, 0);
    expect_rejected(testing::assemble(s), StatusCode::corrupt,
                    "section 'WGHT': expected 1056 bytes from the metadata, got 1072");
}

// ---- ReadOptions::problems ---------------------------------------------------------------------------------

TEST(ReaderRules, ProblemsCollectsEverySectionFailure) {
    std::vector<uint8_t> bytes = golden();
    for (const size_t entry : {size_t{1}, size_t{2}}) {
        const uint64_t offset = load_u64_le(bytes.data() + testing::entry_offset(entry) + 8);
        bytes[offset] ^= 0x01;
    }
    bytes[64 + 3 * 48 + 5] = 7;  // and non-zero padding before META
    std::vector<Status> problems;
    ReadOptions options;
    options.problems = &problems;
    Result<Pack> pack = read_pack(bytes.data(), bytes.size(), nullptr, options);
    ASSERT_FALSE(pack.ok());
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_NE(problems[0].message().find("non-zero padding"), std::string::npos) << problems[0].message();
    EXPECT_NE(problems[1].message().find("section 'LATN': stored checksum mismatch"), std::string::npos);
    EXPECT_NE(problems[2].message().find("section 'WGHT': stored checksum mismatch"), std::string::npos);
    EXPECT_EQ(pack.status().message(), problems[0].message());
}

TEST(ReaderRules, ProblemsIsEmptyForAGoodPack) {
    const std::vector<uint8_t> bytes = golden();
    std::vector<Status> problems;
    ReadOptions options;
    options.problems = &problems;
    EXPECT_TRUE(read_pack(bytes.data(), bytes.size(), nullptr, options).ok());
    EXPECT_TRUE(problems.empty());
}

}  // namespace
}  // namespace nmc
