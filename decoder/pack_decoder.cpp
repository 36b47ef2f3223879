// Decoder selection by device string; the CUDA decoder is compiled in only when the build has it.
#include "decoder/pack_decoder.h"

#include <optional>

#include "core/device_name.h"

#if NMC_HAS_CUDA_DECODER
#include "decoder/cuda/cuda_decoder.h"
#include "decoder/cuda/cuda_device.h"
#endif

namespace nmc {
namespace {

#if NMC_HAS_CUDA_DECODER
class CudaPackDecoder final : public PackDecoder {
public:
    explicit CudaPackDecoder(CudaDecoder decoder) : decoder_(std::move(decoder)) {}
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const override {
        return decoder_.decode_mip_channels(mip, out);
    }
    Result<Image> decode_texture(int texture, int mip) const override { return decoder_.decode_texture(texture, mip); }
    std::string description() const override {
        return "CUDA device " + std::to_string(decoder_.device()) + " (" + to_string(decoder_.path()) + " path)";
    }

private:
    CudaDecoder decoder_;
};
#endif

}  // namespace

bool cuda_decoder_built() { return NMC_HAS_CUDA_DECODER != 0; }

Result<std::unique_ptr<PackDecoder>> create_pack_decoder(const Pack& pack, const PackDecoderOptions& options) {
    const std::optional<int> parsed = cuda_index_of_device(options.device);
    if (!parsed)
        return Status(StatusCode::invalid_argument, "--device " + options.device + ": expected cpu, cuda or cuda:N");
    const int cuda_index = *parsed;
    if (cuda_index < 0) {
        CpuDecoderOptions cpu_options;
        cpu_options.threads = options.threads;
        auto decoder = CpuDecoder::create(pack, cpu_options);
        if (!decoder.ok()) return decoder.status();
        return std::unique_ptr<PackDecoder>(std::make_unique<CpuPackDecoder>(std::move(decoder).value()));
    }
#if NMC_HAS_CUDA_DECODER
    if (cuda_index >= cuda_device_count())
        return Status(StatusCode::backend_unavailable, "--device " + options.device + ": no such CUDA device (" +
                                                           std::to_string(cuda_device_count()) + " found)");
    CudaDecoderOptions cuda_options;
    cuda_options.device = cuda_index;
    auto decoder = CudaDecoder::create(pack, cuda_options);
    if (!decoder.ok()) return decoder.status();
    return std::unique_ptr<PackDecoder>(std::make_unique<CudaPackDecoder>(std::move(decoder).value()));
#else
    return Status(StatusCode::backend_unavailable,
                  "--device " + options.device + ": this build has no CUDA decoder (use --device cpu)");
#endif
}

}  // namespace nmc
