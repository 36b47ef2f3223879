// The CUDA decoder: docs/format-spec.md section 8 on an NVIDIA GPU in the cooperative-vector style (each thread
// owns one texel's vector; a warp runs every layer as tensor-core MMAs). CUDA-free header: device pointers are
// plain pointers, and callers never include cuda_runtime.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "decoder/common/decode_request.h"
#include "format/pack.h"

namespace nmc {

namespace cuda_detail {
struct DeviceModel;
}

// Which tensor-core instructions run the layers. Both compute the spec's maths; E4M3 and Int8 values are exact in
// fp16, so they differ only in how the tensor cores sum each layer's products (spec 8.6 leaves the order free).
enum class CudaMatmulPath {
    automatic,  // fp8 where it is the faster path (CudaDeviceInfo::fp8_path_is_faster), else fp16
    fp8,        // mma.sync m16n8k32 E4M3 for E4M3 layers (an Int8 layer runs on the fp16 MMA): sm_89+
    fp16,       // mma.sync m16n8k16 fp16 with fp32 accumulation for every layer: sm_75+
};
const char* to_string(CudaMatmulPath path);

enum class CudaDecodeVariant;  // timing variants for the benchmark and tests: decoder/cuda/cuda_decode_variants.h

struct CudaDecoderOptions {
    int device = 0;  // CUDA device index
    CudaMatmulPath path = CudaMatmulPath::automatic;
    // Hopper (compute capability 9.0, with sm_90a code in the build) and networks of widths <= 64: whole-mip decodes,
    // error sums and random queries run on the warpgroup kernels (wgmma, 64 texels a warpgroup;
    // warpgroup_kernels.cuh) instead of the warp kernels (mma.sync); whole mips of binary16 packs of the default
    // network's shape on the tiled kernel (tiled_kernel.cuh: the bilinear sums on the tensor cores too).
    // Same values: only the order of each layer's sums (spec 8.6) and of binary16 bilinear sums (8.3) differs.
    // Batches over several packs keep the warp kernel. Ignored elsewhere.
    bool warpgroup = true;
};

// One query of a batch over several packs: pack `pack` (index into the decoder list) at (u, v, mip).
struct BatchTexelQuery {
    int pack = 0;
    float u = 0.0f;
    float v = 0.0f;
    int mip = 0;
};

// Squared-error sums of decoded pack-channel values against reference planes, in [0, 1] units (each channel
// normalised by its range first, as validate's measure_quality does): sse[mip][channel], texels[mip].
struct ChannelErrorSums {
    std::vector<std::vector<double>> sse;
    std::vector<double> texels;
    std::vector<std::vector<double>> max_abs_error;  // [mip][channel], the largest |decoded - reference|
};

// A pack loaded onto one GPU: latents and fragment-ordered weights live in device memory until destruction.
// Movable, not copyable. Calls are synchronous (they return when the results are written), and a decoder may be
// used from one host thread at a time. Results equal the CPU decoder's except for the order of each layer's
// float32 sums (spec 8.6), which both paths leave to the hardware.
class CudaDecoder {
public:
    // Checks the pack (format's check_pack: invalid_argument naming the field), then uploads it.
    // backend_unavailable when the device does not exist, this build has no code for it, or the fp8 path is asked
    // for on a GPU older than compute capability 8.9.
    static Result<CudaDecoder> create(const Pack& pack, const CudaDecoderOptions& options = {});

    CudaDecoder(CudaDecoder&&) noexcept;
    CudaDecoder& operator=(CudaDecoder&&) noexcept;
    ~CudaDecoder();

    // spec 8.1-8.7 for every texel of mip `mip`: out[c] is the w_m * h_m plane of pack channel c (host memory).
    Status decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const;

    // spec 8.1-8.9: texture `texture` at mip `mip` as source-channel values, like CpuDecoder::decode_texture
    // (pack channels decoded on the GPU, spec 8.8-8.9 by the reference code on the host).
    Result<Image> decode_texture(int texture, int mip) const;

    // spec 8.1-8.7 per query, out[i * C + c]; the same validity rules and errors as CpuDecoder::decode_queries.
    Status decode_queries(const std::vector<TexelQuery>& queries, std::vector<float>& out) const;

    // Every mip into device memory: `device_out` (device pointer, at least device_output_floats() floats) holds mip
    // m's planes from device_output_offset(m), channel c's plane at + c * w_m * h_m. Synchronous.
    Status decode_all_mips_to_device(float* device_out) const;
    size_t device_output_floats() const;
    size_t device_output_offset(int mip) const;

    // Random queries already in device memory (`device_queries`: `count` TexelQuery structs, all valid: the caller
    // checked them) into `device_out` (count * C floats, query i's channels at i * C). Synchronous.
    Status decode_queries_on_device(const TexelQuery* device_queries, size_t count, float* device_out) const;

    // Uploads reference planes once (planes[m][c]: mip m of pack channel c in [0, 1] units, w_m * h_m values) for
    // measure_errors(). invalid_argument when the shape differs from the pack's.
    Status upload_reference(const std::vector<std::vector<std::vector<float>>>& planes);
    // Decodes every mip on the GPU and sums the squared errors against the uploaded reference there, without
    // copying decoded values to the host. invalid_argument when no reference was uploaded.
    Result<ChannelErrorSums> measure_errors() const;

    // spec 8.1-8.7 for queries over several packs in one launch (each query names its decoder); a warp whose
    // threads use different packs runs once per pack present. All decoders must be on the same device and path.
    // out[i * 16 + c] holds channel c of query i (c < that pack's channel count; the rest are left 0).
    static Status decode_batch_queries(const std::vector<const CudaDecoder*>& decoders,
                                       const std::vector<BatchTexelQuery>& queries, std::vector<float>& out);

    int channel_count() const;
    int device() const;
    CudaMatmulPath path() const;         // the path that runs (never automatic)
    bool runs_warpgroup_kernel() const;  // whether decodes run on the warpgroup kernels (see the options)

private:
    friend Status decode_all_mips_to_device(const CudaDecoder& decoder, float* device_out, CudaDecodeVariant variant);
    explicit CudaDecoder(std::unique_ptr<cuda_detail::DeviceModel> model);
    std::unique_ptr<cuda_detail::DeviceModel> model_;
};

// Rounds n floats to FP8 E4M3 on device `device` (spec 2.1: nearest, ties to even, saturating at 448) with the
// same device function the CUDA decoder uses between layers. Host pointers in and out.
Status cuda_round_to_fp8_e4m3(int device, const float* in, float* out, size_t n);

}  // namespace nmc
