// VulkanDecoder: the upload of the model buffer, the whole-mip compute pipeline of the network path, its dispatches in
// row chunks (each within Vulkan's guaranteed dispatch size), and the read-back of the channel planes.
#include "runtime/vulkan/vulkan_decoder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "decoder/common/decode_request.h"
#include "decoder/common/reference_math.h"
#include "runtime/vulkan/gpu_model.h"
#include "runtime/vulkan/shaders/model_layout.h"
#include "runtime/vulkan/texture_decoding.h"
#include "runtime/vulkan/vulkan_context.h"

// SPIR-V compiled from runtime/vulkan/shaders at build time (runtime/vulkan/CMakeLists.txt).
#include "runtime/vulkan/spirv/decode_mip_coopmat.h"
#include "runtime/vulkan/spirv/decode_mip_scalar.h"

namespace nmc {
namespace vulkan_detail {
namespace {

constexpr uint32_t kWorkgroupSize = 64;  // decode_mip_scalar.comp's local_size_x: a texel an invocation
// decode_mip_coopmat.comp: blocks of kCooperativeRows texels (its local_size_x), kCooperativeBlocks a workgroup, layers
// at most kCooperativeMaxWidth wide (its register tiles); shared memory: layer 0's binary16 inputs of a block, a
// float32 scratch tile per subgroup and, where they fit, every layer's binary16 weights.
constexpr uint32_t kCooperativeRows = 128;
constexpr uint32_t kCooperativeBlocks = 8;
constexpr int kCooperativeMaxWidth = 128;
constexpr uint64_t kCooperativeScratchBytes = 4 * 16 * 16 * 4;
constexpr uint64_t kMaxGroupsPerDispatch = 65535;         // maxComputeWorkGroupCount[0]'s guaranteed minimum
constexpr uint64_t kMaxChunkBytes = uint64_t{256} << 20;  // the output buffer of one dispatch

// decode_mip_*.comp's push constants.
struct PushConstants {
    uint32_t mip;
    uint32_t first_row;
    uint32_t row_count;
    uint32_t plane_stride;
};


}  // namespace

// A decoder's device, buffers and pipeline; destroyed in reverse order of creation.
struct Session {
    std::unique_ptr<Context> context;
    Buffer model;     // device-local: the GPU model buffer
    Buffer output;    // device-local: one chunk's channel planes
    Buffer readback;  // host-visible: output copied back
    std::unique_ptr<ComputePipeline> pipeline;
    // Inference on load, made on first use: decode_texture.comp and the buffer it writes one chunk of texels to.
    Buffer texel_chunk;
    std::unique_ptr<ComputePipeline> texture_pipeline;
    int max_width = 0;
    std::vector<uint32_t> shape;  // GpuModel::shape, or empty (VulkanDecoderOptions::shape_constants false)

    // The constants every decoding shader takes: 0 the widest layer, and nmc_decode.glsl's network shape.
    std::vector<SpecializationConstant> decode_constants() const {
        return vulkan_detail::decode_constants(shape, max_width);
    }
    VkQueryPool timestamps = VK_NULL_HANDLE;
    uint64_t chunk_texels = 0;

    VulkanNetworkPath path = VulkanNetworkPath::scalar;
    uint32_t texels_per_group = kWorkgroupSize;  // the path's workgroup decodes this many texels
    MaterialInfo material;
    std::vector<TextureLayout> textures;
    int channel_count = 0;
    mutable std::mutex mutex;  // one submission at a time

    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() {
        if (!context) return;
        pipeline.reset();
        texture_pipeline.reset();
        context->destroy(texel_chunk);
        if (timestamps != VK_NULL_HANDLE) context->vk().vkDestroyQueryPool(context->device(), timestamps, nullptr);
        for (Buffer* b : {&readback, &output, &model}) context->destroy(*b);
    }

    // Rows of mip `mip` decoded by one dispatch (whole-mip decoding and inference on load chunk alike).
    int chunk_rows(int mip) const { return texture_chunk_rows(material, mip, chunk_texels); }

