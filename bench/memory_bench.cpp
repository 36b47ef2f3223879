// Peak memory of nmc's commands on a large pack: builds a SIZE^2 pack of TEXTURES float RGBA textures (EXR) with a
// constant-output network (tests/validate/constant_pack.h: the pack is small, writing it costs seconds, no
// training), then runs the nmc executable's inspect, validate, decompress (EXR and PNG) and scan (of one decoded
// 16-bit RGBA PNG) and prints each one's peak resident memory (wait4's ru_maxrss) and wall time. docs/cli.md
// states the results ("Memory").
//
//   nmc_memory_bench NMC WORK_DIR [SIZE=16384] [TEXTURES=16]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "format/pack.h"
#include "tests/validate/constant_pack.h"

namespace {

// Runs `argv` (stdout and stderr to /dev/null), returns its exit code; peak_bytes and seconds filled.
int run(const std::vector<std::string>& argv, uint64_t& peak_bytes, double& seconds) {
    std::fflush(stdout);  // or the child's freopen would write the buffered lines again
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) ::_exit(126);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    ::wait4(child, &status, 0, &usage);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    peak_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace nmc;
    if (argc < 3) {
        std::fprintf(stderr, "usage: nmc_memory_bench NMC WORK_DIR [SIZE=16384] [TEXTURES=16]\n");
        return 2;
    }
    const std::string nmc = argv[1];
    const std::string work = argv[2];
    const int size = argc > 3 ? std::atoi(argv[3]) : 16384;
    const int texture_count = argc > 4 ? std::atoi(argv[4]) : 16;
    std::filesystem::create_directories(work);

    // Up to 16 pack channels (every one used), each texture four of them (a channel may feed several textures).
    const int channel_count = std::min(16, 4 * texture_count);
    std::vector<ChannelInfo> channels;
    std::vector<float> outputs;
    for (int c = 0; c < channel_count; ++c) {
        channels.push_back({"c" + std::to_string(c), 0.0f, 1.0f});
        outputs.push_back(static_cast<float>(c + 1) / 32.0f);  // exact in binary16
    }
    Pack pack = testing::constant_pack(size, size, 1, channels, outputs);
    for (int t = 0; t < texture_count; ++t) {
        std::vector<ChannelSource> sources;
        for (int k = 0; k < 4; ++k) sources.push_back(testing::from_pack((4 * t + k) % channel_count));
        const std::string name = t == 0 ? "big_BaseColor" : "big_layer" + std::to_string(t);
        pack.textures.push_back(
            testing::texture_layout(name + ".exr", SampleType::float32, ColorSpace::linear, std::move(sources)));
    }
    const std::string pack_path = work + "/big.nmc";
    bench::exit_on_error(write_pack_file(pack_path, pack), "writing the pack");
    std::printf("pack: %s, %d x %d, %d float32 RGBA textures (EXR), %ju bytes\n", pack_path.c_str(), size, size,
                texture_count, static_cast<uintmax_t>(std::filesystem::file_size(pack_path)));

    const std::string png_dir = work + "/png", exr_dir = work + "/exr", scan_dir = work + "/scan";
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"inspect", {nmc, "inspect", pack_path}},
        {"validate (structure)", {nmc, "validate", pack_path}},
        {"decompress --format exr", {nmc, "decompress", pack_path, "-o", exr_dir, "--format", "exr", "-f"}},
        {"decompress --format png", {nmc, "decompress", pack_path, "-o", png_dir, "--format", "png", "-f"}},
        {"scan (one 16-bit RGBA PNG)", {nmc, "scan", scan_dir}},
    };
    for (const auto& [label, command] : commands) {
        if (label.rfind("scan", 0) == 0) {
            std::filesystem::create_directories(scan_dir);
            std::error_code error;
            std::filesystem::copy_file(png_dir + "/big_BaseColor.png", scan_dir + "/big_BaseColor.png",
                                       std::filesystem::copy_options::overwrite_existing, error);
            if (error) {
                std::fprintf(stderr, "error: no decoded PNG to scan: %s\n", error.message().c_str());
                return 1;
            }
        }
        uint64_t peak = 0;
        double seconds = 0;
        const int code = run(command, peak, seconds);
        std::string line;
        for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
        std::printf("%-28s exit %d  peak %8.1f MiB  %7.1f s  (%s)\n", label.c_str(), code,
                    static_cast<double>(peak) / (1 << 20), seconds, line.c_str());
        std::fflush(stdout);
    }
    return 0;
}
