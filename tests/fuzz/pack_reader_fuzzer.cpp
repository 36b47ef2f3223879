// libFuzzer target for the pack reader: any bytes must be read without a crash, leak or undefined behaviour,
// in both reading modes; and whatever the reader accepts, the writer must accept and write back readably.
// Seed corpus: data/golden. Run: pack_reader_fuzzer -max_total_time=60 CORPUS_DIR data/golden
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "format/pack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<nmc::Status> problems;
    nmc::ReadOptions collect;
    collect.problems = &problems;
    nmc::ContainerInfo info;
    const nmc::Result<nmc::Pack> collected = nmc::read_pack(data, size, &info, collect);

    const nmc::Result<nmc::Pack> pack = nmc::read_pack(data, size);
    // Both modes agree on acceptance, and a rejection always comes with at least one problem.
    if (pack.ok() != collected.ok() || (!collected.ok() && problems.empty())) std::abort();
    if (!pack.ok()) return 0;

    nmc::WriteOptions options;
    options.compress = false;
    const nmc::Result<std::vector<uint8_t>> written = nmc::write_pack(*pack, options);
    if (!written.ok()) std::abort();
    if (!nmc::read_pack(written->data(), written->size()).ok()) std::abort();
    return 0;
}
