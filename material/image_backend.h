// The interface each image backend (image_backend_oiio.cpp, image_backend_pngjpeg.cpp) implements; internal to
// nmc_material. image_io.cpp does what both share: sniffing, size limits, PNG chunk checks, hashing, and the
// atomic file write of what the backends encode into memory.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/image.h"
#include "core/number_formats.h"
#include "core/status.h"
#include "core/texture_layout.h"

namespace nmc::image_backend {

struct Decoded {
    Image image;
    std::optional<ColorSpace> declared_color_space;
};

const char* name();
bool supports(const std::string& format);

// Decodes `bytes`, the content of the file at `path`, whose sniffed format is `format` (supported). Checks width
// and height against kMaxImageDimension before allocating pixels. Anything the image library reports, warnings
// included (a truncated or corrupt file it would fill with grey), fails with corrupt. Messages start with `path`.
Result<Decoded> decode(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& format);

// Encodes `image` as `format` (supported) into memory, the bytes of the file; messages name `path`, the
// destination (which is not touched).
Result<std::vector<uint8_t>> encode(const std::string& path, const Image& image, const std::string& format,
                                    std::optional<ColorSpace> color_space);

}  // namespace nmc::image_backend
