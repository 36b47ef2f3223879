// CRC-32C, CRC-32 and SHA-256 against published test vectors (RFC 3720 appendix B.4; the CRC catalogue's
// CRC-32/ISO-HDLC check value and PNG's IEND chunk; FIPS 180-2 examples).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/checksum.h"

namespace nmc {
namespace {

uint32_t crc_of(const std::string& s) {
    return crc32c(s.data(), s.size());
}

TEST(Crc32c, KnownVectors) {
    EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
    EXPECT_EQ(crc_of(""), 0u);
    EXPECT_EQ(crc32c(std::vector<uint8_t>(32, 0x00).data(), 32), 0x8A9136AAu);
    EXPECT_EQ(crc32c(std::vector<uint8_t>(32, 0xFF).data(), 32), 0x62A8AB43u);
    std::vector<uint8_t> ascending(32);
    for (size_t i = 0; i < 32; ++i) ascending[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(crc32c(ascending.data(), 32), 0x46DD794Eu);
}

TEST(Crc32c, ExtendEqualsOneShotAtEverySplit) {
    std::string data;
    for (int i = 0; i < 100; ++i) data += static_cast<char>(i * 37 + 11);
    const uint32_t whole = crc_of(data);
    for (size_t split = 0; split <= data.size(); ++split)
        EXPECT_EQ(crc32c_extend(crc32c(data.data(), split), data.data() + split, data.size() - split), whole) << split;
}

TEST(Crc32, KnownVectors) {
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
    EXPECT_EQ(crc32("", 0), 0u);
    EXPECT_EQ(crc32("IEND", 4), 0xAE426082u);  // every PNG ends with this chunk CRC
}

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(Sha256::hex_digest("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(Sha256::hex_digest("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string v448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(Sha256::hex_digest(v448.data(), v448.size()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAsInUnevenPieces) {
    Sha256 h;
    const std::string chunk(997, 'a');  // a prime size so pieces straddle block boundaries
    size_t left = 1000000;
    while (left > 0) {
        const size_t n = std::min(left, chunk.size());
        h.update(chunk.data(), n);
        left -= n;
    }
    const auto digest = h.finish();
    EXPECT_EQ(to_hex(digest.data(), digest.size()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace nmc
