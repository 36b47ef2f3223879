// The OpenImageIO image backend: every format OIIO reads (PNG, JPEG, TGA, EXR, TIFF, DDS, ...); writes PNG,
// JPEG, TGA, EXR and TIFF. Alpha stays unassociated (as stored) both ways; nmc quantises samples itself so
// both backends store identical codes (spec 8.10). Decodes from the bytes image_io.cpp read; encodes a band of
// rows at a time through to the file image_io.cpp opened.
#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "material/image_backend.h"
#include "material/image_io.h"

namespace nmc::image_backend {
namespace {

namespace oiio = OIIO;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

SampleType sample_type_of(const oiio::TypeDesc& t) {
    if (t == oiio::TypeDesc::UINT8 || t == oiio::TypeDesc::INT8) return SampleType::uint8;
    if (t == oiio::TypeDesc::UINT16 || t == oiio::TypeDesc::INT16) return SampleType::uint16;
    if (t == oiio::TypeDesc::HALF) return SampleType::float16;
    return SampleType::float32;
}

// The colour space a file declares, from OIIO's "oiio:ColorSpace" attribute; EXR is linear by definition.
std::optional<ColorSpace> declared_color_space(const oiio::ImageSpec& spec, const std::string& format) {
    if (format == "exr") return ColorSpace::linear;
    const std::string cs = lower(spec.get_string_attribute("oiio:ColorSpace"));
    if (cs.empty()) return std::nullopt;
    if (cs.find("linear") != std::string::npos || cs.rfind("lin_", 0) == 0) return ColorSpace::linear;
    if (cs.find("srgb") != std::string::npos) return ColorSpace::srgb;
    return std::nullopt;
}

// OpenImageIO's error text can hold several lines (one per failed strip, say); the first says what happened.
std::string first_line(const std::string& text) {
    const size_t end = text.find('\n');
    const std::string line = text.substr(0, end);
    return line.empty() ? "unknown error" : line;
}

}  // namespace

const char* name() { return "OpenImageIO"; }

bool supports(const std::string& format) { return is_known_format(format); }

Result<Decoded> decode(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& format) {
    // From the bytes read (and hashed), not the path: the file may change between the two reads.
    oiio::Filesystem::IOMemReader memory(bytes.data(), bytes.size());
    auto input = oiio::ImageInput::create(format);
    if (!input) return Status(StatusCode::internal, path + ": OpenImageIO has no " + format + " reader");
    if (!input->set_ioproxy(&memory))
        return Status(StatusCode::internal, path + ": the OpenImageIO " + format + " reader cannot read from memory");
    oiio::ImageSpec config;
    config.attribute("oiio:UnassociatedAlpha", 1);  // keep alpha as stored: it is a material channel, not coverage
    oiio::ImageSpec opened;
    if (!input->open(path, opened, config))
        return Status(StatusCode::corrupt, path + ": cannot decode " + format + ": " + first_line(input->geterror()));
    const oiio::ImageSpec& spec = input->spec();
    if (spec.width < 1 || spec.height < 1 || spec.width > kMaxImageDimension || spec.height > kMaxImageDimension)
        return Status(StatusCode::limit_exceeded, path + ": image is " + std::to_string(spec.width) + "x" +
                                                      std::to_string(spec.height) + ", each side must be 1.." +
                                                      std::to_string(kMaxImageDimension));
    if (spec.nchannels < 1 || spec.nchannels > 4)
        return Status(StatusCode::not_recognized,
                      path + ": image has " + std::to_string(spec.nchannels) + " channels, expected 1..4");
    if (spec.depth > 1) return Status(StatusCode::not_recognized, path + ": volume images are not supported");
    Decoded out;
    out.image = Image(spec.width, spec.height, spec.nchannels, sample_type_of(spec.format));
    // Integer samples are read as codes and divided here: OIIO's own conversion multiplies by 1/255, which
    // differs from code / 255 in the last bit, and both backends must give identical values. Codes are read a
    // band of scanlines at a time (tiled files whole), so that only one band of them is held beside the floats.
    const SampleType type = out.image.sample_type;
    const bool is_integer = type == SampleType::uint8 || type == SampleType::uint16;
    const size_t row_samples = static_cast<size_t>(spec.width) * static_cast<size_t>(spec.nchannels);
    const int band_rows =
        spec.tile_width > 0 ? spec.height : static_cast<int>(std::max<size_t>(1, (size_t{1} << 20) / row_samples));
    // An 8-bit code c arrives as c * 257 in UINT16.
    const float scale = type == SampleType::uint8 ? 255.0f : 65535.0f;
    const uint16_t divisor = type == SampleType::uint8 ? 257 : 1;
    std::vector<uint16_t> codes;
    bool read = true;
    if (!is_integer) {
        read = input->read_image(0, 0, 0, spec.nchannels, oiio::TypeDesc::FLOAT, out.image.pixels.data());
    } else {
        for (int y = 0; read && y < spec.height; y += band_rows) {
            const int rows = std::min(band_rows, spec.height - y);
            codes.resize(row_samples * static_cast<size_t>(rows));
            read = spec.tile_width > 0
                       ? input->read_image(0, 0, 0, spec.nchannels, oiio::TypeDesc::UINT16, codes.data())
                       : input->read_scanlines(0, 0, spec.y + y, spec.y + y + rows, 0, 0, spec.nchannels,
                                               oiio::TypeDesc::UINT16, codes.data());
            float* pixels = out.image.pixels.data() + static_cast<size_t>(y) * row_samples;
            for (size_t i = 0; i < codes.size(); ++i) pixels[i] = static_cast<float>(codes[i] / divisor) / scale;
        }
    }
    // A reader may return success with an error recorded: libjpeg's warnings ("Premature end of JPEG file",
    // "Corrupt JPEG data: ...") and libtiff's short strips fill the missing part with grey and go on.
    if (!read || input->has_error())
        return Status(StatusCode::corrupt, path + ": cannot decode " + format + ": " + first_line(input->geterror()));
    out.declared_color_space = declared_color_space(spec, format);
    if (!input->close())
        return Status(StatusCode::corrupt, path + ": cannot decode " + format + ": " + first_line(input->geterror()));
    return out;
}

namespace {

// An OpenImageIO IOProxy that writes through to an AtomicFile. The file's own checks catch a failed write, since
// OpenImageIO's writers do not all report one (a full disk gave truncated PNG, TGA and EXR files and success).
class AtomicFileProxy final : public oiio::Filesystem::IOProxy {
public:
    explicit AtomicFileProxy(AtomicFile& file) : IOProxy(file.path(), Write), file_(file) {}
    const char* proxytype() const override { return "nmc_atomic_file"; }
    size_t write(const void* buf, size_t size) override {
        const size_t n = pwrite(buf, size, m_pos);
        m_pos += static_cast<int64_t>(n);
        return n;
    }
    size_t pwrite(const void* buf, size_t size, int64_t offset) override {
        return offset >= 0 && file_.write_at(static_cast<uint64_t>(offset), buf, size).ok() ? size : 0;
    }
    size_t size() const override { return static_cast<size_t>(file_.size()); }

private:
    AtomicFile& file_;
};

// Scanlines through to the file as bands arrive: at most one band, in the stored sample type, besides the caller's.
class OiioRowWriter final : public RowWriter {
public:
    OiioRowWriter(AtomicFile& file, std::unique_ptr<oiio::ImageOutput> output, SampleType stored, int height)
        : file_(file), proxy_(file), output_(std::move(output)), stored_(stored), height_(height) {}
    ~OiioRowWriter() override {
        if (output_ && open_) output_->close();
    }

