// libFuzzer target for the material manifest parser (docs/manifest.md): any bytes must parse or fail with
// invalid_argument, without a crash or undefined behaviour; whatever parses must write back (manifest_to_json) as
// JSON that parses to a manifest writing back the same text.
// Seed corpus: tests/fuzz/corpus/manifest.
// Run: manifest_fuzzer -max_total_time=60 CORPUS_DIR tests/fuzz/corpus/manifest
#include <cstdint>
#include <cstdlib>
#include <string>

#include "material/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const nmc::Result<nmc::Manifest> manifest = nmc::parse_manifest(text, "fuzz.json");
    if (!manifest.ok()) {
        if (manifest.status().code() != nmc::StatusCode::invalid_argument) std::abort();
        return 0;
    }
    const std::string written = nmc::manifest_to_json(*manifest);
    const nmc::Result<nmc::Manifest> reread = nmc::parse_manifest(written, "written.json");
    if (!reread.ok() || nmc::manifest_to_json(*reread) != written) std::abort();
    return 0;
}
