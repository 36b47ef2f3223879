// Little-endian field readers and writers.
#include "core/byte_io.h"

#include "core/number_formats.h"

namespace nmc {

void store_u32_le(uint8_t* dst, uint32_t value) {
    for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(value >> (8 * i));
}

void store_u64_le(uint8_t* dst, uint64_t value) {
    for (int i = 0; i < 8; ++i) dst[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint32_t load_u32_le(const uint8_t* src) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(src[i]) << (8 * i);
    return v;
}

uint64_t load_u64_le(const uint8_t* src) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(src[i]) << (8 * i);
    return v;
}

void ByteWriter::u16(uint16_t v) {
    out_.push_back(static_cast<uint8_t>(v));
    out_.push_back(static_cast<uint8_t>(v >> 8));
}

void ByteWriter::u32(uint32_t v) {
    uint8_t b[4];
    store_u32_le(b, v);
    out_.insert(out_.end(), b, b + 4);
}

void ByteWriter::u64(uint64_t v) {
    uint8_t b[8];
    store_u64_le(b, v);
    out_.insert(out_.end(), b, b + 8);
}

void ByteWriter::f32(float v) { u32(float_bits(v)); }

void ByteWriter::bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
}

void ByteWriter::pad_to(size_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(0);
}

bool ByteReader::take(size_t size) {
    if (failed_ || size > size_ - position_) {
        failed_ = true;
        return false;
    }
    return true;
}

uint8_t ByteReader::u8() {
    if (!take(1)) return 0;
    return data_[position_++];
}

uint16_t ByteReader::u16() {
    if (!take(2)) return 0;
    const uint16_t v = static_cast<uint16_t>(data_[position_] | (data_[position_ + 1] << 8));
    position_ += 2;
    return v;
}

uint32_t ByteReader::u32() {
    if (!take(4)) return 0;
    const uint32_t v = load_u32_le(data_ + position_);
    position_ += 4;
    return v;
}

uint64_t ByteReader::u64() {
    if (!take(8)) return 0;
    const uint64_t v = load_u64_le(data_ + position_);
    position_ += 8;
    return v;
}

float ByteReader::f32() {
    return float_from_bits(u32());
}

const uint8_t* ByteReader::bytes(size_t size) {
    if (!take(size)) return nullptr;
    const uint8_t* p = data_ + position_;
    position_ += size;
    return p;
}

}  // namespace nmc
