// cpu_features() (CPUID and XGETBV) against the Linux kernel's view of the same CPU: /proc/cpuinfo's flags list
// an extension only when the CPU has it and the kernel enabled its register state.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "decoder/cpu/cpu_features.h"

namespace {

std::set<std::string> kernel_cpu_flags() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        std::set<std::string> flags;
        for (std::string word; words >> word;) flags.insert(word);
        return flags;
    }
    return {};
}

TEST(CpuFeatures, AgreeWithTheLinuxKernel) {
#if !(defined(__linux__) && defined(__x86_64__))
    GTEST_SKIP() << "needs Linux on x86-64";
#endif
    const std::set<std::string> flags = kernel_cpu_flags();
    if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
    const nmc::CpuFeatures& cpu = nmc::cpu_features();
    const std::pair<const char*, bool> features[] = {
        {"avx2", cpu.avx2},         {"fma", cpu.fma},           {"f16c", cpu.f16c},
        {"avx512f", cpu.avx512f},   {"avx512bw", cpu.avx512bw}, {"avx512vl", cpu.avx512vl},
        {"avx512dq", cpu.avx512dq}, {"avx512_bf16", cpu.avx512bf16}, {"avx512_fp16", cpu.avx512fp16}};
    for (const auto& [flag, detected] : features) EXPECT_EQ(detected, flags.count(flag) == 1) << flag;
}

}  // namespace
