// Damaged copies of small image files, for the tests that must refuse them (tests/material/test_damaged_images.cpp
// through the library, tests/cli/scan_cli_test.cpp through `nmc scan`): the image they are made from, a copy cut
// short inside its pixel data and a copy with one bit flipped where the format's reader can tell, each with the
// words the error names the problem with. Which flips a format can detect at all is said at detectable_flip().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/image.h"

namespace nmc::test {

// The 32x32 RGB image every damaged file is made from: gradients, so that compressed formats compress it (a flip
// in compressed data is what the decompressors can detect). EXR files are float16, the others uint8.
inline Image damage_test_image(const std::string& format) {
    Image image(32, 32, 3, format == "exr" ? SampleType::float16 : SampleType::uint8);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x)
            for (int c = 0; c < 3; ++c) image.at(x, y, c) = static_cast<float>((x * 4 + y * 3 + c * 40) % 256) / 255.0f;
    return image;
}

// The file name extension nmc writes for a canonical format name.
inline std::string extension_of(const std::string& format) {
    return format == "jpeg" ? "jpg" : format;
}

struct DamagedFile {
    std::string what;  // for failure messages: "cut to 61 bytes", "byte 91 ^ 0x04"
    std::vector<uint8_t> bytes;
    std::string problem;  // words of the error message that say what is wrong
};

inline DamagedFile flipped(const std::vector<uint8_t>& bytes, size_t offset, uint8_t mask, const std::string& problem) {
    DamagedFile d{"byte " + std::to_string(offset) + " ^ " + std::to_string(mask), bytes, problem};
    if (offset < d.bytes.size()) d.bytes[offset] ^= mask;
    return d;
}

inline uint32_t big_endian32(const std::vector<uint8_t>& b, size_t at) {
    return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | uint32_t{b[at + 3]};
}

// Where a JPEG's entropy-coded data starts: after the first SOS marker segment; bytes.size() when there is none.
inline size_t jpeg_scan_start(const std::vector<uint8_t>& bytes) {
    size_t sos = 0;
    while (sos + 3 < bytes.size() && !(bytes[sos] == 0xFF && bytes[sos + 1] == 0xDA)) ++sos;
    if (sos + 3 >= bytes.size()) return bytes.size();
    return sos + 2 + (size_t{bytes[sos + 2]} << 8 | bytes[sos + 3]);
}

// `bytes` (a file of `format` written by nmc) cut inside its pixel data: to half its size, a JPEG halfway through
// its entropy-coded data (its headers can take half of a small file, and a cut there is another error).
inline DamagedFile truncated_in_pixels(const std::string& format, const std::vector<uint8_t>& bytes) {
    const std::string problem = format == "png"    ? "truncated PNG"
                                : format == "jpeg" ? "Premature end of JPEG file"  // libjpeg's warning
                                : format == "tga"  ? "hit end of file"
                                : format == "exr"  ? "Unexpected end of file"
                                                   : "Read error";  // libtiff: a strip shorter than it says
    const size_t size = format == "jpeg" ? (jpeg_scan_start(bytes) + bytes.size()) / 2 : bytes.size() / 2;
    return {"cut to " + std::to_string(size) + " bytes", std::vector<uint8_t>(bytes.begin(), bytes.begin() + size),
            problem};
}

// The first JPEG entropy-coded byte one bit away from 0xFF and followed by a byte that is not 0x00: flipping that
// bit makes a marker in the middle of the scan ("Corrupt JPEG data: premature end of data segment", a libjpeg
// warning after which the rest decodes as grey). Returns bytes.size() when there is none.
inline size_t jpeg_marker_making_byte(const std::vector<uint8_t>& bytes) {
    for (size_t i = jpeg_scan_start(bytes) + 1; i + 2 < bytes.size(); ++i) {
        const auto missing = static_cast<uint8_t>(~bytes[i]);
        const bool one_bit = missing != 0 && (missing & (missing - 1)) == 0;
        if (one_bit && bytes[i - 1] != 0xFF && bytes[i + 1] != 0x00) return i;
    }
    return bytes.size();
}

// `bytes` (a file of `format` written by nmc) with one bit flipped where the reader can tell. What each format can
// tell:
// - PNG: every byte (each chunk has a CRC-32, checked by material/image_io.cpp); here one inside IDAT's data.
// - JPEG: no checksum. Flips in the headers' structure (markers, lengths, sizes, table definitions) are refused,
//   flips in the quantisation tables and in most of the entropy-coded data decode to other pixels and cannot be
//   told from an intact file. Here: a flip in the scan that makes a marker (a "Corrupt JPEG data" warning).
// - TGA: no checksum and no compression here: only header fields that make no sense can be told (pixel data
//   flips cannot). Here: the pixel size (24 bits becomes 28).
// - EXR (zip-compressed, as nmc writes it): flips in the compressed pixel data fail zlib's checks; flips in most
//   header attributes and in the chunks' line numbers cannot be told. Here: a byte three quarters into the file,
//   inside the compressed data.
// - TIFF (deflate strips, as nmc writes them): no checksum that libtiff checks (it stops inflating once a strip is
//   complete, before zlib's checksum), so only the directory's structure can be told. Here: the type of the first
//   directory entry (ImageWidth).
inline DamagedFile detectable_flip(const std::string& format, const std::vector<uint8_t>& bytes) {
    if (format == "png") {
        size_t at = 8;  // the first IDAT chunk
        while (at + 8 <= bytes.size() && std::string(bytes.begin() + at + 4, bytes.begin() + at + 8) != "IDAT")
            at += 12 + big_endian32(bytes, at);
        return flipped(bytes, at + 8 + big_endian32(bytes, at) / 2, 0x04, "stored CRC mismatch");
    }
    if (format == "jpeg") {
        const size_t at = jpeg_marker_making_byte(bytes);
        return flipped(bytes, at, at < bytes.size() ? static_cast<uint8_t>(~bytes[at]) : 0, "Corrupt JPEG data");
    }
    if (format == "tga") return flipped(bytes, 16, 0x04, "Illegal pixel size");
    if (format == "exr") return flipped(bytes, bytes.size() * 3 / 4, 0x04, "Data decompression (zlib) failed");
    return flipped(bytes, 12, 0x04, "Incompatible type for \"ImageWidth\"");
}

}  // namespace nmc::test
