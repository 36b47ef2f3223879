// The PNGJPEG image backend: PNG (1-4 channels, 8 or 16 bits) through libpng and JPEG (grey or RGB, 8 bits)
// through libjpeg, for machines without OpenImageIO. Both libraries report errors by longjmp, so each
// protected step lives in its own small function whose frame holds no C++ object with a destructor. Both encode
// a whole image into memory, which the row writer appends to the file image_io.cpp opened.
// jpeglib.h needs size_t and FILE declared before it.
#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "material/image_backend.h"
#include "material/image_io.h"

namespace nmc::image_backend {
namespace {

// ---- PNG -----------------------------------------------------------------------------------------------

struct PngErrorState {
    char message[256] = "";
};

[[noreturn]] void png_error_to_jmp(png_structp png, png_const_charp message) {
    auto* state = static_cast<PngErrorState*>(png_get_error_ptr(png));
    std::snprintf(state->message, sizeof(state->message), "%s", message);
    png_longjmp(png, 1);
}

void png_warning_ignored(png_structp, png_const_charp) {}

struct PngMemoryReader {
    const uint8_t* data;
    size_t size;
    size_t offset;
};

void png_read_from_memory(png_structp png, png_bytep out, png_size_t count) {
    auto* reader = static_cast<PngMemoryReader*>(png_get_io_ptr(png));
    if (count > reader->size - reader->offset) png_error(png, "truncated file");
    std::memcpy(out, reader->data + reader->offset, count);
    reader->offset += count;
}

// RAII for a libpng read or write struct pair.
class PngHandle {
public:
    explicit PngHandle(bool writing, PngErrorState* errors) : writing_(writing) {
        png_ = writing ? png_create_write_struct(PNG_LIBPNG_VER_STRING, errors, png_error_to_jmp, png_warning_ignored)
                       : png_create_read_struct(PNG_LIBPNG_VER_STRING, errors, png_error_to_jmp, png_warning_ignored);
        if (png_) info_ = png_create_info_struct(png_);
    }
    ~PngHandle() {
        if (writing_)
            png_destroy_write_struct(&png_, &info_);
        else
            png_destroy_read_struct(&png_, &info_, nullptr);
    }
    PngHandle(const PngHandle&) = delete;
    PngHandle& operator=(const PngHandle&) = delete;
    bool valid() const { return png_ && info_; }
    png_structp png() const { return png_; }
    png_infop info() const { return info_; }

private:
    bool writing_;
    png_structp png_ = nullptr;
    png_infop info_ = nullptr;
};

struct PngHeader {
    png_uint_32 width = 0, height = 0;
    int channels = 0, bit_depth = 0;
    int srgb_intent = -1;  // -1: no sRGB chunk
    double gamma = 0;      // 0: no gAMA chunk
};

// Reads the header and sets up expansion to 8/16-bit grey, grey+alpha, RGB or RGBA. Returns false on error.
bool png_read_header(png_structp png, png_infop info, PngMemoryReader* reader, PngHeader* header) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_set_read_fn(png, reader, png_read_from_memory);
    png_read_info(png, info);
    const int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_swap(png);  // host order for little-endian machines
    png_read_update_info(png, info);
    header->width = png_get_image_width(png, info);
    header->height = png_get_image_height(png, info);
    header->channels = png_get_channels(png, info);
    header->bit_depth = png_get_bit_depth(png, info);
    int intent = 0;
    if (png_get_sRGB(png, info, &intent)) header->srgb_intent = intent;
    double gamma = 0;
    if (png_get_gAMA(png, info, &gamma)) header->gamma = gamma;
    return true;
}

bool png_read_rows(png_structp png, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_image(png, rows);
    return true;
}

Result<Decoded> decode_png(const std::string& path, const std::vector<uint8_t>& bytes) {
    PngErrorState errors;
    PngHandle handle(false, &errors);
    if (!handle.valid()) return Status(StatusCode::internal, path + ": libpng could not allocate a reader");
    PngMemoryReader reader{bytes.data(), bytes.size(), 0};
    PngHeader header;
    if (!png_read_header(handle.png(), handle.info(), &reader, &header))
        return Status(StatusCode::corrupt, path + ": PNG error: " + errors.message);
    if (header.width > static_cast<png_uint_32>(kMaxImageDimension) ||
        header.height > static_cast<png_uint_32>(kMaxImageDimension))
        return Status(StatusCode::limit_exceeded, path + ": image too large");
    const int bytes_per_sample = header.bit_depth == 16 ? 2 : 1;
    const size_t row_bytes = static_cast<size_t>(header.width) * header.channels * bytes_per_sample;
    std::vector<uint8_t> raw(row_bytes * header.height);
    std::vector<png_bytep> rows(header.height);
    for (png_uint_32 y = 0; y < header.height; ++y) rows[y] = raw.data() + y * row_bytes;
    if (!png_read_rows(handle.png(), rows.data()))
        return Status(StatusCode::corrupt, path + ": PNG error: " + errors.message);

    Decoded out;
    out.image = Image(static_cast<int>(header.width), static_cast<int>(header.height), header.channels,
                      bytes_per_sample == 2 ? SampleType::uint16 : SampleType::uint8);
    if (bytes_per_sample == 2) {
        for (size_t i = 0; i < out.image.pixels.size(); ++i) {
            uint16_t v;
            std::memcpy(&v, raw.data() + 2 * i, 2);
            out.image.pixels[i] = static_cast<float>(v) / 65535.0f;
        }
    } else {
        for (size_t i = 0; i < out.image.pixels.size(); ++i) out.image.pixels[i] = static_cast<float>(raw[i]) / 255.0f;
    }
    if (header.srgb_intent >= 0)
        out.declared_color_space = ColorSpace::srgb;
    else if (header.gamma > 0.99 && header.gamma < 1.01)
        out.declared_color_space = ColorSpace::linear;
    else if (header.gamma > 0.4 && header.gamma < 0.5)
        out.declared_color_space = ColorSpace::srgb;
    return out;
}

// Encoded bytes collected in memory by the libraries' output callbacks. Appending may throw std::bad_alloc, which
// must not cross the C libraries' frames: append() reports it instead, and the callback raises the library's error.
struct MemoryOutput {
    std::vector<uint8_t> bytes;
    bool append(const uint8_t* data, size_t size) {
        try {
            bytes.insert(bytes.end(), data, data + size);
            return true;
        } catch (const std::bad_alloc&) {
            return false;
        }
    }
};

void png_write_to_memory(png_structp png, png_bytep data, png_size_t size) {
    if (!static_cast<MemoryOutput*>(png_get_io_ptr(png))->append(data, size)) png_error(png, "out of memory");
}

void png_flush_nothing(png_structp) {}

bool png_write_all(png_structp png, png_infop info, MemoryOutput* output, const Image& image, int bit_depth,
                   std::optional<ColorSpace> color_space, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                      PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_write_fn(png, output, png_write_to_memory, png_flush_nothing);
    png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), bit_depth,
                 kColorTypes[image.channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (color_space == ColorSpace::srgb) png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    if (color_space == ColorSpace::linear) png_set_gAMA(png, info, 1.0);
    png_write_info(png, info);
    if (bit_depth == 16) png_set_swap(png);
    png_write_image(png, rows);
    png_write_end(png, info);
    return true;
}

Result<std::vector<uint8_t>> encode_png(const std::string& path, const Image& image,
                                        std::optional<ColorSpace> color_space) {
    const bool wide = stored_sample_type(image.sample_type, "png") == SampleType::uint16;
    const size_t row_samples = static_cast<size_t>(image.width) * image.channels;
    std::vector<uint8_t> raw(row_samples * image.height * (wide ? 2 : 1));
    for (size_t i = 0; i < image.pixels.size(); ++i) {
        if (wide) {
            const uint16_t v = quantize_u16(image.pixels[i]);
            std::memcpy(raw.data() + 2 * i, &v, 2);
        } else {
            raw[i] = quantize_u8(image.pixels[i]);
        }
    }
    std::vector<png_bytep> rows(image.height);
    for (int y = 0; y < image.height; ++y) rows[y] = raw.data() + y * row_samples * (wide ? 2 : 1);
    PngErrorState errors;
    PngHandle handle(true, &errors);
    if (!handle.valid()) return Status(StatusCode::internal, path + ": libpng could not allocate a writer");
    MemoryOutput output;
    if (!png_write_all(handle.png(), handle.info(), &output, image, wide ? 16 : 8, color_space, rows.data()))
        return Status(StatusCode::io_error, path + ": PNG error: " + errors.message);
    return std::move(output.bytes);
}

// ---- JPEG ----------------------------------------------------------------------------------------------

struct JpegErrorManager {
    jpeg_error_mgr base;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

// The message kept is the first problem libjpeg reported: a warning about damaged data (jpeg_keep_warning) is
// often what a later error follows from.
[[noreturn]] void jpeg_error_to_jmp(j_common_ptr cinfo) {
    auto* errors = reinterpret_cast<JpegErrorManager*>(cinfo->err);
    if (cinfo->err->num_warnings == 0) (*cinfo->err->format_message)(cinfo, errors->message);
    std::longjmp(errors->jump, 1);
}

// libjpeg's warnings are damaged data ("Premature end of JPEG file", "Corrupt JPEG data: bad Huffman code"):
// it carries on and fills what it could not decode with grey. The first one is kept (num_warnings counts them)
// and the decode fails once libjpeg returns; trace messages (level >= 0) are dropped.
void jpeg_keep_warning(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    auto* errors = reinterpret_cast<JpegErrorManager*>(cinfo->err);
    if (cinfo->err->num_warnings++ == 0) (*cinfo->err->format_message)(cinfo, errors->message);
}

// RAII for a libjpeg decompressor.
class JpegReader {
public:
    JpegReader() {
        cinfo_.err = jpeg_std_error(&errors_.base);
        errors_.base.error_exit = jpeg_error_to_jmp;
        errors_.base.emit_message = jpeg_keep_warning;
        errors_.message[0] = '\0';
    }
    ~JpegReader() {
        if (created_) jpeg_destroy_decompress(&cinfo_);
    }
    JpegReader(const JpegReader&) = delete;
    JpegReader& operator=(const JpegReader&) = delete;
    jpeg_decompress_struct* cinfo() { return &cinfo_; }
    JpegErrorManager* errors() { return &errors_; }
    bool* created() { return &created_; }

private:
    jpeg_decompress_struct cinfo_{};
    JpegErrorManager errors_{};
    bool created_ = false;
};

bool jpeg_start(JpegReader* reader, const std::vector<uint8_t>& bytes) {
    if (setjmp(reader->errors()->jump)) return false;
    jpeg_create_decompress(reader->cinfo());
    *reader->created() = true;
    jpeg_mem_src(reader->cinfo(), bytes.data(), static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(reader->cinfo(), TRUE);
    return true;
}

bool jpeg_decode_rows(JpegReader* reader, uint8_t* raw) {
    if (setjmp(reader->errors()->jump)) return false;
    jpeg_decompress_struct* cinfo = reader->cinfo();
    jpeg_start_decompress(cinfo);
    const size_t row_bytes = static_cast<size_t>(cinfo->output_width) * cinfo->output_components;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = raw + cinfo->output_scanline * row_bytes;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_decompress(cinfo);
    return true;
}

Result<Decoded> decode_jpeg(const std::string& path, const std::vector<uint8_t>& bytes) {
    JpegReader reader;
    if (!jpeg_start(&reader, bytes) || reader.errors()->base.num_warnings > 0)
        return Status(StatusCode::corrupt, path + ": JPEG error: " + reader.errors()->message);
    jpeg_decompress_struct* cinfo = reader.cinfo();
    if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK)
        return Status(StatusCode::not_recognized, path + ": CMYK JPEG images are not supported");
    if (cinfo->image_width > static_cast<JDIMENSION>(kMaxImageDimension) ||
        cinfo->image_height > static_cast<JDIMENSION>(kMaxImageDimension) || cinfo->image_width == 0 ||
        cinfo->image_height == 0)
        return Status(StatusCode::limit_exceeded, path + ": image is " + std::to_string(cinfo->image_width) + "x" +
                                                      std::to_string(cinfo->image_height) + ", each side must be 1.." +
                                                      std::to_string(kMaxImageDimension));
    cinfo->out_color_space = cinfo->num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    const int channels = cinfo->num_components == 1 ? 1 : 3;
    std::vector<uint8_t> raw(static_cast<size_t>(cinfo->image_width) * cinfo->image_height * channels);
    if (!jpeg_decode_rows(&reader, raw.data()) || reader.errors()->base.num_warnings > 0)
        return Status(StatusCode::corrupt, path + ": JPEG error: " + reader.errors()->message);
    Decoded out;
    out.image = Image(static_cast<int>(cinfo->image_width), static_cast<int>(cinfo->image_height), channels);
    for (size_t i = 0; i < raw.size(); ++i) out.image.pixels[i] = static_cast<float>(raw[i]) / 255.0f;
    return out;
}

// A libjpeg destination that appends to a MemoryOutput through a fixed chunk. `base` comes first: libjpeg sees
// a jpeg_destination_mgr*.
struct JpegMemoryDestination {
    jpeg_destination_mgr base;
    MemoryOutput* output;
    JOCTET chunk[65536];
};

JpegMemoryDestination* memory_destination(j_compress_ptr cinfo) {
    return reinterpret_cast<JpegMemoryDestination*>(cinfo->dest);
}

void jpeg_start_chunk(j_compress_ptr cinfo) {
    JpegMemoryDestination* d = memory_destination(cinfo);
    d->base.next_output_byte = d->chunk;
    d->base.free_in_buffer = sizeof d->chunk;
}

boolean jpeg_chunk_full(j_compress_ptr cinfo) {
    JpegMemoryDestination* d = memory_destination(cinfo);
    if (!d->output->append(d->chunk, sizeof d->chunk)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    jpeg_start_chunk(cinfo);
    return TRUE;
}

void jpeg_last_chunk(j_compress_ptr cinfo) {
    JpegMemoryDestination* d = memory_destination(cinfo);
    if (!d->output->append(d->chunk, sizeof d->chunk - d->base.free_in_buffer)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
}

// RAII for a libjpeg compressor.
class JpegWriter {
public:
    JpegWriter() {
        cinfo_.err = jpeg_std_error(&errors_.base);
        errors_.base.error_exit = jpeg_error_to_jmp;
        errors_.message[0] = '\0';
    }
    ~JpegWriter() {
        if (created_) jpeg_destroy_compress(&cinfo_);
    }
    JpegWriter(const JpegWriter&) = delete;
    JpegWriter& operator=(const JpegWriter&) = delete;
    jpeg_compress_struct* cinfo() { return &cinfo_; }
    JpegErrorManager* errors() { return &errors_; }
    bool* created() { return &created_; }

private:
    jpeg_compress_struct cinfo_{};
    JpegErrorManager errors_{};
    bool created_ = false;
};

bool jpeg_encode_all(JpegWriter* writer, JpegMemoryDestination* destination, int width, int height, int channels,
                     const uint8_t* raw) {
    if (setjmp(writer->errors()->jump)) return false;
    jpeg_compress_struct* cinfo = writer->cinfo();
    jpeg_create_compress(cinfo);
    *writer->created() = true;
    destination->base.init_destination = jpeg_start_chunk;
    destination->base.empty_output_buffer = jpeg_chunk_full;
    destination->base.term_destination = jpeg_last_chunk;
    cinfo->dest = &destination->base;
    cinfo->image_width = static_cast<JDIMENSION>(width);
    cinfo->image_height = static_cast<JDIMENSION>(height);
    cinfo->input_components = channels;
    cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, 95, TRUE);
    jpeg_start_compress(cinfo, TRUE);
    const size_t row_bytes = static_cast<size_t>(width) * channels;
    while (cinfo->next_scanline < cinfo->image_height) {
        JSAMPROW row = const_cast<uint8_t*>(raw + cinfo->next_scanline * row_bytes);
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
    return true;
}

Result<std::vector<uint8_t>> encode_jpeg(const std::string& path, const Image& image) {
    if (image.channels != 1 && image.channels != 3)
        return Status(StatusCode::invalid_argument, path + ": JPEG holds 1 or 3 channels, image has " +
                                                        std::to_string(image.channels));
    std::vector<uint8_t> raw(image.pixels.size());
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = quantize_u8(image.pixels[i]);
    MemoryOutput output;
    auto destination = std::make_unique<JpegMemoryDestination>();  // 64 KiB: not on the stack
    destination->output = &output;
    JpegWriter writer;
    if (!jpeg_encode_all(&writer, destination.get(), image.width, image.height, image.channels, raw.data()))
        return Status(StatusCode::io_error, path + ": JPEG error: " + writer.errors()->message);
    return std::move(output.bytes);
}

}  // namespace

const char* name() { return "libpng+libjpeg"; }

bool supports(const std::string& format) { return format == "png" || format == "jpeg"; }

Result<Decoded> decode(const std::string& path, const std::vector<uint8_t>& bytes, const std::string& format) {
    return format == "png" ? decode_png(path, bytes) : decode_jpeg(path, bytes);
}

namespace {

// libpng and libjpeg could take rows as they come too, but each call would need its own longjmp-protected frame:
// this backend, for machines without OpenImageIO, keeps the rows (as float samples) and encodes at finish().
class BufferedRowWriter final : public RowWriter {
public:
    BufferedRowWriter(AtomicFile& file, Image image, std::string format, std::optional<ColorSpace> color_space)
        : file_(file), image_(std::move(image)), format_(std::move(format)), color_space_(color_space) {}

    Status write_rows(const Image& band) override {
        if (next_row_ + band.height > image_.height)
            return Status(StatusCode::invalid_argument,
                          file_.path() + ": rows beyond the image's " + std::to_string(image_.height));
        std::copy(band.pixels.begin(), band.pixels.end(),
                  image_.pixels.begin() +
                      static_cast<long>(static_cast<size_t>(next_row_) * static_cast<size_t>(image_.width) *
                                        static_cast<size_t>(image_.channels)));
        next_row_ += band.height;
        return Status::success();
    }

    Status finish() override {
        if (next_row_ != image_.height)
            return Status(StatusCode::internal, file_.path() + ": " + std::to_string(next_row_) + " of " +
                                                    std::to_string(image_.height) + " rows written");
        auto bytes =
            format_ == "png" ? encode_png(file_.path(), image_, color_space_) : encode_jpeg(file_.path(), image_);
        if (!bytes.ok()) return bytes.status();
        return file_.append(bytes->data(), bytes->size());
    }

private:
    AtomicFile& file_;
    Image image_;
    std::string format_;
    std::optional<ColorSpace> color_space_;
    int next_row_ = 0;
};

}  // namespace

Result<std::unique_ptr<RowWriter>> open_row_writer(AtomicFile& file, int width, int height, int channels,
                                                   SampleType sample_type, const std::string& format,
                                                   std::optional<ColorSpace> color_space) {
    return std::unique_ptr<RowWriter>(
        std::make_unique<BufferedRowWriter>(file, Image(width, height, channels, sample_type), format, color_space));
}

}  // namespace nmc::image_backend
