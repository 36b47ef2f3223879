// The arithmetic ceilings the Vulkan runtime's decoders work under, on each Vulkan device the loader lists (or the
// one named): float32 multiply-adds (bench/shaders/peak_fma.comp), binary16 tensor-core products through
// GL_NV_cooperative_matrix (peak_mma.comp), and a 64 -> 64 layer applied over and over on tensor cores with the
// layer vectors in registers or staged through shared memory, with and without spec 8.6's activation
// (peak_layers.comp). Device timestamps, median of `repetitions` runs after one warm-up.
// Usage: nmc_vulkan_peak_bench [work scale (default 1; lavapipe: 0.01)] [repetitions (default 5)] [device index]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "runtime/vulkan/vulkan_context.h"
#include "runtime/vulkan/vulkan_decoder.h"

#include "bench/spirv/peak_fma.h"
#include "bench/spirv/peak_layers.h"
#include "bench/spirv/peak_mma.h"

namespace {

using nmc::vulkan_detail::Buffer;
using nmc::vulkan_detail::ComputePipeline;
using nmc::vulkan_detail::Context;
using nmc::vulkan_detail::SpecializationConstant;
using nmc::vulkan_detail::vk_struct;

void check_vk(VkResult r, const char* what) {
    if (r != VK_SUCCESS) nmc::bench::exit_on_error(nmc::vulkan_detail::vulkan_error(what, r), what);
}

// One kernel of the benchmark: its SPIR-V, constants, workgroups and loop count, and what one run computes.
struct Kernel {
    std::string name;
    const uint32_t* spirv;
    size_t spirv_bytes;
    std::vector<SpecializationConstant> constants;
    uint32_t groups;
    uint32_t iterations;
    double flops;        // floating-point operations of one run (a multiply-add counts 2)
    double layer_rows;   // rows through one 64 -> 64 layer in one run (0: not a layer kernel)
    uint32_t activation = 0;  // a layer kernel's kActivation: 1 the results of both stagings must be equal
};

// The first 64 x 64 floats a layer kernel writes: the final vectors of its first 64 rows, row by row.
constexpr size_t kCompared = 64 * 64;

// The median time of `repetitions` runs of `kernel`, in ms; `first_values` gets the output's first kCompared floats
// (through `readback`, host-visible).
double time_kernel(Context& context, VkQueryPool queries, const Kernel& kernel, const std::vector<VkBuffer>& buffers,
                   const Buffer& readback, int repetitions, std::string& statistics, std::vector<float>& first_values) {
    nmc::Result<std::unique_ptr<ComputePipeline>> pipeline = ComputePipeline::create(
        context, kernel.spirv, kernel.spirv_bytes, buffers, kernel.constants, sizeof(uint32_t));
    nmc::bench::exit_on_error(pipeline.status(), ("creating the pipeline of " + kernel.name).c_str());
    statistics = pipeline.value()->statistics();
    const nmc::vulkan_detail::DeviceFunctions& vk = context.vk();
    std::vector<double> times;
    for (int run = 0; run <= repetitions; ++run) {  // run 0 warms up
        nmc::bench::exit_on_error(context.begin(), "recording");
        vk.vkCmdResetQueryPool(context.commands(), queries, 0, 2);
        vk.vkCmdWriteTimestamp(context.commands(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
        pipeline.value()->record_dispatch(&kernel.iterations, kernel.groups);
        vk.vkCmdWriteTimestamp(context.commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
        if (run == repetitions) {
            context.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
            const VkBufferCopy region{0, 0, kCompared * sizeof(float)};
            vk.vkCmdCopyBuffer(context.commands(), buffers[kernel.spirv == nmc_spirv_peak_layers ? 1 : 0],
                               readback.buffer, 1, &region);
            context.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                            VK_ACCESS_HOST_READ_BIT);
        }
        nmc::bench::exit_on_error(context.submit_and_wait(), "running");
        uint64_t ticks[2] = {0, 0};
        check_vk(vk.vkGetQueryPoolResults(context.device(), queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "vkGetQueryPoolResults");
        if (run > 0) times.push_back(static_cast<double>(ticks[1] - ticks[0]) * context.timestamp_period_ns() * 1e-6);
    }
    const auto* values = static_cast<const float*>(readback.mapped);
    first_values.assign(values, values + kCompared);
    std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

uint32_t scaled(double count, double scale) {
    return static_cast<uint32_t>(std::max(1.0, count * scale));
}

void run_device(const nmc::VulkanDeviceInfo& device, double scale, int repetitions) {
    nmc::Result<std::unique_ptr<Context>> opened = Context::open(device.index);
    nmc::bench::exit_on_error(opened.status(), "opening the device");
    Context& context = *opened.value();
    if (context.timestamp_period_ns() <= 0) {
        std::printf("| vulkan:%d %s | (its compute queue has no timestamps) | | | |\n", device.index,
                    device.name.c_str());
        return;
    }
    const nmc::vulkan_detail::DeviceFunctions& vk = context.vk();
    auto query_info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 2;
    VkQueryPool queries = VK_NULL_HANDLE;
    check_vk(vk.vkCreateQueryPool(context.device(), &query_info, nullptr, &queries), "vkCreateQueryPool");

    std::vector<Kernel> kernels;
    {
        const uint32_t groups = scaled(2048, scale);
        const uint32_t iterations = 256;
        kernels.push_back({"float32 fma", nmc_spirv_peak_fma, sizeof(nmc_spirv_peak_fma), {}, groups, iterations,
                           double(groups) * 256 * iterations * 4 * 8 * 2, 0});
    }
    if (device.cooperative_matrix) {
        const uint32_t groups = scaled(1056, scale);  // 4 subgroups each
        const uint32_t iterations = 256;
        kernels.push_back({"tensor cores: 16x16x16 binary16 products, float32 sums", nmc_spirv_peak_mma,
                           sizeof(nmc_spirv_peak_mma), {}, groups, iterations,
                           double(groups) * 4 * iterations * 8 * 2 * 16 * 16 * 16, 0});
        const uint32_t iterations_layers = 16;
        for (uint32_t activation : {0u, 1u}) {
            for (uint32_t staging : {1u, 0u}) {
                const uint32_t rows = staging == 0 ? 128u : 64u;  // per workgroup
                const uint32_t layer_groups = scaled(256 * 1024 / rows, scale);
                const double layer_rows = double(layer_groups) * rows * iterations_layers;
                kernels.push_back({std::string("64->64 layers, vectors ") +
                                       (staging == 0 ? "in registers" : "through shared memory") +
                                       (activation == 0 ? ", no activation" : ", spec 8.6 activation"),
                                   nmc_spirv_peak_layers, sizeof(nmc_spirv_peak_layers),
                                   {{0, staging}, {1, activation}, {2, rows}}, layer_groups, iterations_layers,
                                   layer_rows * 64 * 64 * 2, layer_rows, activation});
            }
        }
    }

    Buffer output;
    Buffer operands;
    Buffer model;  // peak_layers.comp's nmc_decode.glsl binding, never read
    Buffer readback;
    nmc::bench::exit_on_error(context.create_buffer(kCompared * sizeof(float), VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                                    VK_MEMORY_PROPERTY_HOST_CACHED_BIT, readback),
                              "creating the read-back buffer");
    nmc::bench::exit_on_error(context.create_buffer(uint64_t{64} << 20, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, output),
                              "creating the output buffer");
    const std::vector<uint16_t> halves(512, 0x2C00);  // 2^-4
    nmc::bench::exit_on_error(context.create_device_buffer(halves.data(), halves.size() * 2,
                                                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, operands),
                              "uploading the operands");
    nmc::bench::exit_on_error(context.create_device_buffer(halves.data(), halves.size() * 2,
                                                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, model),
                              "creating the model binding");
    std::vector<std::string> statistics;
    std::vector<std::string> agreement;
    std::map<uint32_t, std::vector<float>> references;  // by activation: the first layer kernel's values
    for (const Kernel& kernel : kernels) {
        const std::vector<VkBuffer> buffers =
            kernel.spirv == nmc_spirv_peak_layers ? std::vector<VkBuffer>{model.buffer, output.buffer}
            : kernel.spirv == nmc_spirv_peak_mma  ? std::vector<VkBuffer>{output.buffer, operands.buffer}
                                                  : std::vector<VkBuffer>{output.buffer};
        std::string compiled;
        std::vector<float> values;
        const double ms = time_kernel(context, queries, kernel, buffers, readback, repetitions, compiled, values);
        const double tflops = kernel.flops / (ms * 1e-3) * 1e-12;
        // The default network (48 -> 64 -> 64 -> 64 -> C <= 16) is 48 tile products a 16 texels: three 64 -> 64 layers.
        const std::string texels =
            kernel.layer_rows > 0 ? std::to_string(kernel.layer_rows / 3 / (ms * 1e-3) * 1e-9).substr(0, 6) : "";
        std::printf("| vulkan:%d %s | %s | %.3f | %.2f | %s |\n", device.index, device.name.c_str(),
                    kernel.name.c_str(), ms, tflops, texels.c_str());
        std::fflush(stdout);
        if (!compiled.empty()) statistics.push_back(kernel.name + ": " + compiled);
        // With the activation, both stagings compute the same values (the same products in the same order, every
        // rounding the spec's): the shared-memory kernel's are the reference.
        if (kernel.layer_rows > 0 && kernel.activation != 0) {
            auto reference = references.find(kernel.activation);
            if (reference == references.end()) {
                references.emplace(kernel.activation, values);
            } else {
                size_t differing = 0;
                for (size_t i = 0; i < kCompared; ++i)
                    differing += std::memcmp(&values[i], &reference->second[i], sizeof(float)) != 0 ? 1 : 0;
                agreement.push_back(kernel.name + ": " + std::to_string(differing) + " of " +
                                    std::to_string(kCompared) + " values differ from the shared-memory kernel's" +
                                    (differing > 0 ? " (e.g. " + std::to_string(values[0]) + " vs " +
                                                         std::to_string(reference->second[0]) + ")"
                                                   : ""));
            }
        }
    }
    for (const std::string& s : agreement) std::printf("# %s\n", s.c_str());
    for (const std::string& s : statistics) std::printf("#   %s\n", s.c_str());
    vk.vkDestroyQueryPool(context.device(), queries, nullptr);
    for (Buffer* b : {&output, &operands, &model, &readback}) context.destroy(*b);
}

}  // namespace

int main(int argc, char** argv) {
    const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
    const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
    const int only_device = argc > 3 ? std::atoi(argv[3]) : -1;
    if (!(scale > 0 && scale <= 100) || repetitions < 1) {
        std::fprintf(stderr, "usage: %s [work scale in (0, 100]] [repetitions >= 1] [device index]\n", argv[0]);
        return 2;
    }
    nmc::Result<std::vector<nmc::VulkanDeviceInfo>> devices = nmc::list_vulkan_devices();
    nmc::bench::exit_on_error(devices.status(), "listing the Vulkan devices");
    std::printf("# Vulkan arithmetic ceilings (work scale %g, median of %d)\n", scale, repetitions);
    std::printf("| device | kernel | ms | TFLOP/s | Gtexel/s of the default network at this rate |\n"
                "|---|---|---:|---:|---:|\n");
    for (const nmc::VulkanDeviceInfo& device : *devices) {
        if (only_device >= 0 && device.index != only_device) continue;
        run_device(device, scale, repetitions);
    }
    return 0;
}
