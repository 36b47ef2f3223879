// The interface each image backend (image_backend_oiio.cpp, image_backend_pngjpeg.cpp) implements; internal to
// nmc_material. image_io.cpp does what both share: sniffing, size limits, PNG chunk checks, hashing, and the
// atomic file (AtomicFile) the backends' row writers encode into.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "core/image.h"
#include "core/number_formats.h"
#include "core/status.h"
#include "core/texture_layout.h"

namespace nmc::image_backend {

struct Decoded {
    Image image;
    std::optional<ColorSpace> declared_color_space;
};

// Every image format nmc knows by name (canonical names, as image_format_from_file_name gives them). The OpenImageIO
// backend supports them all, the PNG/JPEG backend png and jpeg.
bool is_known_format(const std::string& format);

const char* name();
bool supports(const std::string& format);

// Decodes `bytes`, the content of the file at `path`, whose sniffed format is `format` (supported). Checks width
// and height against kMaxImageDimension before allocating pixels. Anything the image library reports, warnings
// included (a truncated or corrupt file it would fill with grey), fails with corrupt. Messages start with `path`.
Result<Decoded> decode(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& format);

// Encodes one image file into `file` a band of rows at a time: the OpenImageIO backend encodes each band as it
// arrives (scanlines through to the file, so neither the whole image nor the whole file is ever in memory); the
// libpng+libjpeg backend keeps the bands and encodes at finish(). Messages name the file's destination.
class RowWriter {
public:
    virtual ~RowWriter() = default;
    // The next band.height rows, band.width == the image's width, band.channels its channels; values as in Image.
    virtual Status write_rows(const Image& band) = 0;
    // After the last row: completes the file's bytes in `file` (the caller commits it).
    virtual Status finish() = 0;
};

// A writer of a width x height image of `channels` channels stored as `stored` samples in `format` (supported),
// tagged with `color_space` where the format can say it. `file` must outlive the writer.
Result<std::unique_ptr<RowWriter>> open_row_writer(AtomicFile& file, int width, int height, int channels,
                                                   SampleType stored, const std::string& format,
                                                   std::optional<ColorSpace> color_space);

}  // namespace nmc::image_backend