    // Records the dispatch of rows [first_row, first_row + rows) of mip `mip` into the output buffer.
    void record_dispatch(int mip, int first_row, int rows) const {
        const uint32_t texels = static_cast<uint32_t>(material.mip_width(mip)) * static_cast<uint32_t>(rows);
        const PushConstants push{static_cast<uint32_t>(mip), static_cast<uint32_t>(first_row),
                                 static_cast<uint32_t>(rows), texels};
        pipeline->record_dispatch(&push, (texels + texels_per_group - 1) / texels_per_group);
    }

    Status create(const Pack& pack, const VulkanDecoderOptions& options, const GpuModel& gpu_model);
};

Status Session::create(const Pack& pack, const VulkanDecoderOptions& options, const GpuModel& gpu_model) {
    material = pack.material;
    textures = pack.textures;
    channel_count = static_cast<int>(pack.channels.size());
    Result<std::unique_ptr<Context>> opened = Context::open(options.device);
    if (!opened.ok()) return opened.status();
    context = std::move(opened).value();
    const VulkanDeviceInfo& info = context->info();
    const std::string device_name = "vulkan:" + std::to_string(info.index) + " (" + info.name + ")";

    // The network path: the cooperative-matrix one where asked for and the device, the pack and the options allow it
    // (decode_mip_coopmat.comp: register tiles up to kCooperativeMaxWidth, the shape as specialization constants,
    // a block's layer-0 inputs in shared memory).
    const uint32_t input_padded = NMC_PADDED(static_cast<uint32_t>(pack.network.layers.front().input_width));
    const uint64_t staging_bytes = uint64_t{kCooperativeRows} * input_padded * 2 + kCooperativeScratchBytes;
    uint64_t weight_halves = 0;
    for (const Layer& layer : pack.network.layers)
        weight_halves += uint64_t{NMC_PADDED(static_cast<uint32_t>(layer.input_width))} *
                         NMC_PADDED(static_cast<uint32_t>(layer.output_width));
    const uint64_t shared_limit = context->limits().maxComputeSharedMemorySize;
    std::string cooperative_missing = info.cooperative_matrix ? "" : info.cooperative_matrix_detail;
    if (cooperative_missing.empty() && gpu_model.max_width > kCooperativeMaxWidth)
        cooperative_missing = "the pack's widest layer (" + std::to_string(gpu_model.max_width) +
                              ") is wider than its " + std::to_string(kCooperativeMaxWidth);
    if (cooperative_missing.empty() && !options.shape_constants)
        cooperative_missing = "it needs the network's shape as specialization constants (shape_constants)";
    if (cooperative_missing.empty() && staging_bytes > shared_limit)
        cooperative_missing = "the pack's layer 0 needs " + std::to_string(staging_bytes) +
                              " bytes of shared memory, the device has " + std::to_string(shared_limit);
    if (options.path == VulkanNetworkPath::cooperative_matrix && !cooperative_missing.empty())
        return Status(StatusCode::backend_unavailable,
                      device_name + " cannot run the cooperative-matrix path: " + cooperative_missing);
    // automatic takes the scalar path: its values are the CPU's bit for bit, so `--device vulkan` writes the CPU's
    // files; the cooperative-matrix path (1.3-1.5 times faster on the H200, docs/runtime.md) is asked for by name.
    path = options.path == VulkanNetworkPath::cooperative_matrix ? VulkanNetworkPath::cooperative_matrix
                                                                 : VulkanNetworkPath::scalar;
    texels_per_group = path == VulkanNetworkPath::cooperative_matrix ? kCooperativeRows * kCooperativeBlocks
                                                                      : kWorkgroupSize;
    // The weights go to shared memory where they fit beside the inputs, else the shader reads the model buffer.
    const uint32_t shared_weights =
        staging_bytes + weight_halves * 2 <= shared_limit ? static_cast<uint32_t>(weight_halves) : 0;

    const VkDeviceSize model_bytes = gpu_model.words.size() * sizeof(uint32_t);
    const uint64_t range = context->limits().maxStorageBufferRange;
    if (model_bytes > range)
        return Status(StatusCode::limit_exceeded,
                      device_name + ": the pack's model buffer is " + std::to_string(model_bytes) +
                          " bytes, beyond the device's storage buffer range of " + std::to_string(range));
    // One chunk's output: whole rows, at most kMaxGroupsPerDispatch groups and kMaxChunkBytes (and the device's range).
    const uint64_t plane_bytes = sizeof(float) * static_cast<uint64_t>(channel_count);
    chunk_texels = std::min<uint64_t>(kMaxGroupsPerDispatch * texels_per_group,
                                      std::min<uint64_t>(kMaxChunkBytes, range) / plane_bytes);
    uint64_t output_texels = 0;
    for (int m = 0; m < material.mip_count; ++m)
        output_texels = std::max<uint64_t>(
            output_texels, static_cast<uint64_t>(chunk_rows(m)) * static_cast<uint64_t>(material.mip_width(m)));
    const VkDeviceSize output_bytes = output_texels * plane_bytes;

    NMC_RETURN_IF_ERROR(
        context->create_device_buffer(gpu_model.words.data(), model_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, model));
    NMC_RETURN_IF_ERROR(context->create_buffer(output_bytes,
                                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, output));
    NMC_RETURN_IF_ERROR(
        context->create_buffer(output_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT, readback));

    // Bindings: 0 the model buffer, 1 the output, and for the cooperative-matrix path 2 the model buffer again (read
    // as binary16 weights). Specialization constants: 0 the widest layer, nmc_decode.glsl's network shape, and for
    // the cooperative-matrix path 1 layer 0's input width padded to 16, 2 the weights in shared memory, 3 the blocks
    // of a workgroup.
    max_width = gpu_model.max_width;
    if (options.shape_constants) shape = gpu_model.shape;
    std::vector<SpecializationConstant> constants = decode_constants();
    if (path == VulkanNetworkPath::cooperative_matrix) {
        constants.push_back({1, input_padded});
        constants.push_back({2, shared_weights});
        constants.push_back({3, kCooperativeBlocks});
    }
    Result<std::unique_ptr<ComputePipeline>> made =
        path == VulkanNetworkPath::cooperative_matrix
            ? ComputePipeline::create(*context, nmc_spirv_decode_mip_coopmat, sizeof(nmc_spirv_decode_mip_coopmat),
                                      {model.buffer, output.buffer, model.buffer}, constants, sizeof(PushConstants))
            : ComputePipeline::create(*context, nmc_spirv_decode_mip_scalar, sizeof(nmc_spirv_decode_mip_scalar),
                                      {model.buffer, output.buffer}, constants, sizeof(PushConstants));
    if (!made.ok()) return made.status();
    pipeline = std::move(made).value();

    if (context->timestamp_period_ns() > 0) {
        auto query_info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
        query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        query_info.queryCount = 2;
        NMC_VK(context->vk().vkCreateQueryPool(context->device(), &query_info, nullptr, &timestamps));
    }
    return Status::success();
}

}  // namespace vulkan_detail

using vulkan_detail::Session;

Result<std::vector<VulkanDeviceInfo>> list_vulkan_devices() {
    Result<int> count = vulkan_detail::Context::device_count();
    if (!count.ok()) return count.status();
    std::vector<VulkanDeviceInfo> list;
    for (int i = 0; i < count.value(); ++i) {
        Result<std::unique_ptr<vulkan_detail::Context>> context = vulkan_detail::Context::open(i);
        if (!context.ok()) return context.status();
        list.push_back((*context)->info());
    }
    return list;
}

Result<VulkanDecoder> VulkanDecoder::create(const Pack& pack, const VulkanDecoderOptions& options) {
    Result<GpuModel> gpu_model = build_gpu_model(pack);  // the pack's rules first: a bad pack never reaches the GPU
    if (!gpu_model.ok()) return gpu_model.status();
    auto session = std::make_shared<Session>();
    NMC_RETURN_IF_ERROR(session->create(pack, options, gpu_model.value()));
    return VulkanDecoder(std::move(session));
}

const char* to_string(VulkanNetworkPath path) {
    switch (path) {
        case VulkanNetworkPath::automatic:
            return "automatic";
        case VulkanNetworkPath::scalar:
            return "scalar";
        case VulkanNetworkPath::cooperative_matrix:
            return "cooperative_matrix";
    }
    return "unknown";
}

const VulkanDeviceInfo& VulkanDecoder::device() const {
    return session_->context->info();
}

std::string VulkanDecoder::pipeline_statistics() const {
    return session_->pipeline->statistics();
}

VulkanNetworkPath VulkanDecoder::path() const {
    return session_->path;
}

int VulkanDecoder::channel_count() const {
    return session_->channel_count;
}

Result<TextureImage> VulkanDecoder::decode_texture_image(int texture) const {
    Session& s = *session_;
    NMC_RETURN_IF_ERROR(check_index("decode_texture_image", "texture", texture, static_cast<int>(s.textures.size())));
    const vulkan_detail::TextureFormat format = vulkan_detail::texture_format(s.textures[static_cast<size_t>(texture)]);
    vulkan_detail::Context& context = *s.context;
    if (!context.format_supports(format.format, VK_FORMAT_FEATURE_TRANSFER_SRC_BIT |
                                                    VK_FORMAT_FEATURE_TRANSFER_DST_BIT |
                                                    VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT))
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(context.info().index) + " (" +
                                                           context.info().name + ") cannot sample or copy " +
                                                           format.name + " images");
    const std::lock_guard<std::mutex> lock(s.mutex);
    const uint64_t texel_bytes = static_cast<uint64_t>(format.samples) * static_cast<uint64_t>(format.sample_bytes);
    if (!s.texture_pipeline) {
        NMC_RETURN_IF_ERROR(context.create_buffer(vulkan_detail::texel_chunk_bytes(s.material, s.chunk_texels),
                                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                                  0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, s.texel_chunk));
        Result<std::unique_ptr<vulkan_detail::ComputePipeline>> made = vulkan_detail::create_texture_pipeline(
            context, s.model.buffer, s.texel_chunk.buffer, s.decode_constants());
        if (!made.ok()) {
            context.destroy(s.texel_chunk);
            return made.status();
        }
        s.texture_pipeline = std::move(made).value();
    }

