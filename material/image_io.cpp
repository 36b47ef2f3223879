// What every image backend shares: format identification from the file's bytes, the dimension and size
// limits, the PNG chunk checks, the source hash, and the atomic file the encoders write into.
#include "material/image_io.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>

#include "core/checksum.h"
#include "core/file_io.h"
#include "material/image_backend.h"

namespace nmc {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool starts_with(const std::vector<uint8_t>& bytes, const char* magic, size_t size) {
    return bytes.size() >= size && std::memcmp(bytes.data(), magic, size) == 0;
}

// The format from the file's signature; TGA has none, so a .tga name with a plausible header counts.
std::string sniff_format(const std::vector<uint8_t>& bytes, const std::string& path) {
    if (starts_with(bytes, "\x89PNG\r\n\x1a\n", 8)) return "png";
    if (starts_with(bytes, "\xff\xd8\xff", 3)) return "jpeg";
    if (starts_with(bytes, "\x76\x2f\x31\x01", 4)) return "exr";
    if (starts_with(bytes, "II*\0", 4) || starts_with(bytes, "MM\0*", 4)) return "tiff";
    if (starts_with(bytes, "DDS ", 4)) return "dds";
    if (starts_with(bytes, "BM", 2)) return "bmp";
    if (starts_with(bytes, "8BPS", 4)) return "psd";
    if (starts_with(bytes, "#?RADIANCE", 10) || starts_with(bytes, "#?RGBE", 6)) return "hdr";
    if (bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 && std::memcmp(bytes.data() + 8, "WEBP", 4) == 0)
        return "webp";
    // TGA header: image type 1-3 or 9-11 (uncompressed or RLE), 18 bytes of header.
    if (image_format_from_file_name(path) == "tga" && bytes.size() >= 18) {
        const uint8_t type = bytes[2];
        if ((type >= 1 && type <= 3) || (type >= 9 && type <= 11)) return "tga";
    }
    return "";
}

uint32_t read_be32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

Status check_dimensions(const std::string& path, uint64_t width, uint64_t height) {
    if (width < 1 || width > static_cast<uint64_t>(kMaxImageDimension) || height < 1 ||
        height > static_cast<uint64_t>(kMaxImageDimension))
        return Status(StatusCode::limit_exceeded, path + ": image is " + std::to_string(width) + "x" +
                                                      std::to_string(height) + ", each side must be 1.." +
                                                      std::to_string(kMaxImageDimension));
    return Status::success();
}

std::string hex32(uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", v);
    return text;
}

// PNG protects every chunk with a CRC-32, but the image libraries check only some of them: OpenImageIO's reader
// stops after the image data, and libpng drops an ancillary chunk with a bad CRC with a warning (a damaged sRGB
// or gAMA chunk changed the colour space without a word). So every chunk up to IEND is checked here, for both
// backends: a PNG cut short anywhere, or with any bit changed, is refused. Bytes after IEND are ignored.
Status check_png_chunks(const std::string& path, const std::vector<uint8_t>& bytes) {
    size_t offset = 8;  // after the signature
    for (;;) {
        const size_t left = bytes.size() - offset;
        if (left < 12)
            return Status(StatusCode::corrupt, path + ": truncated PNG: the file ends at byte " +
                                                   std::to_string(bytes.size()) + ", before the IEND chunk");
        const uint32_t length = read_be32(bytes.data() + offset);
        std::string type(reinterpret_cast<const char*>(bytes.data() + offset + 4), 4);
        for (char& c : type)
            if (!std::isalpha(static_cast<unsigned char>(c))) c = '?';
        const std::string chunk = "PNG chunk '" + type + "' at byte " + std::to_string(offset);
        // left >= 12 and length < 2^32: neither side of the comparison overflows.
        if (length > left - 12)
            return Status(StatusCode::corrupt, path + ": truncated PNG: " + chunk + " holds " + std::to_string(length) +
                                                   " bytes, the file has " + std::to_string(left - 12) +
                                                   " after its header");
        const uint32_t stored = read_be32(bytes.data() + offset + 8 + length);
        const uint32_t computed = crc32(bytes.data() + offset + 4, size_t{length} + 4);
        if (stored != computed)
            return Status(StatusCode::corrupt, path + ": " + chunk + ": stored CRC mismatch (expected " +
                                                   hex32(stored) + ", got " + hex32(computed) + ")");
        offset += size_t{length} + 12;
        if (type == "IEND") return Status::success();
    }
}

// OpenEXR allocates each header attribute at the size the attribute declares before reading it: a 361-byte file
// declaring a 1.3 GB string attribute made OpenEXR 3.1 allocate and clear 1.3 GB. So the headers are walked here
// first (OpenEXR file layout: magic, version and flags, then per part the attributes name, type name, int32 size,
// value, ending with an empty name; multi-part files end the list of headers with one more empty name): every
// attribute must fit in the file.
Status check_exr_headers(const std::string& path, const std::vector<uint8_t>& bytes) {
    constexpr uint8_t kMultipartFlag = 0x10;  // version field bit 12
    if (bytes.size() < 8)
        return Status(StatusCode::corrupt, path + ": truncated EXR: the file ends in its version field");
    const bool multipart = (bytes[5] & kMultipartFlag) != 0;
    const auto truncated = [&](size_t offset) {
        return Status(StatusCode::corrupt, path + ": truncated EXR header: the file ends at byte " +
                                               std::to_string(bytes.size()) + ", inside the header at byte " +
                                               std::to_string(offset));
    };
    // The NUL-terminated string at `offset`; moves `offset` past it, or returns false at the end of the file.
    const auto read_string = [&](size_t& offset, std::string& text) {
        const auto end = std::find(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end(), uint8_t{0});
        if (end == bytes.end()) return false;
        text.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset), end);
        offset = static_cast<size_t>(end - bytes.begin()) + 1;
        return true;
    };
    size_t offset = 8;
    for (;;) {
        std::string name;
        if (!read_string(offset, name)) return truncated(offset);
        if (name.empty()) {  // the end of one part's header
            if (!multipart) return Status::success();
            if (offset >= bytes.size()) return truncated(offset);
            if (bytes[offset] == 0) return Status::success();  // the empty header ending the list
            continue;
        }
        std::string type;
        if (!read_string(offset, type) || bytes.size() - offset < 4) return truncated(offset);
        const uint32_t size = uint32_t{bytes[offset]} | uint32_t{bytes[offset + 1]} << 8 |
                              uint32_t{bytes[offset + 2]} << 16 | uint32_t{bytes[offset + 3]} << 24;
        offset += 4;
        if (size > bytes.size() - offset)
            return Status(StatusCode::corrupt, path + ": corrupt EXR header: attribute '" + name + "' at byte " +
                                                   std::to_string(offset - 4) + " declares " + std::to_string(size) +
                                                   " bytes, the file has " + std::to_string(bytes.size() - offset) +
                                                   " after it");
        offset += size;
    }
}