    Status open(const oiio::ImageSpec& spec, const std::string& format) {
        if (!output_->set_ioproxy(&proxy_))
            return Status(StatusCode::internal,
                          file_.path() + ": the OpenImageIO " + format + " writer cannot write through a proxy");
        format_ = format;
        if (!output_->open(file_.path(), spec)) return failed();
        open_ = true;
        return Status::success();
    }

    Status write_rows(const Image& band) override {
        if (next_row_ + band.height > height_)
            return Status(StatusCode::invalid_argument,
                          file_.path() + ": rows beyond the image's " + std::to_string(height_));
        oiio::TypeDesc type = oiio::TypeDesc::FLOAT;
        const void* data = band.pixels.data();
        if (stored_ == SampleType::uint8) {
            type = oiio::TypeDesc::UINT8;
            u8_.resize(band.pixels.size());
            for (size_t i = 0; i < u8_.size(); ++i) u8_[i] = quantize_u8(band.pixels[i]);
            data = u8_.data();
        } else if (stored_ == SampleType::uint16) {
            type = oiio::TypeDesc::UINT16;
            u16_.resize(band.pixels.size());
            for (size_t i = 0; i < u16_.size(); ++i) u16_[i] = quantize_u16(band.pixels[i]);
            data = u16_.data();
        }
        if (!output_->write_scanlines(next_row_, next_row_ + band.height, 0, type, data)) return failed();
        next_row_ += band.height;
        return file_.status();
    }