    const auto mips = static_cast<uint32_t>(s.material.mip_count);
    vulkan_detail::Image image;
    NMC_RETURN_IF_ERROR(context.create_image(
        format.format, static_cast<uint32_t>(s.material.width), static_cast<uint32_t>(s.material.height), mips,
        VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT, image));
    // Every mip decoded chunk by chunk into the texel buffer and copied into its rows of the image, in one submission.
    Status status = context.begin();
    if (status.ok()) {
        context.image_barrier(image.image, mips, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_WRITE_BIT);
        vulkan_detail::record_texture_decode(context.vk(), context.commands(), *s.texture_pipeline,
                                             s.texel_chunk.buffer, s.chunk_texels, image.image, s.material, texture,
                                             format);
        status = context.submit_and_wait();
    }
    // Read every mip back through the read-back buffer, in chunks of whole rows that fit it.
    TextureImage result;
    result.format = format.name;
    result.samples = format.samples;
    result.bytes_per_texel = static_cast<int>(texel_bytes);
    if (status.ok()) status = context.begin();
    if (status.ok()) {
        context.image_barrier(image.image, mips, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_READ_BIT);
        status = context.submit_and_wait();
    }
    for (int m = 0; status.ok() && m < s.material.mip_count; ++m) {
        const uint64_t w = static_cast<uint64_t>(s.material.mip_width(m));
        const int h = s.material.mip_height(m);
        std::vector<uint8_t> bytes(w * static_cast<uint64_t>(h) * texel_bytes);
        const int rows_per_copy = static_cast<int>(std::clamp<uint64_t>(s.readback.size / (w * texel_bytes), 1, h));
        for (int first = 0; status.ok() && first < h; first += rows_per_copy) {
            const int rows = std::min(rows_per_copy, h - first);
            status = context.begin();
            if (!status.ok()) break;
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, static_cast<uint32_t>(m), 0, 1};
            region.imageOffset = {0, first, 0};
            region.imageExtent = {static_cast<uint32_t>(w), static_cast<uint32_t>(rows), 1};
            context.vk().vkCmdCopyImageToBuffer(context.commands(), image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                                s.readback.buffer, 1, &region);
            context.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                            VK_ACCESS_HOST_READ_BIT);
            status = context.submit_and_wait();
            if (status.ok())
                std::memcpy(bytes.data() + static_cast<uint64_t>(first) * w * texel_bytes, s.readback.mapped,
                            static_cast<uint64_t>(rows) * w * texel_bytes);
        }
        result.mips.push_back(std::move(bytes));
    }
    context.destroy(image);
    if (!status.ok()) return status;
    return result;
}