std::string canonical_format(const std::string& format) {
    const std::string f = lower(format);
    if (f == "jpg") return "jpeg";
    if (f == "tif") return "tiff";
    return f;
}

}  // namespace

Result<ImageFile> read_image_file(const std::string& path) {
    auto bytes = read_file(path, kMaxImageFileBytes);
    if (!bytes.ok()) return bytes.status();
    if (bytes->empty()) return Status(StatusCode::corrupt, path + ": empty file");
    const std::string format = sniff_format(*bytes, path);
    if (format.empty())
        return Status(StatusCode::not_recognized, path + ": not an image this build knows (unrecognised signature)");
    if (!image_backend::supports(format))
        return Status(StatusCode::backend_unavailable, path + ": " + format + " images are not supported by the " +
                                                           image_backend::name() +
                                                           " image backend of this build (rebuild with "
                                                           "-DNMC_IMAGE_IO=OIIO, or convert the file to PNG)");
    // PNG keeps its size at a fixed place (IHDR); checking it here gives both backends the same limit message.
    if (format == "png") {
        if (bytes->size() < 24) return Status(StatusCode::corrupt, path + ": truncated PNG header");
        NMC_RETURN_IF_ERROR(check_dimensions(path, read_be32(bytes->data() + 16), read_be32(bytes->data() + 20)));
        NMC_RETURN_IF_ERROR(check_png_chunks(path, *bytes));
    }
    if (format == "exr") NMC_RETURN_IF_ERROR(check_exr_headers(path, *bytes));
    Result<image_backend::Decoded> decoded = Status(StatusCode::internal, path + ": not decoded");
    try {
        decoded = image_backend::decode(path, *bytes, format);
    } catch (const std::bad_alloc& e) {
        return Status(StatusCode::out_of_memory, path + ": out of memory decoding the image (" + e.what() + ")");
    }
    if (!decoded.ok()) return decoded.status();
    NMC_RETURN_IF_ERROR(check_dimensions(path, static_cast<uint64_t>(decoded->image.width),
                                         static_cast<uint64_t>(decoded->image.height)));
    ImageFile file;
    file.image = std::move(decoded->image);
    file.format = format;
    file.declared_color_space = decoded->declared_color_space;
    file.sha256 = Sha256::hex_digest(bytes->data(), bytes->size());
    return file;
}

