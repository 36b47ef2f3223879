// Throughput of the Vulkan runtime's whole-mip decoder on the CUDA benchmark's pack (bench/cuda_decoder_bench.cu: a
// random but valid default-network pack, full mip chain, grid scale 2, 16 features of 4 bits, 48 -> 64 -> 64 -> 64 ->
// C with an Int8 last layer), in both arithmetics: every mip decoded into device memory, timed with device timestamps
// (median of `repetitions` runs after one warm-up), on each Vulkan device the loader lists (or the one named), on the
// scalar path and, where the device has it, the cooperative-matrix path.
// Usage: nmc_vulkan_decoder_bench [size (default 2048)] [channels (default 10)] [repetitions (default 5)]
//                                 [device index (default: every device)]
// lavapipe on a 2-core machine decodes about 0.06 Mtexel/s: give it a small size (256 or 512).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "runtime/vulkan/vulkan_decoder.h"
#include "tests/decoder/random_pack.h"

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 2048;
    const int channels = argc > 2 ? std::atoi(argv[2]) : 10;
    const int repetitions = argc > 3 ? std::atoi(argv[3]) : 5;
    const int only_device = argc > 4 ? std::atoi(argv[4]) : -1;
    if (size < 1 || size > 16384 || channels < 1 || channels > 16 || repetitions < 1) {
        std::fprintf(stderr, "usage: %s [size 1..16384] [channels 1..16] [repetitions >= 1] [device index]\n", argv[0]);
        return 2;
    }
    nmc::Result<std::vector<nmc::VulkanDeviceInfo>> devices = nmc::list_vulkan_devices();
    nmc::bench::exit_on_error(devices.status(), "listing the Vulkan devices");

    const nmc::test::RandomPackOptions o = nmc::test::default_network_options(size, channels);
    nmc::Pack pack = nmc::test::make_random_pack(o);
    double texels = 0;
    for (int m = 0; m < pack.material.mip_count; ++m)
        texels += static_cast<double>(pack.material.mip_width(m)) * pack.material.mip_height(m);

    std::printf("# Vulkan whole-material decode: %dx%d, %d mips (%.0f texels), C = %d, 48-64-64-64-C, median of %d\n",
                size, size, pack.material.mip_count, texels, channels, repetitions);
    std::printf("| device | path | arithmetic | ms | Gtexel/s |\n|---|---|---|---:|---:|\n");
    std::vector<std::string> statistics;  // the compiled pipelines', printed after the table
    for (const nmc::VulkanDeviceInfo& device : *devices) {
        if (only_device >= 0 && device.index != only_device) continue;
        std::vector<nmc::VulkanNetworkPath> paths = {nmc::VulkanNetworkPath::scalar};
        if (device.cooperative_matrix) paths.push_back(nmc::VulkanNetworkPath::cooperative_matrix);
        for (nmc::VulkanNetworkPath path : paths) {
            for (nmc::Arithmetic arithmetic : {nmc::Arithmetic::float32, nmc::Arithmetic::binary16}) {
                pack.network.arithmetic = arithmetic;
                nmc::VulkanDecoderOptions options;
                options.device = device.index;
                options.path = path;
                nmc::Result<nmc::VulkanDecoder> decoder = nmc::VulkanDecoder::create(pack, options);
                nmc::bench::exit_on_error(decoder.status(), "creating the decoder");
                nmc::Result<double> ms = decoder->time_all_mips_ms(repetitions);
                nmc::bench::exit_on_error(ms.status(), "timing the decode");
                std::printf("| vulkan:%d %s | %s | %s | %.3f | %.4g |\n", device.index, device.name.c_str(),
                            nmc::to_string(path), nmc::to_string(arithmetic), ms.value(),
                            texels / (ms.value() * 1e-3) * 1e-9);
                std::fflush(stdout);
                const std::string compiled = decoder->pipeline_statistics();
                if (!compiled.empty())
                    statistics.push_back("vulkan:" + std::to_string(device.index) + " " + nmc::to_string(path) + " " +
                                         nmc::to_string(arithmetic) + ": " + compiled);
            }
        }
    }
    if (!statistics.empty()) std::printf("\n# Compiled pipelines (the driver's statistics)\n");
    for (const std::string& line : statistics) std::printf("- %s\n", line.c_str());
    return 0;
}