    // The return values decide, not has_error(): OpenImageIO 2.4's TIFF writer records "failed
    // TIFFWriteCustomDirectory() of the Exif data" for every file, complete and readable as it is.
    Status finish() override {
        if (next_row_ != height_)
            return Status(StatusCode::internal, file_.path() + ": " + std::to_string(next_row_) + " of " +
                                                    std::to_string(height_) + " rows written");
        open_ = false;
        if (!output_->close()) return failed();
        return file_.status();
    }

private:
    Status failed() const {
        // A failed write of the file explains the writer's failure best.
        if (!file_.status().ok()) return file_.status();
        return Status(StatusCode::io_error,
                      file_.path() + ": cannot encode " + format_ + ": " + first_line(output_->geterror()));
    }

    AtomicFile& file_;
    AtomicFileProxy proxy_;
    std::unique_ptr<oiio::ImageOutput> output_;
    SampleType stored_;
    int height_;
    int next_row_ = 0;
    bool open_ = false;
    std::string format_;
    std::vector<uint8_t> u8_;
    std::vector<uint16_t> u16_;
};

}  // namespace

Result<std::unique_ptr<RowWriter>> open_row_writer(AtomicFile& file, int width, int height, int channels,
                                                   SampleType sample_type, const std::string& format,
                                                   std::optional<ColorSpace> color_space) {
    const SampleType stored = stored_sample_type(sample_type, format);
    if (format == "jpeg" && channels != 1 && channels != 3)
        return Status(StatusCode::invalid_argument,
                      file.path() + ": JPEG holds 1 or 3 channels, image has " + std::to_string(channels));
    const oiio::TypeDesc type = stored == SampleType::uint8     ? oiio::TypeDesc::UINT8
                                : stored == SampleType::uint16  ? oiio::TypeDesc::UINT16
                                : stored == SampleType::float16 ? oiio::TypeDesc::HALF
                                                                : oiio::TypeDesc::FLOAT;
    oiio::ImageSpec spec(width, height, channels, type);
    spec.attribute("oiio:UnassociatedAlpha", 1);
    if (format == "jpeg") spec.attribute("Compression", "jpeg:95");
    if (color_space == ColorSpace::srgb) spec.attribute("oiio:ColorSpace", "sRGB");
    if (color_space == ColorSpace::linear) spec.attribute("oiio:ColorSpace", "Linear");
    auto output = oiio::ImageOutput::create(format);
    if (!output) return Status(StatusCode::internal, file.path() + ": OpenImageIO has no " + format + " writer");
    auto writer = std::make_unique<OiioRowWriter>(file, std::move(output), stored, height);
    NMC_RETURN_IF_ERROR(writer->open(spec, format));
    return std::unique_ptr<RowWriter>(std::move(writer));
}

}  // namespace nmc::image_backend
