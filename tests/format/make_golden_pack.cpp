// Regenerates data/golden/v<MAJOR>_0_small.nmc (or the path given) from make_golden_pack() (major 1) or
// make_golden_pack_2_0() (major 2). Run it only when a golden file is added on purpose; golden_pack_test fails on any
// accidental change of the bytes.
#include <cstdio>
#include <string>

#include "tests/format/golden_pack.h"

int main(int argc, char** argv) {
    const std::string major = argc > 1 ? argv[1] : "";
    if (major != "1" && major != "2") {
        std::fprintf(stderr, "usage: make_golden_pack 1|2 [path]\n");
        return 2;
    }
    const int version = major == "1" ? 1 : 2;
    const std::string path = argc > 2 ? argv[2] : nmc::testing::golden_pack_path(version);
    const nmc::Pack pack = version == 1 ? nmc::testing::make_golden_pack() : nmc::testing::make_golden_pack_2_0();
    const nmc::Status status = nmc::write_pack_file(path, pack, nmc::testing::golden_write_options());
    if (!status.ok()) {
        std::fprintf(stderr, "make_golden_pack: %s\n", status.to_string().c_str());
        return 1;
    }
    std::printf("wrote %s\n", path.c_str());
    return 0;
}
