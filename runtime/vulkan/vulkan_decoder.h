// The Vulkan decoder: docs/format-spec.md section 8 in compute shaders on any Vulkan 1.1 device (GPUs, and lavapipe
// on the CPU), behind the same interface as the CPU and CUDA decoders. The pack is uploaded once as the GPU model
// buffer (gpu_model.h); whole mips decode on the device and come back as channel planes. No Vulkan header here:
// callers need none.
#pragma once

#include <cstdint>
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
    automatic,           // scalar: the CPU's values bit for bit (cooperative_matrix is faster where it runs)
    scalar,              // one invocation a texel, sums in input order: the CPU portable kernel's values, bit for bit
    cooperative_matrix,  // the products on tensor cores (VK_NV_cooperative_matrix, 16x16x16 fp16 -> fp32, subgroups
                         // of 32: NVIDIA Turing and newer), for packs whose layers are at most 128 wide, with the
                         // network's shape as specialization constants (shape_constants)
};
const char* to_string(VulkanNetworkPath path);

struct VulkanDecoderOptions {
    // Index into list_vulkan_devices(); -1: the first GPU (discrete, then integrated, then virtual), else the first
    // device of any type.
    int device = -1;
    VulkanNetworkPath path = VulkanNetworkPath::automatic;
    // Whether the pipelines get nmc_decode.glsl's shape constants (GpuModel::shape). false runs the include as an
    // engine that leaves them unset does: the shape read from the model buffer, the same values, much slower.
    bool shape_constants = true;
};

// A texture decoded into a VkImage (inference on load) and read back from it.
struct TextureImage {
    std::string format;       // the image's VkFormat without its VK_FORMAT_ prefix: "R8G8B8A8_SRGB", "R16_UNORM", ...
    int samples = 0;          // per texel: 1, 2 or 4 (an RGB texture becomes RGBA with alpha 1)
    int bytes_per_texel = 0;  // samples times 1 (uint8), 2 (uint16, float16) or 4 (float32)
    std::vector<std::vector<uint8_t>> mips;  // mip m: w_m * h_m texels, row-major, tightly packed, little-endian
};

// Immutable after creation; calls from several threads are serialised on the device's queue.
class VulkanDecoder {
public:
    // Checks the pack (format's check_pack), opens the device and uploads the model. invalid_argument for a pack
    // that breaks a rule; backend_unavailable without Vulkan, without a device of that index ("vulkan:3: no such
    // Vulkan device (1 found)"), without Vulkan 1.1, or without the path asked for (saying why); io_error for
    // a device that fails to allocate or run.
    static Result<VulkanDecoder> create(const Pack& pack, const VulkanDecoderOptions& options = {});

    // spec 8.1-8.7: every texel of mip `mip` at its centre; out[c] is pack channel c's w_m * h_m plane. On the scalar
    // path the values equal the CPU decoder's portable kernel bit for bit.
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const;

    // spec 8.1-8.9: texture `texture` at mip `mip` as source-channel values (8.8-8.9 on the host, with the reference
    // decoder's code).
    Result<Image> decode_texture(int texture, int mip) const;

    // Inference on load: every mip of texture `texture` (index into pack.textures) decoded on the device
    // (spec 8.1-8.10, the scalar path) into one VkImage in the texture's own layout: R/RG/RGBA (RGB gains alpha 1) of
    // 8-bit UNORM (SRGB where the texture is sRGB-encoded colour), 16-bit UNORM, 16-bit or 32-bit float, as its file
    // holds it; then the image is copied back. The codes equal quantised CPU texture values (spec 8.10), except that
    // normal maps may differ by one code where a value lies within a few float32 steps of a rounding point (GPU square
    // roots and divisions are not correctly rounded). backend_unavailable where the device cannot copy into that
    // format.
    Result<TextureImage> decode_texture_image(int texture) const;

    // GPU time in milliseconds of decoding every mip of the pack into device memory, without transfers (device
    // timestamps; the median of `repetitions` runs after one warm-up run). For benchmarks.
    Result<double> time_all_mips_ms(int repetitions) const;

    // The driver's statistics of the compiled whole-mip decoding pipeline (registers, local memory, instructions; their
    // names are the driver's), or "" where the device does not report them (VK_KHR_pipeline_executable_properties).
    // For benchmarks and engine developers sizing the include.
    std::string pipeline_statistics() const;

    const VulkanDeviceInfo& device() const;
    VulkanNetworkPath path() const;  // the path that runs: never automatic
    int channel_count() const;

private:
    explicit VulkanDecoder(std::shared_ptr<vulkan_detail::Session> session) : session_(std::move(session)) {}
    std::shared_ptr<vulkan_detail::Session> session_;
};

}  // namespace nmc
