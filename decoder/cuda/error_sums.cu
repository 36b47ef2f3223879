// CudaDecoder's squared-error sums against reference planes kept on the GPU (the CUDA path of quality measurement).
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "cuda/device_array.h"
#include "decoder/cuda/device_model.h"

namespace nmc {

using cuda_detail::DeviceModel;

Status CudaDecoder::upload_reference(const std::vector<std::vector<std::vector<float>>>& planes) {
    DeviceModel& m = *model_;
    if (static_cast<int>(planes.size()) != m.desc.mip_count)
        return {StatusCode::invalid_argument, "upload_reference: expected " + std::to_string(m.desc.mip_count) +
                                                  " mips, got " + std::to_string(planes.size())};
    std::vector<float> flat(m.output_floats);
    for (int mip = 0; mip < m.desc.mip_count; ++mip) {
        const auto& mip_planes = planes[static_cast<size_t>(mip)];
        if (static_cast<int>(mip_planes.size()) != m.desc.channel_count)
            return {StatusCode::invalid_argument, "upload_reference: mip " + std::to_string(mip) + " has " +
                                                      std::to_string(mip_planes.size()) + " channels, expected " +
                                                      std::to_string(m.desc.channel_count)};
        for (size_t c = 0; c < mip_planes.size(); ++c) {
            if (mip_planes[c].size() != m.mip_texels(mip))
                return {StatusCode::invalid_argument,
                        "upload_reference: mip " + std::to_string(mip) + " has the wrong size"};
            std::copy(mip_planes[c].begin(), mip_planes[c].end(),
                      flat.begin() + static_cast<std::ptrdiff_t>(m.output_offset[static_cast<size_t>(mip)] +
                                                                 c * m.mip_texels(mip)));
        }
    }
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    if (!m.reference_device) {
        void* p = nullptr;
        NMC_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, flat.size() * sizeof(float)));
        m.reference_device = static_cast<float*>(p);
    }
    NMC_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(m.reference_device, flat.data(), flat.size() * sizeof(float), cudaMemcpyHostToDevice));
    return Status::success();
}

Result<ChannelErrorSums> CudaDecoder::measure_errors() const {
    using namespace cuda_detail;
    const DeviceModel& m = *model_;
    if (!m.reference_device) return Status(StatusCode::invalid_argument, "measure_errors: call upload_reference first");
    NMC_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    const size_t slots = static_cast<size_t>(m.desc.mip_count) * kMaxChannels;
    DeviceArray<double> sse;
    DeviceArray<unsigned long long> peak;
    NMC_RETURN_IF_ERROR(device_alloc(slots, sse));
    NMC_RETURN_IF_ERROR(device_alloc(slots, peak));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemset(sse.get(), 0, slots * sizeof(double)));
    NMC_CUDA_RETURN_IF_ERROR(cudaMemset(peak.get(), 0, slots * sizeof(unsigned long long)));
    GridJob job;
    job.mip_first = 0;
    job.mip_end = m.desc.mip_count;
    for (int mip = 0; mip < job.mip_end; ++mip) job.out_offset[mip] = m.output_offset[static_cast<size_t>(mip)];
    job.ref = m.reference_device;
    job.sse = sse.get();
    job.max_error = peak.get();
    NMC_RETURN_IF_ERROR(launch_grid(m, job));
    std::vector<double> host_sse(slots);
    std::vector<unsigned long long> host_peak(slots);
    NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(host_sse.data(), sse.get(), slots * sizeof(double), cudaMemcpyDeviceToHost));
    NMC_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(host_peak.data(), peak.get(), slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    ChannelErrorSums sums;
    for (int mip = 0; mip < m.desc.mip_count; ++mip) {
        std::vector<double> row;
        std::vector<double> peaks;
        for (int c = 0; c < m.desc.channel_count; ++c) {
            const size_t slot = static_cast<size_t>(mip) * kMaxChannels + static_cast<size_t>(c);
            row.push_back(host_sse[slot]);
            double value = 0;
            std::memcpy(&value, &host_peak[slot], sizeof value);
            peaks.push_back(value);
        }
        sums.sse.push_back(row);
        sums.max_abs_error.push_back(peaks);
        sums.texels.push_back(static_cast<double>(m.mip_texels(mip)));
    }
    return sums;
}

}  // namespace nmc
