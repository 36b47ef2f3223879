// Checksums and content hashes. CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and
// final xor 0xFFFFFFFF) protects every header, table and section of a pack; SHA-256 identifies source images;
// CRC-32 (the PNG/zlib one) checks the chunks of PNG source images.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nmc {

// CRC-32C of `size` bytes. crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t size);

// Continues a CRC-32C over more bytes: crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, initial value and final xor 0xFFFFFFFF), the checksum of
// PNG chunks and zlib. crc32("123456789") == 0xCBF43926.
uint32_t crc32(const void* data, size_t size);

// Incremental SHA-256 (FIPS 180-4).
class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    std::array<uint8_t, 32> finish();

    // Lower-case hex digest of one buffer.
    static std::string hex_digest(const void* data, size_t size);

private:
    void compress(const uint8_t* block);

    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_{};
    size_t buffered_ = 0;
    uint64_t total_bytes_ = 0;
};

std::string to_hex(const uint8_t* data, size_t size);

}  // namespace nmc
