// Every single-byte change and every truncation of a small pack is rejected with a specific status and no
// crash: the canonical layout (spec 3.3) leaves no byte unchecked.
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "tests/format/golden_pack.h"
#include "tests/format/pack_surgery.h"

namespace nmc {
namespace {

// The status a damaged byte at `offset` of `bytes` must produce: the magic says "not a pack", a version_major this
// reader does not know (neither 1 nor 2) says "unsupported version", everything else (a damaged major that reads
// as the other known one included) is covered by a checksum, a zero-padding rule or the size check.
StatusCode expected_code(size_t offset, const std::vector<uint8_t>& bytes) {
    if (offset < 8) return StatusCode::not_recognized;
    const int major = bytes[8] | (bytes[9] << 8);
    if (offset < 10 && major != 1 && major != 2) return StatusCode::version_unsupported;
    return StatusCode::corrupt;
}

void expect_every_byte_change_rejected(const std::vector<uint8_t>& original) {
    ASSERT_TRUE(read_pack(original.data(), original.size()).ok());
    std::vector<uint8_t> bytes = original;
    size_t failures = 0;
    for (size_t i = 0; i < bytes.size() && failures < 5; ++i) {
        for (const int change : {0, 1}) {
            bytes[i] = change == 0 ? static_cast<uint8_t>(original[i] ^ 0xFF) : static_cast<uint8_t>(original[i] + 1);
            Result<Pack> pack = read_pack(bytes.data(), bytes.size());
            if (pack.ok() || pack.status().code() != expected_code(i, bytes) || pack.status().message().empty()) {
                ADD_FAILURE() << "byte " << i << (change == 0 ? " xor 0xFF" : " + 1") << ": "
                              << (pack.ok() ? "accepted" : pack.status().to_string());
                ++failures;
            }
        }
        bytes[i] = original[i];
    }
}

void expect_every_truncation_rejected(const std::vector<uint8_t>& original) {
    for (size_t size = 0; size < original.size(); ++size) {
        Result<Pack> pack = read_pack(original.data(), size);
        ASSERT_FALSE(pack.ok()) << "truncated to " << size << " bytes: accepted";
        ASSERT_EQ(pack.status().code(), size < 8 ? StatusCode::not_recognized : StatusCode::corrupt)
            << "truncated to " << size << ": " << pack.status().to_string();
    }
}

std::vector<uint8_t> golden_bytes() {
    return read_file(testing::golden_pack_path(), 1 << 20).value();
}

std::vector<uint8_t> compressed_bytes() {
    return write_pack(testing::make_golden_pack()).value();
}

TEST(Corruption, EveryByteChangeOfTheGoldenPackIsRejected) {
    expect_every_byte_change_rejected(golden_bytes());
}

TEST(Corruption, EveryByteChangeOfACompressedPackIsRejected) {
    expect_every_byte_change_rejected(compressed_bytes());
}

TEST(Corruption, EveryTruncationOfTheGoldenPackIsRejected) {
    expect_every_truncation_rejected(golden_bytes());
}

TEST(Corruption, EveryTruncationOfACompressedPackIsRejected) {
    expect_every_truncation_rejected(compressed_bytes());
}

TEST(Corruption, TrailingBytesAreRejected) {
    std::vector<uint8_t> bytes = golden_bytes();
    bytes.push_back(0);
    Result<Pack> pack = read_pack(bytes.data(), bytes.size());
    EXPECT_EQ(pack.status().code(), StatusCode::corrupt);
    EXPECT_NE(pack.status().message().find("trailing bytes"), std::string::npos) << pack.status().message();
}

// Bytes appended to the META section itself (its checksums made to match): only JSON whitespace may follow the JSON
// text; anything else, a NUL byte followed by anything included, is refused.
TEST(Corruption, EveryByteAfterTheMetadataTextIsRejectedUnlessWhitespace) {
    const std::vector<SectionPayload> original = testing::payloads(testing::golden_sections());
    for (int value = 0; value < 256; ++value) {
        const auto byte = static_cast<uint8_t>(value);
        const bool whitespace = byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r';
        for (const std::vector<uint8_t>& tail : {std::vector<uint8_t>{byte}, std::vector<uint8_t>{0, byte, 0xFF}}) {
            std::vector<SectionPayload> p = original;
            p[0].raw.insert(p[0].raw.end(), tail.begin(), tail.end());
            const std::vector<uint8_t> bytes = testing::assemble(p);
            Result<Pack> pack = read_pack(bytes.data(), bytes.size());
            if (whitespace && tail.size() == 1) {
                EXPECT_TRUE(pack.ok()) << "byte " << value << ": " << pack.status().to_string();
                continue;
            }
            ASSERT_FALSE(pack.ok()) << "META + " << tail.size() << " bytes from " << value << ": accepted";
            EXPECT_EQ(pack.status().code(), StatusCode::corrupt) << pack.status().to_string();
            EXPECT_NE(pack.status().message().find("section 'META'"), std::string::npos) << pack.status().message();
        }
    }
}

}  // namespace
}  // namespace nmc
