// Regenerates data/golden/v1_0_small.nmc (or the path given) from make_golden_pack(). Run it only when the
// format version changes on purpose; golden_pack_test fails on any accidental change of the bytes.
#include <cstdio>

#include "tests/format/golden_pack.h"

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : nmc::testing::golden_pack_path();
    const nmc::Status status =
        nmc::write_pack_file(path, nmc::testing::make_golden_pack(), nmc::testing::golden_write_options());
    if (!status.ok()) {
        std::fprintf(stderr, "make_golden_pack: %s\n", status.to_string().c_str());
        return 1;
    }
    std::printf("wrote %s\n", path.c_str());
    return 0;
}
