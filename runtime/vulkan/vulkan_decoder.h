// The Vulkan decoder: docs/format-spec.md section 8 in compute shaders on any Vulkan 1.1 device (GPUs, and lavapipe
// on the CPU), behind the same interface as the CPU and CUDA decoders. The pack is uploaded once as the GPU model
// buffer (gpu_model.h); whole mips decode on the device and come back as channel planes. No Vulkan header here:
// callers need none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "format/pack.h"

namespace nmc {

namespace vulkan_detail {
struct Session;
}

// One Vulkan device as the loader lists it.
struct VulkanDeviceInfo {
    int index = 0;            // vulkan:N
    std::string name;         // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
    std::string type;         // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
    std::string api_version;  // "1.3.230"
    // Whether the device runs VulkanNetworkPath::cooperative_matrix, or why not ("no VK_NV_cooperative_matrix").
    bool cooperative_matrix = false;
    std::string cooperative_matrix_detail;
};

// The devices the Vulkan loader lists, in its order. backend_unavailable without a loader or a Vulkan 1.1 driver.
Result<std::vector<VulkanDeviceInfo>> list_vulkan_devices();

// How the network's layers run (docs/runtime.md, "Which path runs where"). Both compute the spec's maths; they differ
// only in the order of each layer's float32 sum, which spec 8.6 leaves free.
enum class VulkanNetworkPath {
    automatic,           // cooperative_matrix where the device has it, else scalar
    scalar,              // one invocation a texel, sums in input order: the CPU portable kernel's values, bit for bit
    cooperative_matrix,  // the products on tensor cores (VK_NV_cooperative_matrix, 16x16x16 fp16 -> fp32, subgroups
                         // of 32: NVIDIA Turing and newer)
};
const char* to_string(VulkanNetworkPath path);

struct VulkanDecoderOptions {
    // Index into list_vulkan_devices(); -1: the first GPU (discrete, then integrated, then virtual), else the first
    // device of any type.
    int device = -1;
    VulkanNetworkPath path = VulkanNetworkPath::automatic;
};

// Immutable after creation; calls from several threads are serialised on the device's queue.
class VulkanDecoder {
public:
    // Checks the pack (format's check_pack), opens the device and uploads the model. invalid_argument for a pack
    // that breaks a rule; backend_unavailable without Vulkan, without a device of that index ("--device vulkan:3:
    // no such Vulkan device (1 found)"), without Vulkan 1.1, or without the path asked for (saying why); io_error for
    // a device that fails to allocate or run.
    static Result<VulkanDecoder> create(const Pack& pack, const VulkanDecoderOptions& options = {});

    // spec 8.1-8.7: every texel of mip `mip` at its centre; out[c] is pack channel c's w_m * h_m plane. On the scalar
    // path the values equal the CPU decoder's portable kernel bit for bit.
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const;

    // spec 8.1-8.9: texture `texture` at mip `mip` as source-channel values (8.8-8.9 on the host, with the reference
    // decoder's code).
    Result<Image> decode_texture(int texture, int mip) const;

    // GPU time in milliseconds of decoding every mip of the pack into device memory, without transfers (device
    // timestamps; the median of `repetitions` runs after one warm-up run). For benchmarks.
    Result<double> time_all_mips_ms(int repetitions) const;

    const VulkanDeviceInfo& device() const;
    VulkanNetworkPath path() const;  // the path that runs: never automatic
    int channel_count() const;

private:
    explicit VulkanDecoder(std::shared_ptr<vulkan_detail::Session> session) : session_(std::move(session)) {}
    std::shared_ptr<vulkan_detail::Session> session_;
};

}  // namespace nmc
