// Decoder selection by device string; the CUDA decoder and the Vulkan runtime are compiled in only when the build has
// them.
#include "decoder/pack_decoder.h"

#include <optional>

#include "core/device_name.h"

#if NMC_HAS_CUDA_DECODER
#include "cuda/cuda_device.h"
#include "decoder/cuda/cuda_decoder.h"
#endif
#if NMC_HAS_VULKAN_DECODER
#include "runtime/vulkan/vulkan_decoder.h"
#endif

namespace nmc {
namespace {

Result<std::unique_ptr<PackDecoder>> create_cuda_decoder(const Pack& pack, const PackDecoderOptions& options,
                                                         int index) {
#if NMC_HAS_CUDA_DECODER
    if (index >= cuda_device_count())
        return Status(StatusCode::backend_unavailable, "--device " + options.device + ": no such CUDA device (" +
                                                           std::to_string(cuda_device_count()) + " found)");
    CudaDecoderOptions cuda_options;
    cuda_options.device = index;
    auto decoder = CudaDecoder::create(pack, cuda_options);
    if (!decoder.ok()) return decoder.status();
    std::string description =
        "CUDA device " + std::to_string(decoder->device()) + " (" + to_string(decoder->path()) + " path)";
    return std::unique_ptr<PackDecoder>(
        std::make_unique<PackDecoderOf<CudaDecoder>>(std::move(decoder).value(), std::move(description)));
#else
    (void)pack;
    (void)index;
    return Status(StatusCode::backend_unavailable,
                  "--device " + options.device + ": this build has no CUDA decoder (use --device cpu)");
#endif
}

Result<std::unique_ptr<PackDecoder>> create_vulkan_decoder(const Pack& pack, const PackDecoderOptions& options,
                                                           int index) {
#if NMC_HAS_VULKAN_DECODER
    VulkanDecoderOptions vulkan_options;
    vulkan_options.device = index;
    auto decoder = VulkanDecoder::create(pack, vulkan_options);
    if (!decoder.ok()) {
        // The flag names the device; the runtime's messages name it too ("vulkan:3: no such Vulkan device").
        const Status& s = decoder.status();
        if (s.code() != StatusCode::backend_unavailable) return s;
        std::string message = s.message();
        const size_t digits = message.rfind("vulkan:", 0) == 0 ? message.find_first_not_of("0123456789", 7) : 0;
        if (digits != std::string::npos && digits > 7 && message.compare(digits, 2, ": ") == 0)
            message = message.substr(digits + 2);
        return Status(s.code(), "--device " + options.device + ": " + message);
    }
    std::string description = "Vulkan device " + std::to_string(decoder->device().index) + " (" +
                              decoder->device().name + ", " + to_string(decoder->path()) + " path)";
    return std::unique_ptr<PackDecoder>(
        std::make_unique<PackDecoderOf<VulkanDecoder>>(std::move(decoder).value(), std::move(description)));
#else
    (void)pack;
    (void)index;
    return Status(StatusCode::backend_unavailable,
                  "--device " + options.device +
                      ": this build has no Vulkan runtime (build with libvulkan-dev and glslang-tools installed)");
#endif
}

}  // namespace

bool cuda_decoder_built() {
    return NMC_HAS_CUDA_DECODER != 0;
}
bool vulkan_decoder_built() {
    return NMC_HAS_VULKAN_DECODER != 0;
}

Result<std::unique_ptr<PackDecoder>> create_pack_decoder(const Pack& pack, const PackDecoderOptions& options) {
    const std::optional<DeviceName> device = parse_device_name(options.device);
    if (!device)
        return Status(StatusCode::invalid_argument,
                      "--device " + options.device + ": expected cpu, cuda, cuda:N, vulkan or vulkan:N");
    if (device->kind == DeviceKind::cuda)
        return create_cuda_decoder(pack, options, device->index < 0 ? 0 : device->index);
    if (device->kind == DeviceKind::vulkan) return create_vulkan_decoder(pack, options, device->index);
    CpuDecoderOptions cpu_options;
    cpu_options.threads = options.threads;
    auto decoder = CpuDecoder::create(pack, cpu_options);
    if (!decoder.ok()) return decoder.status();
    return std::unique_ptr<PackDecoder>(
        std::make_unique<PackDecoderOf<CpuDecoder>>(cpu_pack_decoder(std::move(decoder).value())));
}

}  // namespace nmc
