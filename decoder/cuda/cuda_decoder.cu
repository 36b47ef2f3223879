// CudaDecoder's decoding calls: whole mips, textures (spec 8.8-8.9 on the host by the reference code), random
// queries and batches over several packs. Creation is in device_model.cu, the kernels and launches in launch.cu.
#include "decoder/cuda/cuda_decoder.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include "cuda/device_array.h"
#include "decoder/common/reference_math.h"
#include "decoder/cuda/device_model.h"
#include "format/limits.h"

namespace nmc {

using cuda_detail::DeviceModel;

const char* to_string(CudaMatmulPath path) {
    switch (path) {
        case CudaMatmulPath::automatic:
            return "automatic";
        case CudaMatmulPath::fp8:
            return "fp8";
        case CudaMatmulPath::fp16:
            return "fp16";
    }
    return "unknown";
}

CudaDecoder::CudaDecoder(std::unique_ptr<DeviceModel> model) : model_(std::move(model)) {}
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;
CudaDecoder::~CudaDecoder() = default;

int CudaDecoder::channel_count() const {
    return model_->desc.channel_count;
}
int CudaDecoder::device() const {
    return model_->device;
}
CudaMatmulPath CudaDecoder::path() const {
    return model_->path;
}
bool CudaDecoder::runs_warpgroup_kernel() const {
    return model_->warpgroup_ready;
}
size_t CudaDecoder::device_output_floats() const {
    return model_->output_floats;
}
size_t CudaDecoder::device_output_offset(int mip) const {
    return model_->output_offset.at(static_cast<size_t>(mip));
}

Status CudaDecoder::decode_all_mips_to_device(float* device_out) const {
    return nmc::decode_all_mips_to_device(*this, device_out, CudaDecodeVariant::full);
}

Status decode_all_mips_to_device(const CudaDecoder& decoder, float* device_out, CudaDecodeVariant variant) {
    cuda_detail::GridJob job;
    job.mip_first = 0;
    job.mip_end = decoder.model_->desc.mip_count;
    for (int m = 0; m < job.mip_end; ++m) job.out_offset[m] = decoder.model_->output_offset[static_cast<size_t>(m)];
    job.out = device_out;
    return cuda_detail::launch_grid(*decoder.model_, job, variant);
}

Status CudaDecoder::decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const {
    using namespace cuda_detail;
    const DeviceModel& m = *model_;
    NMC_RETURN_IF_ERROR(check_index("decode_mip_channels", "mip", mip, m.desc.mip_count));
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    const size_t texels = m.mip_texels(mip);
    const size_t channels = static_cast<size_t>(m.desc.channel_count);
    DeviceArray<float> buffer;
    NMC_RETURN_IF_ERROR(device_alloc(texels * channels, buffer));
    GridJob job;
    job.mip_first = mip;
    job.mip_end = mip + 1;
    job.out_offset[mip] = 0;
    job.out = buffer.get();
    NMC_RETURN_IF_ERROR(launch_grid(m, job));
    out.assign(channels, std::vector<float>(texels));
    for (size_t c = 0; c < channels; ++c)
        NMC_CUDA_RETURN_IF_ERROR(
            cudaMemcpy(out[c].data(), buffer.get() + c * texels, texels * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::success();
}

Result<Image> CudaDecoder::decode_texture(int texture, int mip) const {
    const DeviceModel& m = *model_;
    NMC_RETURN_IF_ERROR(check_index("decode_texture", "texture", texture, static_cast<int>(m.textures.size())));
    std::vector<std::vector<float>> planes;
    NMC_RETURN_IF_ERROR(decode_mip_channels(mip, planes));
    const TextureLayout& layout = m.textures[static_cast<size_t>(texture)];
    const int channels = static_cast<int>(layout.channels.size());
    Image image(m.mip_width(mip), m.mip_height(mip), channels, layout.sample_type);
    // spec 8.8-8.9 with the reference code, per texel, from the GPU's pack-channel values.
    float values[kMaxChannels];
    for (size_t i = 0; i < image.texel_count(); ++i) {
        for (size_t c = 0; c < planes.size(); ++c) values[c] = planes[c][i];
        source_channel_values(layout, values, &image.pixels[i * static_cast<size_t>(channels)]);
    }
    return image;
}

Status CudaDecoder::decode_queries(const std::vector<TexelQuery>& queries, std::vector<float>& out) const {
    using namespace cuda_detail;
    const DeviceModel& m = *model_;
    NMC_RETURN_IF_ERROR(check_texel_queries(queries, m.desc.mip_count));
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    const size_t channels = static_cast<size_t>(m.desc.channel_count);
    DeviceArray<TexelQuery> d_queries;
    DeviceArray<float> d_out;
    NMC_RETURN_IF_ERROR(device_alloc(queries.size(), d_queries));
    NMC_RETURN_IF_ERROR(device_alloc(queries.size() * channels, d_out));
    if (!queries.empty())
        NMC_CUDA_RETURN_IF_ERROR(
            cudaMemcpy(d_queries.get(), queries.data(), queries.size() * sizeof(TexelQuery), cudaMemcpyHostToDevice));
    NMC_RETURN_IF_ERROR(decode_queries_on_device(d_queries.get(), queries.size(), d_out.get()));
    out.resize(queries.size() * channels);
    if (!queries.empty())
        NMC_CUDA_RETURN_IF_ERROR(
            cudaMemcpy(out.data(), d_out.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::success();
}

Status CudaDecoder::decode_queries_on_device(const TexelQuery* device_queries, size_t count, float* device_out) const {
    cuda_detail::QueryJob job;
    job.queries = device_queries;
    job.count = count;
    job.out = device_out;
    job.out_stride = model_->desc.channel_count;
    return cuda_detail::launch_queries(*model_, job);
}

Status CudaDecoder::decode_batch_queries(const std::vector<const CudaDecoder*>& decoders,
                                         const std::vector<BatchTexelQuery>& queries, std::vector<float>& out) {
    using namespace cuda_detail;
    if (decoders.empty()) return {StatusCode::invalid_argument, "decode_batch_queries: no decoders"};
    const DeviceModel& first = *decoders[0]->model_;
    int max_k = kSmallK;
    std::vector<ModelDesc> descs;
    for (size_t p = 0; p < decoders.size(); ++p) {
        const DeviceModel& m = *decoders[p]->model_;
        if (m.device != first.device || m.path != first.path)
            return {StatusCode::invalid_argument, "decode_batch_queries: decoder " + std::to_string(p) +
                                                      " is on another device or path than decoder 0"};
        max_k = std::max(max_k, m.max_k);
        descs.push_back(m.desc);
    }
    for (size_t i = 0; i < queries.size(); ++i) {
        const BatchTexelQuery& q = queries[i];
        if (q.pack < 0 || q.pack >= static_cast<int>(decoders.size()))
            return {StatusCode::invalid_argument, "decode_batch_queries: query " + std::to_string(i) + ": pack " +
                                                      std::to_string(q.pack) + " outside 0.." +
                                                      std::to_string(decoders.size() - 1)};
        Status s = check_texel_queries({TexelQuery{q.u, q.v, q.mip}}, descs[static_cast<size_t>(q.pack)].mip_count);
        if (!s.ok()) return Status(s.code(), "query " + std::to_string(i) + ": " + s.message());
    }
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(first.device));
    out.assign(queries.size() * kMaxChannels, 0.0f);
    if (queries.empty()) return Status::success();
    DeviceArray<ModelDesc> d_models;
    DeviceArray<BatchTexelQuery> d_queries;
    DeviceArray<float> d_out;
    NMC_RETURN_IF_ERROR(device_alloc(descs.size(), d_models));
    NMC_RETURN_IF_ERROR(device_alloc(queries.size(), d_queries));
    NMC_RETURN_IF_ERROR(device_alloc(out.size(), d_out));
    NMC_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(d_models.get(), descs.data(), descs.size() * sizeof(ModelDesc), cudaMemcpyHostToDevice));
    NMC_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(d_queries.get(), queries.data(), queries.size() * sizeof(BatchTexelQuery), cudaMemcpyHostToDevice));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemset(d_out.get(), 0, out.size() * sizeof(float)));
    QueryJob job;
    job.batch = d_queries.get();
    job.count = queries.size();
    job.out = d_out.get();
    job.out_stride = kMaxChannels;
    DeviceModel sizing;  // shared-memory and grid sizing for the widest model; owns nothing
    sizing.device = first.device;
    sizing.max_k = max_k;
    sizing.multiprocessors = first.multiprocessors;
    NMC_RETURN_IF_ERROR(launch_batch_queries(sizing, d_models.get(), job));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(out.data(), d_out.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::success();
}

}  // namespace nmc