Status VulkanDecoder::decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const {
    Session& s = *session_;
    NMC_RETURN_IF_ERROR(check_index("decode_mip_channels", "mip", mip, s.material.mip_count));
    const std::lock_guard<std::mutex> lock(s.mutex);
    const size_t w = static_cast<size_t>(s.material.mip_width(mip));
    const int h = s.material.mip_height(mip);
    out.assign(static_cast<size_t>(s.channel_count), std::vector<float>(w * static_cast<size_t>(h)));
    const int rows_per_chunk = s.chunk_rows(mip);
    for (int first = 0; first < h; first += rows_per_chunk) {
        const int rows = std::min(rows_per_chunk, h - first);
        const size_t texels = w * static_cast<size_t>(rows);
        NMC_RETURN_IF_ERROR(s.context->begin());
        s.record_dispatch(mip, first, rows);
        s.context->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, texels * sizeof(float) * static_cast<size_t>(s.channel_count)};
        s.context->vk().vkCmdCopyBuffer(s.context->commands(), s.output.buffer, s.readback.buffer, 1, &region);
        s.context->barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        NMC_RETURN_IF_ERROR(s.context->submit_and_wait());
        const float* planes = static_cast<const float*>(s.readback.mapped);
        for (size_t c = 0; c < out.size(); ++c)
            std::memcpy(out[c].data() + static_cast<size_t>(first) * w, planes + c * texels, texels * sizeof(float));
    }
    return Status::success();
}

