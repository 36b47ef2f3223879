// Damaged source images are refused, in every format, with a status that names the file and the problem.
// Bug: the first 1,000 or 20,000 bytes of a 47 KB JPEG were read without a word: libjpeg only warns ("Premature
// end of JPEG file"), fills the missing part with grey, and the warning was not looked at. Files are written by
// the test (damaged_images.h); every format is cut at many lengths and flipped where it can be told.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/file_io.h"
#include "damaged_images.h"
#include "test_support.h"

namespace nmc {
namespace {

// Writes `bytes` as `path` (plainly: thousands of files, no fsync needed) and expects read_image_file to refuse
// it with a code that nmc maps to exit 8, naming the file first and saying `problem` ("" : any words).
void expect_refused(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& what,
                    const std::string& problem = "") {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    const Result<ImageFile> r = read_image_file(path);
    ASSERT_FALSE(r.ok()) << what << ": accepted";
    const StatusCode code = r.status().code();
    EXPECT_TRUE(code == StatusCode::corrupt || code == StatusCode::not_recognized || code == StatusCode::limit_exceeded)
        << what << ": " << r.status().to_string();
    EXPECT_EQ(r.status().message().rfind(path + ": ", 0), 0u) << what << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(problem), std::string::npos) << what << ": " << r.status().message();
}

// The file nmc writes for `format`, read back as bytes (empty on failure, which the callers assert against).
std::vector<uint8_t> written_file(const test::TempDir& dir, const std::string& format) {
    const std::string path = dir.file("intact." + test::extension_of(format));
    const Status written = write_image(path, test::damage_test_image(format), format, true);
    EXPECT_TRUE(written.ok()) << written.to_string();
    EXPECT_TRUE(read_image_file(path).ok()) << "the intact " << format << " file must read";
    Result<std::vector<uint8_t>> bytes = read_file(path, 1 << 20);
    return bytes.ok() ? std::move(bytes.value()) : std::vector<uint8_t>{};
}

// `bytes` cut to every length below `end` through the headers (the first 64 bytes), then to about 200 lengths spread
// over the rest, and to end - 1: each refused. (Every length would take seconds for the larger files.)
void expect_cuts_refused(const test::TempDir& dir, const std::string& format, const std::vector<uint8_t>& bytes,
                         size_t end) {
    const std::string path = dir.file("damaged." + test::extension_of(format));
    const size_t stride = std::max<size_t>(1, end / 200);
    for (size_t size = 0; size < end; size += size < 64 ? 1 : stride)
        expect_refused(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + size),
                       format + " cut to " + std::to_string(size) + " bytes");
    expect_refused(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + end - 1),
                   format + " cut to " + std::to_string(end - 1) + " bytes");
}

void expect_damage_refused(const test::TempDir& dir, const std::string& format, const test::DamagedFile& damaged) {
    expect_refused(dir.file("damaged." + test::extension_of(format)), damaged.bytes, format + " " + damaged.what,
                   damaged.problem);
}

TEST(DamagedImages, PngCutShortOrWithAnyBitFlippedIsRefused) {
    test::TempDir dir;
    const std::vector<uint8_t> png = written_file(dir, "png");
    ASSERT_FALSE(png.empty());
    expect_cuts_refused(dir, "png", png, png.size());
    // Every byte, each with a different bit: the chunk CRCs cover everything but the signature and the lengths,
    // and a changed signature is no PNG, a changed length moves the CRC.
    for (size_t i = 0; i < png.size(); ++i)
        expect_damage_refused(dir, "png", test::flipped(png, i, static_cast<uint8_t>(1u << (i % 8)), ""));
    expect_damage_refused(dir, "png", test::truncated_in_pixels("png", png));
    expect_damage_refused(dir, "png", test::detectable_flip("png", png));
}

TEST(DamagedImages, JpegCutShortOrWithABrokenStructureOrScanIsRefused) {
    test::TempDir dir;
    const std::vector<uint8_t> jpeg = written_file(dir, "jpeg");
    ASSERT_FALSE(jpeg.empty());
    expect_cuts_refused(dir, "jpeg", jpeg, jpeg.size());  // to size - 1 too: libjpeg warns of a missing EOI
    expect_damage_refused(dir, "jpeg", test::truncated_in_pixels("jpeg", jpeg));
    ASSERT_LT(test::jpeg_marker_making_byte(jpeg), jpeg.size()) << "no byte of the scan can be made a marker";
    expect_damage_refused(dir, "jpeg", test::detectable_flip("jpeg", jpeg));
    // The frame header's sample precision, 8 bits made 12 (SOF0: FF C0, length, precision).
    size_t sof = 0;
    while (sof + 4 < jpeg.size() && !(jpeg[sof] == 0xFF && jpeg[sof + 1] == 0xC0)) ++sof;
    ASSERT_LT(sof + 4, jpeg.size());
    expect_damage_refused(dir, "jpeg", test::flipped(jpeg, sof + 4, 0x04, "Unsupported JPEG data precision 12"));
}

