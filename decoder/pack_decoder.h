// One interface over the CPU, CUDA and Vulkan decoders, chosen by a device string (core/device_name.h), for the
// commands and libraries that decode whole textures (nmc decompress, nmc validate, quality measurement).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "decoder/cpu/cpu_decoder.h"
#include "format/pack.h"

namespace nmc {

// Whole-texture decoding as docs/format-spec.md section 8 defines it, whichever decoder runs it.
class PackDecoder {
public:
    virtual ~PackDecoder() = default;
    // spec 8.1-8.7: every texel of mip `mip`; out[c] is pack channel c's w_m * h_m plane.
    virtual Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const = 0;
    // spec 8.1-8.9: texture `texture` at mip `mip` as source-channel values.
    virtual Result<Image> decode_texture(int texture, int mip) const = 0;
    // decode_texture() of rows [first_row, first_row + row_count) of the mip: a large texture a band at a time. Only
    // the CPU decoder decodes just those rows (decodes_rows()); the GPU decoders decode the whole mip for each call,
    // so callers give them one band of every row.
    virtual Result<Image> decode_texture_rows(int texture, int mip, int first_row, int row_count) const = 0;
    virtual bool decodes_rows() const = 0;
    // Where it runs, for reports: "CPU (avx512bf16 kernel)", "CUDA device 0 (fp8 path)".
    virtual std::string description() const = 0;
};

// A decoder (CpuDecoder, CudaDecoder, VulkanDecoder: cheap shared handles, so this keeps a copy) behind the
// interface, with the description of where it runs.
template <typename Decoder>
class PackDecoderOf final : public PackDecoder {
public:
    PackDecoderOf(Decoder decoder, std::string description)
        : decoder_(std::move(decoder)), description_(std::move(description)) {}
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const override {
        return decoder_.decode_mip_channels(mip, out);
    }
    Result<Image> decode_texture(int texture, int mip) const override { return decoder_.decode_texture(texture, mip); }
    Result<Image> decode_texture_rows(int texture, int mip, int first_row, int row_count) const override {
        if constexpr (kDecodesRows) {
            return decoder_.decode_texture_rows(texture, mip, first_row, row_count);
        } else {
            Result<Image> whole = decoder_.decode_texture(texture, mip);
            if (!whole.ok() || (first_row == 0 && row_count == whole->height)) return whole;
            if (first_row < 0 || row_count < 1 || first_row > whole->height - row_count)
                return Status(StatusCode::invalid_argument, "decode_texture_rows: rows outside the mip");
            Image band(whole->width, row_count, whole->channels, whole->sample_type);
            const size_t row_samples = static_cast<size_t>(whole->width) * static_cast<size_t>(whole->channels);
            std::copy_n(whole->pixels.begin() + static_cast<long>(static_cast<size_t>(first_row) * row_samples),
                        band.pixels.size(), band.pixels.begin());
            return band;
        }
    }
    bool decodes_rows() const override { return kDecodesRows; }
    std::string description() const override { return description_; }

private:
    template <typename D, typename = void>
    struct HasRowDecoding : std::false_type {};
    template <typename D>
    struct HasRowDecoding<D, std::void_t<decltype(std::declval<const D&>().decode_texture_rows(0, 0, 0, 1))>>
        : std::true_type {};
    static constexpr bool kDecodesRows = HasRowDecoding<Decoder>::value;

    Decoder decoder_;
    std::string description_;
};

// The CPU decoder behind the interface: "CPU (avx512bf16 kernel)".
inline PackDecoderOf<CpuDecoder> cpu_pack_decoder(CpuDecoder decoder) {
    std::string description = std::string("CPU (") + decoder.isa_name() + " kernel)";
    return PackDecoderOf<CpuDecoder>(std::move(decoder), std::move(description));
}

struct PackDecoderOptions {
    std::string device = "cpu";  // "cpu", "cuda" (device 0), "cuda:N", "vulkan" (the first GPU) or "vulkan:N"
    int threads = 0;             // CPU decoder threads (0: all cores)
};

// Whether this build has the CUDA decoder; the Vulkan runtime.
bool cuda_decoder_built();
bool vulkan_decoder_built();

// Creates the decoder `options.device` names. invalid_argument for a device string that is none of the five
// forms; backend_unavailable when the build has no CUDA decoder or Vulkan runtime ("--device cuda: this build has no
// CUDA decoder"), or the machine lacks the device ("--device cuda:3: no such CUDA device (1 found)", "--device
// vulkan: no Vulkan loader (libvulkan.so.1) on this machine ..."); the decoders' own errors for a pack they cannot
// decode.
Result<std::unique_ptr<PackDecoder>> create_pack_decoder(const Pack& pack, const PackDecoderOptions& options);

}  // namespace nmc