Result<Image> VulkanDecoder::decode_texture(int texture, int mip) const {
    const Session& s = *session_;
    NMC_RETURN_IF_ERROR(check_index("decode_texture", "texture", texture, static_cast<int>(s.textures.size())));
    std::vector<std::vector<float>> planes;
    NMC_RETURN_IF_ERROR(decode_mip_channels(mip, planes));
    // spec 8.8-8.9 per texel, with the reference decoder's code.
    const TextureLayout& layout = s.textures[static_cast<size_t>(texture)];
    const size_t channels = layout.channels.size();
    Image image(s.material.mip_width(mip), s.material.mip_height(mip), static_cast<int>(channels), layout.sample_type);
    std::vector<float> pack_values(planes.size());
    for (size_t t = 0; t < image.texel_count(); ++t) {
        for (size_t c = 0; c < planes.size(); ++c) pack_values[c] = planes[c][t];
        source_channel_values(layout, pack_values.data(), &image.pixels[t * channels]);
    }
    return image;
}

Result<double> VulkanDecoder::time_all_mips_ms(int repetitions) const {
    Session& s = *session_;
    if (s.timestamps == VK_NULL_HANDLE)
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(s.context->info().index) + " (" +
                                                           s.context->info().name +
                                                           "): its compute queue has no timestamps");
    if (repetitions < 1) return Status(StatusCode::invalid_argument, "time_all_mips_ms: repetitions must be >= 1");
    const std::lock_guard<std::mutex> lock(s.mutex);
    std::vector<double> times;
    for (int run = 0; run <= repetitions; ++run) {  // run 0 warms up
        NMC_RETURN_IF_ERROR(s.context->begin());
        s.context->vk().vkCmdResetQueryPool(s.context->commands(), s.timestamps, 0, 2);
        s.context->vk().vkCmdWriteTimestamp(s.context->commands(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.timestamps, 0);
        for (int m = 0; m < s.material.mip_count; ++m) {
            const int rows_per_chunk = s.chunk_rows(m);
            for (int first = 0; first < s.material.mip_height(m); first += rows_per_chunk) {
                // Chunks share the output buffer: each waits for the one before it to finish writing.
                if (m > 0 || first > 0)
                    s.context->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
                s.record_dispatch(m, first, std::min(rows_per_chunk, s.material.mip_height(m) - first));
            }
        }
        s.context->vk().vkCmdWriteTimestamp(s.context->commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps,
                                            1);
        NMC_RETURN_IF_ERROR(s.context->submit_and_wait());
        uint64_t ticks[2] = {0, 0};
        NMC_VK(s.context->vk().vkGetQueryPoolResults(s.context->device(), s.timestamps, 0, 2, sizeof(ticks), ticks,
                                                     sizeof(uint64_t),
                                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (run > 0)
            times.push_back(static_cast<double>(ticks[1] - ticks[0]) * s.context->timestamp_period_ns() * 1e-6);
    }
    std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

}  // namespace nmc
