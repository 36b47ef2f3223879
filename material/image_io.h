// Reading and writing image files: the one place nmc touches pixels on disk. The backend (OpenImageIO, or
// libpng + libjpeg in a PNGJPEG build) is chosen at build time and hidden behind these functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/file_io.h"
#include "core/image.h"
#include "core/status.h"
#include "core/texture_layout.h"

namespace nmc {

// Width and height limits of any image nmc reads or writes (format spec 9). Fuzzing builds (tests/fuzz) take at most
// 256 per side, so that a mutated header cannot make one input allocate gigabytes; the checks are the same code.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr int kMaxImageDimension = 256;
#else
constexpr int kMaxImageDimension = 16384;
#endif
// Largest image file read; bigger files fail with limit_exceeded before being read.
constexpr uint64_t kMaxImageFileBytes = uint64_t{1} << 30;

// An image file as read: pixels (normalised, Image::sample_type set), what the file is, and its hash.
struct ImageFile {
    Image image;
    std::string format;  // "png", "jpeg", "tga", "exr", "tiff", ... identified from the file's bytes
    // Set only when the file itself declares an encoding (PNG sRGB/gAMA chunks, EXR's linear data, an
    // explicit colour-space attribute); nullopt when the file says nothing.
    std::optional<ColorSpace> declared_color_space;
    std::string sha256;  // lower-case hex SHA-256 of the file's bytes
};

// Reads an image file. Values are normalised: 8-bit and 16-bit codes map to [0, 1] (code / 255,
// code / 65535), float samples keep their values. Fails with io_error (missing, unreadable),
// not_recognized (not an image), corrupt (truncated or undecodable: whatever the image library reports,
// warnings such as libjpeg's "Premature end of JPEG file" included; for PNG, any chunk whose CRC-32 does not
// match, or a file that ends before IEND; for EXR, a header attribute larger than the file), limit_exceeded (a
// dimension outside 1..kMaxImageDimension, file larger than kMaxImageFileBytes) or backend_unavailable (a format this
// build's backend cannot read). Every message starts with the path. Thread-safe.
Result<ImageFile> read_image_file(const std::string& path);

// read_image_file(path) without the metadata.
Result<Image> read_image(const std::string& path);

// The sample type a `format` file (png, jpeg, tga, exr, tiff; "jpg" and "tif" are accepted) stores for samples
// of type `requested`: `requested` where the format holds it, else the nearest it does. PNG stores uint8 or
// uint16 (float samples as uint16), JPEG and TGA uint8, EXR float16 or float32 (integer samples as float32),
// TIFF all four. The one rule write_image() and every image backend follow.
SampleType stored_sample_type(SampleType requested, const std::string& format);

// Writes `image` as `format` (png, jpeg, tga, exr, tiff; "jpg" and "tif" are accepted) through an ImageFileWriter
// (below), so a failed write (a full disk) is an io_error that leaves neither a partial file nor a temporary one,
// and an existing file is never half-overwritten. Samples are
// stored as stored_sample_type(image.sample_type, format), quantised as format spec 8.10 says (integer types clamp
// to [0, 1]; values are written as given, never converted between colour encodings).
// With overwrite false an existing file is an io_error and is left untouched. Thread-safe.
Status write_image(const std::string& path, const Image& image, const std::string& format, bool overwrite);

// write_image() that also records the colour space in the file where the format can (PNG sRGB/gAMA chunks,
// the backend's colour-space attribute); nullopt writes no colour metadata.
Status write_image_tagged(const std::string& path, const Image& image, const std::string& format, bool overwrite,
                          std::optional<ColorSpace> color_space);

namespace image_backend {
class RowWriter;
}

// write_image_tagged() a band of rows at a time, for images too large to hold whole (a 16384^2 float RGBA texture
// is 4 GiB). open() makes write_image_tagged()'s checks and creates the temporary file beside `path` (AtomicFile);
// write_rows() takes the bands top to bottom; finish() completes the file and renames it into place. Destroyed
// before finish() succeeded, it leaves nothing. The OpenImageIO backend encodes each band as it arrives, so the
// writer holds one band; the libpng+libjpeg backend holds the whole image until finish(). Not thread-safe.
class ImageFileWriter {
public:
    static Result<std::unique_ptr<ImageFileWriter>> open(const std::string& path, int width, int height, int channels,
                                                         SampleType sample_type, const std::string& format,
                                                         bool overwrite, std::optional<ColorSpace> color_space);
    ~ImageFileWriter();
    ImageFileWriter(const ImageFileWriter&) = delete;
    ImageFileWriter& operator=(const ImageFileWriter&) = delete;

    // The next band.height rows: band.width and band.channels those of the image, values as in Image.
    Status write_rows(const Image& band);
    Status finish();

private:
    explicit ImageFileWriter(AtomicFile file);
    AtomicFile file_;
    std::unique_ptr<image_backend::RowWriter> rows_;  // writes into file_, so declared after it
};

// "OpenImageIO" or "libpng+libjpeg".
const char* image_backend_name();

// Whether this build can read and write `format` (canonical name: png, jpeg, tga, exr, tiff, ...).
bool image_format_supported(const std::string& format);

// Canonical format of an image file name by its extension ("photo.JPG" -> "jpeg"), "" when the extension is
// not an image format nmc knows.
std::string image_format_from_file_name(const std::string& file_name);

}  // namespace nmc