Result<Image> read_image(const std::string& path) {
    auto file = read_image_file(path);
    if (!file.ok()) return file.status();
    return std::move(file->image);
}

SampleType stored_sample_type(SampleType requested, const std::string& format) {
    const std::string f = canonical_format(format);
    if (f == "png") return requested == SampleType::uint8 ? SampleType::uint8 : SampleType::uint16;
    if (f == "jpeg" || f == "tga") return SampleType::uint8;
    if (f == "exr") return requested == SampleType::float16 ? SampleType::float16 : SampleType::float32;
    return requested;
}

Status write_image(const std::string& path, const Image& image, const std::string& format, bool overwrite) {
    return write_image_tagged(path, image, format, overwrite, std::nullopt);
}

Status write_image_tagged(const std::string& path, const Image& image, const std::string& format, bool overwrite,
                          std::optional<ColorSpace> color_space) {
    if (image.pixels.size() != image.texel_count() * static_cast<size_t>(std::max(image.channels, 0)))
        return Status(StatusCode::invalid_argument, path + ": image has " + std::to_string(image.pixels.size()) +
                                                        " samples, expected " +
                                                        std::to_string(image.texel_count() * image.channels));
    auto writer = ImageFileWriter::open(path, image.width, image.height, image.channels, image.sample_type, format,
                                        overwrite, color_space);
    if (!writer.ok()) return writer.status();
    NMC_RETURN_IF_ERROR((*writer)->write_rows(image));
    return (*writer)->finish();
}

ImageFileWriter::ImageFileWriter(AtomicFile file) : file_(std::move(file)) {}

ImageFileWriter::~ImageFileWriter() = default;

Result<std::unique_ptr<ImageFileWriter>> ImageFileWriter::open(const std::string& path, int width, int height,
                                                               int channels, SampleType sample_type,
                                                               const std::string& format, bool overwrite,
                                                               std::optional<ColorSpace> color_space) {
    const std::string f = canonical_format(format);
    if (f != "png" && f != "jpeg" && f != "tga" && f != "exr" && f != "tiff")
        return Status(StatusCode::invalid_argument,
                      path + ": cannot write format '" + format + "' (expected png, jpeg, tga, exr or tiff)");
    if (!image_backend::supports(f))
        return Status(StatusCode::backend_unavailable, path + ": " + f + " images cannot be written by the " +
                                                           image_backend::name() + " image backend of this build");
    if (channels < 1 || channels > 4)
        return Status(StatusCode::invalid_argument,
                      path + ": image has " + std::to_string(channels) + " channels, expected 1..4");
    NMC_RETURN_IF_ERROR(
        check_dimensions(path, static_cast<uint64_t>(std::max(width, 0)), static_cast<uint64_t>(std::max(height, 0))));
    auto file = AtomicFile::create(path, overwrite ? Overwrite::allow : Overwrite::refuse);
    if (!file.ok()) return file.status();
    std::unique_ptr<ImageFileWriter> writer(new ImageFileWriter(std::move(file).value()));
    auto rows = image_backend::open_row_writer(writer->file_, width, height, channels, sample_type, f, color_space);
    if (!rows.ok()) return rows.status();
    writer->rows_ = std::move(rows).value();
    return writer;
}

Status ImageFileWriter::write_rows(const Image& band) {
    if (band.pixels.size() != band.texel_count() * static_cast<size_t>(std::max(band.channels, 0)))
        return Status(StatusCode::invalid_argument, file_.path() + ": band has " + std::to_string(band.pixels.size()) +
                                                        " samples, expected " +
                                                        std::to_string(band.texel_count() * band.channels));
    return rows_->write_rows(band);
}

Status ImageFileWriter::finish() {
    NMC_RETURN_IF_ERROR(rows_->finish());
    rows_.reset();
    return file_.commit();
}

bool image_backend::is_known_format(const std::string& format) {
    static const char* const kFormats[] = {"png", "jpeg", "tga", "exr", "tiff", "dds", "bmp", "psd", "hdr", "webp"};
    return std::find(std::begin(kFormats), std::end(kFormats), format) != std::end(kFormats);
}

const char* image_backend_name() { return image_backend::name(); }

bool image_format_supported(const std::string& format) { return image_backend::supports(canonical_format(format)); }

std::string image_format_from_file_name(const std::string& file_name) {
    const size_t dot = file_name.rfind('.');
    if (dot == std::string::npos) return "";
    const std::string ext = lower(file_name.substr(dot + 1));
    const std::string f = canonical_format(ext == "jpe" ? "jpeg" : ext);
    return image_backend::is_known_format(f) ? f : "";
}

}  // namespace nmc
