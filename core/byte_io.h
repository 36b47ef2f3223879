// Little-endian, field-by-field serialisation. Every byte of a pack is written and read through these two
// classes (never by copying structs), so the layout is the spec's on every host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nmc {

// Appends little-endian fields to a byte vector it does not own.
class ByteWriter {
public:
    explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v);
    void u32(uint32_t v);
    void u64(uint64_t v);
    void f32(float v);
    void bytes(const void* data, size_t size);
    // Appends zero bytes until the size is a multiple of `alignment` (a power of two).
    void pad_to(size_t alignment);

    size_t size() const { return out_.size(); }

private:
    std::vector<uint8_t>& out_;
};

// Reads little-endian fields from a byte range it does not own. A read past the end sets a sticky failure
// flag and yields zeros, so a parser reads a whole structure and checks ok() once.
class ByteReader {
public:
    ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    uint8_t u8();
    uint16_t u16();
    uint32_t u32();
    uint64_t u64();
    float f32();
    // Returns a pointer to the next `size` bytes and advances, or nullptr (and fails) if fewer remain.
    const uint8_t* bytes(size_t size);

    bool ok() const { return !failed_; }
    size_t position() const { return position_; }
    size_t remaining() const { return failed_ ? 0 : size_ - position_; }

private:
    bool take(size_t size);

    const uint8_t* data_;
    size_t size_;
    size_t position_ = 0;
    bool failed_ = false;
};

// Writes `value` little-endian into `dst` (which must have room) without a ByteWriter: for patching
// a field that is only known after what follows it was written.
void store_u32_le(uint8_t* dst, uint32_t value);
void store_u64_le(uint8_t* dst, uint64_t value);
uint32_t load_u32_le(const uint8_t* src);
uint64_t load_u64_le(const uint8_t* src);

}  // namespace nmc
