// Decoder selection by device string; the CUDA decoder is compiled in only when the build has it.
#include "decoder/pack_decoder.h"

#if NMC_HAS_CUDA_DECODER
#include "decoder/cuda/cuda_decoder.h"
#include "decoder/cuda/cuda_device.h"
#endif

namespace nmc {
namespace {

// "cpu" -> -1; "cuda" -> 0; "cuda:N" -> N; anything else -> -2.
int cuda_device_index(const std::string& device) {
    if (device == "cpu") return -1;
    if (device == "cuda") return 0;
    if (device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.size() < 9 &&
        device.find_first_not_of("0123456789", 5) == std::string::npos)
        return std::stoi(device.substr(5));
    return -2;
}

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
    const int cuda_index = cuda_device_index(options.device);
    if (cuda_index == -2)
        return Status(StatusCode::invalid_argument, "--device " + options.device + ": expected cpu, cuda or cuda:N");
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
