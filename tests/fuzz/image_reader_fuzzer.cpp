// libFuzzer target for the image reader (material/image_io.h) through this build's backend (OpenImageIO, or
// libpng + libjpeg): any file must be read or refused with one of read_image_file's documented codes, without a
// crash, hang, leak or undefined behaviour in nmc's code; what is read has a size within the limits and exactly the
// pixels it declares. The image libraries themselves are not instrumented, so coverage guides mutations through
// nmc's checks (signature sniffing, PNG chunk walk, dimension limits) and the backend's use of the library. The CRCs
// of a PNG's chunks are recomputed before reading, so that mutated chunks reach the decoder instead of stopping at
// nmc's CRC check (which tests/material covers); fuzzing builds limit images to 256 texels per side
// (material/image_io.h), so no input allocates much.
// Seed corpus: tests/fuzz/corpus/image (PNG, TGA, EXR and JPEG files of a few texels).
// Run: image_reader_fuzzer -max_total_time=60 CORPUS_DIR tests/fuzz/corpus/image
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "material/image_io.h"

namespace {

// read_image_file takes a path: each input is written to this process's own file in the temporary folder.
std::string input_path() {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nmc-image-fuzz-" +
           std::to_string(::getpid());
}

uint32_t read_be32(const uint8_t* p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Stores the right CRC-32 in every whole chunk of a PNG file (after the 8-byte signature); other files stay as given.
void fix_png_crcs(std::vector<uint8_t>& bytes) {
    static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (bytes.size() < 8 || !std::equal(kSignature, kSignature + 8, bytes.begin())) return;
    for (size_t offset = 8; bytes.size() - offset >= 12;) {
        const uint32_t length = read_be32(bytes.data() + offset);
        if (length > bytes.size() - offset - 12) return;
        const uint32_t crc = nmc::crc32(bytes.data() + offset + 4, size_t{length} + 4);
        for (int i = 0; i < 4; ++i) bytes[offset + 8 + length + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
        offset += size_t{length} + 12;
    }
}

bool documented_failure(nmc::StatusCode code) {
    return code == nmc::StatusCode::not_recognized || code == nmc::StatusCode::corrupt ||
           code == nmc::StatusCode::limit_exceeded || code == nmc::StatusCode::backend_unavailable;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = input_path();
    std::vector<uint8_t> bytes(data, data + size);
    fix_png_crcs(bytes);
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) std::abort();
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    if (std::fclose(file) != 0 || !written) std::abort();

    const nmc::Result<nmc::ImageFile> image = nmc::read_image_file(path);
    std::remove(path.c_str());
    if (!image.ok()) {
        if (!documented_failure(image.status().code())) std::abort();
        return 0;
    }
    const nmc::Image& pixels = image->image;
    if (pixels.width < 1 || pixels.width > nmc::kMaxImageDimension || pixels.height < 1 ||
        pixels.height > nmc::kMaxImageDimension || pixels.channels < 1 || pixels.channels > 4 ||
        pixels.pixels.size() != pixels.texel_count() * static_cast<size_t>(pixels.channels))
        std::abort();
    return 0;
}
