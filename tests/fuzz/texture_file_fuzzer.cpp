// libFuzzer target for the DDS and KTX2 readers (texture/texture_file.h), KTX2's zstd levels included: any bytes
// must be read without a crash, leak or undefined behaviour; whatever a reader accepts, the writer must write back
// (without supercompression) to a file the reader accepts with the same levels.
// Seed corpus: tests/fuzz/corpus/texture. Run: texture_file_fuzzer -max_total_time=60 CORPUS_DIR tests/fuzz/corpus/texture
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "texture/texture_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    for (nmc::texture::ContainerFormat c : {nmc::texture::ContainerFormat::dds, nmc::texture::ContainerFormat::ktx2}) {
        const auto texture = nmc::texture::decode_texture_file(c, bytes);
        if (!texture.ok()) continue;
        const auto written = nmc::texture::encode_texture_file(c, *texture);
        if (!written.ok()) std::abort();
        const auto back = nmc::texture::decode_texture_file(c, *written);
        if (!back.ok() || back->levels != texture->levels) std::abort();
    }
    return 0;
}
