// The CUDA decoder's internals shared by its source files (.cu only): the device copy of a pack (DeviceModel, built
// by device_model.cu) and the kernel launches of launch.cu that the decoding calls (cuda_decoder.cu) and the error
// sums (error_sums.cu) run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "decoder/cuda/cuda_decode_variants.h"
#include "decoder/cuda/cuda_decoder.h"
#include "decoder/cuda/cuda_decoder_kernels.cuh"
#include "decoder/cuda/tiled_kernel.cuh"

namespace nmc::cuda_detail {

constexpr int kSmallK = 64;   // fast kernels: every padded width <= 64 (the default network)
constexpr int kLargeK = 256;  // any network of spec 9, one m16 tile at a time, weights read through L1

// What the kernels do with each decoded texel.
struct QueryJob {
    const TexelQuery* queries = nullptr;
    const BatchTexelQuery* batch = nullptr;  // batch kernels: per-query pack index
    size_t count = 0;
    float* out = nullptr;
    int out_stride = 0;  // floats per query in out
};

// How the tiled kernel decodes a mip, if it does (tiled_mip_plan): the mip's TiledMip but for out_offset and the
// pattern slots, and the global pattern of each class.
struct TiledMipPlan {
    bool tiled = false;
    TiledMip mip;
    int class_pattern[4] = {};  // class (x & mask_x) | (y & mask_y) << 1
    size_t first_position = 0;  // its classes' fragments in the uploaded table, in 16-byte units
};

// Everything a CudaDecoder owns.
struct DeviceModel {
    int device = 0;
    CudaMatmulPath path = CudaMatmulPath::fp16;
    int max_k = 0;  // kSmallK or kLargeK
    int multiprocessors = 1;
    ModelDesc desc;
    std::vector<void*> allocations;
    std::vector<TextureLayout> textures;
    float* reference_device = nullptr;  // upload_reference's planes in device memory; null before
    // The Hopper warpgroup kernel's model (warpgroup_kernels.cuh): desc with its own B-operand weights and layer
    // kinds, the same latents and parameters; only where warpgroup_ready.
    bool warpgroup_ready = false;
    ModelDesc warpgroup_desc;
    // The tiled kernel's model (tiled_kernel.cuh): warpgroup_desc with the tiled weight layout (warpgroup_weights
    // with bias inputs and, for layer 0, tiled_features); only where tiled_ready (a warpgroup model of the default
    // network's shape, F = 16); tiled_widths: the hidden widths its kernel computes. tiled_mips: each mip's plan
    // (tiled_mip_plan), its patterns in tiled_patterns (device copies, kPatternBytes each).
    bool tiled_ready = false;
    bool tiled_hidden_scaled = false;
    TiledWidths tiled_widths = TiledWidths::w64_64_64;
    ModelDesc tiled_desc;
    std::vector<TiledMipPlan> tiled_mips;
    std::vector<const uint8_t*> tiled_patterns;
    // The tiled kernel's tile counter (TiledJob::tile_tickets), cleared before each launch; the mutex keeps one
    // launch at a time on it (launches are synchronous: launch_error waits for the kernel).
    uint32_t* tiled_tickets = nullptr;
    mutable std::mutex tiled_tickets_mutex;
    size_t output_floats = 0;
    std::vector<size_t> output_offset;

    ~DeviceModel() {
        if (!allocations.empty() || reference_device) cudaSetDevice(device);
        for (void* p : allocations) cudaFree(p);
        if (reference_device) cudaFree(reference_device);
    }
    int mip_width(int m) const { return desc.width >> m > 0 ? desc.width >> m : 1; }
    int mip_height(int m) const { return desc.height >> m > 0 ? desc.height >> m : 1; }
    size_t mip_texels(int m) const { return static_cast<size_t>(mip_width(m)) * static_cast<size_t>(mip_height(m)); }

    Status upload(const void* host, size_t bytes, void** device_ptr) {
        NMC_CUDA_RETURN_IF_ERROR(cudaMalloc(device_ptr, std::max<size_t>(bytes, 16)));
        allocations.push_back(*device_ptr);
        if (bytes) NMC_CUDA_RETURN_IF_ERROR(cudaMemcpy(*device_ptr, host, bytes, cudaMemcpyHostToDevice));
        return Status::success();
    }
};

// Whole mips of `job` with the kernel that fits the model; a timing variant other than full as
// cuda_decode_variants.h says (invalid_argument where it does not exist).
Status launch_grid(const DeviceModel& m, GridJob job, CudaDecodeVariant variant = CudaDecodeVariant::full);
// The valid queries of `job` (job.queries) on model m.
Status launch_queries(const DeviceModel& m, const QueryJob& job);
// The batch queries of `job` (job.batch) over `models` (device memory), sized by `sizing` (the widest model's max_k,
// the device and its multiprocessors; it owns nothing).
Status launch_batch_queries(const DeviceModel& sizing, const ModelDesc* models, const QueryJob& job);
// The warpgroup kernel's shared memory for model d, and whether device `info` runs that kernel (compute capability
// 9.0 and sm_90a code in this build).
size_t warpgroup_shared_bytes(const ModelDesc& d);
bool warpgroup_code_present(const CudaDeviceInfo& info);

}  // namespace nmc::cuda_detail
