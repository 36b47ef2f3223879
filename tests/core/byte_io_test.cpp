// ByteWriter/ByteReader: little-endian layout and the reader's sticky bounds failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/byte_io.h"

namespace nmc {
namespace {

TEST(ByteIo, WritesLittleEndianFieldByField) {
    std::vector<uint8_t> out;
    ByteWriter w(out);
    w.u8(0x01);
    w.u16(0x0302);
    w.u32(0x07060504);
    w.u64(0x0F0E0D0C0B0A0908ull);
    w.f32(1.0f);  // 0x3F800000
    const std::vector<uint8_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x00, 0x00, 0x80, 0x3F};
    EXPECT_EQ(out, expected);
    w.pad_to(16);
    EXPECT_EQ(out.size(), 32u);
    EXPECT_EQ(out.back(), 0);
}

TEST(ByteIo, ReadsBackWhatWasWritten) {
    std::vector<uint8_t> out;
    ByteWriter w(out);
    w.u16(0xBEEF);
    w.u32(0xDEADBEEF);
    w.u64(0x0123456789ABCDEFull);
    w.f32(-2.5f);
    ByteReader r(out.data(), out.size());
    EXPECT_EQ(r.u16(), 0xBEEF);
    EXPECT_EQ(r.u32(), 0xDEADBEEFu);
    EXPECT_EQ(r.u64(), 0x0123456789ABCDEFull);
    EXPECT_EQ(r.f32(), -2.5f);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.remaining(), 0u);
}

TEST(ByteIo, ReadPastTheEndFailsStickilyWithZeros) {
    const uint8_t data[3] = {1, 2, 3};
    ByteReader r(data, sizeof data);
    EXPECT_EQ(r.u16(), 0x0201);
    EXPECT_EQ(r.u32(), 0u);  // only one byte left
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.u8(), 0);  // sticky: even a read that would fit fails now
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_EQ(r.position(), 2u);
}

TEST(ByteIo, HugeByteRequestDoesNotWrap) {
    const uint8_t data[8] = {};
    ByteReader r(data, sizeof data);
    r.u32();
    EXPECT_EQ(r.bytes(SIZE_MAX), nullptr);
    EXPECT_FALSE(r.ok());
    ByteReader exact(data, sizeof data);
    EXPECT_NE(exact.bytes(8), nullptr);
    EXPECT_EQ(exact.bytes(0), data + 8);
    EXPECT_TRUE(exact.ok());
}

TEST(ByteIo, StoreAndLoadHelpers) {
    uint8_t b[8];
    store_u32_le(b, 0x11223344u);
    EXPECT_EQ(b[0], 0x44);
    EXPECT_EQ(load_u32_le(b), 0x11223344u);
    store_u64_le(b, 0x8877665544332211ull);
    EXPECT_EQ(b[7], 0x88);
    EXPECT_EQ(load_u64_le(b), 0x8877665544332211ull);
}

}  // namespace
}  // namespace nmc