// TGA has no checksum: a flipped pixel cannot be told, nor a file cut inside the TGA 2.0 extension area and footer
// after the pixels (a TGA 1.0 file has neither, so the cut file is a valid one). Cuts before the end of the pixels
// are refused, and header fields that make no sense.
TEST(DamagedImages, TgaCutInsideThePixelsOrWithABadHeaderIsRefused) {
    if (!image_format_supported("tga")) GTEST_SKIP() << "this build's image backend has no TGA";
    test::TempDir dir;
    const std::vector<uint8_t> tga = written_file(dir, "tga");
    ASSERT_FALSE(tga.empty());
    ASSERT_EQ(tga[0], 0) << "no image ID expected";
    ASSERT_EQ(tga[2], 2) << "uncompressed true-colour expected";
    const size_t pixels_end = 18 + 32 * 32 * 3;
    ASSERT_LE(pixels_end, tga.size());
    expect_cuts_refused(dir, "tga", tga, pixels_end);
    expect_damage_refused(dir, "tga", test::truncated_in_pixels("tga", tga));
    expect_damage_refused(dir, "tga", test::detectable_flip("tga", tga));
    expect_damage_refused(dir, "tga", test::flipped(tga, 2, 0x04, "not an image"));      // image type 2 becomes 6
    expect_damage_refused(dir, "tga", test::flipped(tga, 13, 0x01, "hit end of file"));  // width 32 becomes 288
}

// EXR (zip): a flip in the compressed pixel data fails zlib's checks; one in a metadata attribute or a chunk's line
// number cannot be told, so the flips tested are inside the compressed data and in the version field.
TEST(DamagedImages, ExrCutShortOrWithFlippedPixelDataIsRefused) {
    if (!image_format_supported("exr")) GTEST_SKIP() << "this build's image backend has no EXR";
    test::TempDir dir;
    const std::vector<uint8_t> exr = written_file(dir, "exr");
    ASSERT_FALSE(exr.empty());
    expect_cuts_refused(dir, "exr", exr, exr.size());
    expect_damage_refused(dir, "exr", test::truncated_in_pixels("exr", exr));
    expect_damage_refused(dir, "exr", test::detectable_flip("exr", exr));
    expect_damage_refused(dir, "exr", test::flipped(exr, exr.size() / 2, 0x04, "Data decompression (zlib) failed"));
    expect_damage_refused(dir, "exr", test::flipped(exr, 4, 0x04, "Cannot read version 6 image files"));
}

// An EXR header attribute declaring more bytes than the file holds is refused before OpenEXR reads it: OpenEXR
// allocates what an attribute declares first (found by tests/fuzz/image_reader_fuzzer: a 700-byte file made it
// allocate 1.3 GB).
TEST(DamagedImages, ExrAttributeLargerThanTheFileIsRefusedBeforeReading) {
    if (!image_format_supported("exr")) GTEST_SKIP() << "this build's image backend has no EXR";
    test::TempDir dir;
    std::vector<uint8_t> exr = written_file(dir, "exr");
    ASSERT_FALSE(exr.empty());
    // The first attribute: its name and type name (NUL-terminated) after the 8-byte magic and version, then its size.
    const auto name_end = std::find(exr.begin() + 8, exr.end(), uint8_t{0});
    const auto type_end = std::find(name_end + 1, exr.end(), uint8_t{0});
    ASSERT_LT(type_end + 4, exr.end());
    const std::string name(exr.begin() + 8, name_end);
    const size_t size_at = static_cast<size_t>(type_end + 1 - exr.begin());
    const uint8_t declared[4] = {0x00, 0x00, 0x00, 0x50};  // 0x50000000: 1,342,177,280 bytes
    std::copy(declared, declared + 4, exr.begin() + static_cast<std::ptrdiff_t>(size_at));
    expect_refused(dir.file("huge_attribute.exr"), exr, "exr with a 1.3 GB attribute",
                   "corrupt EXR header: attribute '" + name + "' at byte " + std::to_string(size_at) +
                       " declares 1342177280 bytes");
}

// TIFF: libtiff checks no checksum (see damaged_images.h), so flips in the pixel strips cannot be told; cuts and
// a broken directory can.
TEST(DamagedImages, TiffCutShortOrWithABrokenDirectoryIsRefused) {
    if (!image_format_supported("tiff")) GTEST_SKIP() << "this build's image backend has no TIFF";
    test::TempDir dir;
    const std::vector<uint8_t> tiff = written_file(dir, "tiff");
    ASSERT_FALSE(tiff.empty());
    ASSERT_EQ(std::string(tiff.begin(), tiff.begin() + 2), "II") << "a little-endian TIFF expected";
    expect_cuts_refused(dir, "tiff", tiff, tiff.size());
    expect_damage_refused(dir, "tiff", test::truncated_in_pixels("tiff", tiff));
    expect_damage_refused(dir, "tiff", test::detectable_flip("tiff", tiff));
    expect_damage_refused(dir, "tiff", test::flipped(tiff, 4, 0x04, "Could not open file"));  // directory offset
}

}  // namespace
}  // namespace nmc
