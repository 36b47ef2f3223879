// Inference on sample: renders bench/shaders/render_scene.glsl's scene (a lit ground plane, perspective, per-pixel
// shading from the material's albedo, normal, roughness, metalness and occlusion maps) on a Vulkan device, each pixel
// once decoding the pack (nmc_decode.glsl, trilinear across mips) and once sampling the source textures' pack-channel
// planes (the reference the pack was trained on) as ordinary trilinear textures; both in a fragment shader
// (render.frag) and in a compute pass (render.comp: one invocation a pixel, as a deferred renderer evaluates
// materials). Writes the fragment shader's two frames and their difference (x8) as PNG, prints the PSNR between the
// frames of each pair over the plane's pixels beside the pack's own psnr8, and the GPU milliseconds per frame of each
// (device timestamps, median). With `decoded` last, the ordinary textures hold the pack decoded on the CPU (every mip,
// as inference on load gives them) instead of the source's planes: the frame pair then differs only by sampling the
// network at each pixel instead of sampling decoded texels, without the compression error.
// Usage: nmc_vulkan_render_bench PACK SOURCE_FOLDER OUT_FOLDER [width (1920)] [height (1080)] [frames (5)]
//                                [device index (-1: the first GPU)] [textures: source (default) | decoded]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_exit_on_error.h"
#include "decoder/cpu/cpu_decoder.h"
#include "format/pack.h"
#include "material/image_io.h"
#include "quality/quality_measurement.h"
#include "runtime/vulkan/gpu_model.h"
#include "runtime/vulkan/vulkan_context.h"

#include "bench/spirv/render_comp.h"
#include "bench/spirv/render_frag.h"
#include "bench/spirv/render_vert.h"

namespace {

using nmc::Status;
using nmc::vulkan_detail::Buffer;
using nmc::vulkan_detail::Context;
using nmc::vulkan_detail::Image;
using nmc::vulkan_detail::Specialization;
using nmc::vulkan_detail::SpecializationConstant;
using nmc::vulkan_detail::vk_struct;

constexpr uint32_t kAbsent = 0xFFFFFFFFu;
constexpr int kPlaneImages = 4;  // render.frag's planes[4]: up to 16 pack channels

// render_scene.glsl's push constants: where each material input comes from, and the frame's size.
struct MaterialMap {
    float aspect = 1.0f;  // width / height of the frame
    uint32_t albedo = kAbsent;
    uint32_t normal = kAbsent;
    uint32_t normal_flip_y = 0;
    uint32_t roughness = kAbsent, roughness_channel = 0, roughness_is_gloss = 0;
    uint32_t metalness = kAbsent, metalness_channel = 0;
    uint32_t occlusion = kAbsent, occlusion_channel = 0;
    uint32_t width = 0, height = 0;
};

void check(const Status& s, const char* what) {
    nmc::bench::exit_on_error(s, what);
}

void check_vk(VkResult r, const char* what) {
    if (r != VK_SUCCESS) check(nmc::vulkan_detail::vulkan_error(what, r), what);
}

// The first texture channel of each semantic the shading uses.
MaterialMap material_map(const nmc::Pack& pack) {
    MaterialMap map;
    for (size_t t = 0; t < pack.textures.size(); ++t) {
        const nmc::TextureLayout& texture = pack.textures[t];
        const auto index = static_cast<uint32_t>(t);
        if (texture.normal_mode != nmc::NormalMode::none ||
            (texture.channels.size() >= 3 && texture.channels[0].semantic == nmc::Semantic::normal)) {
            if (map.normal == kAbsent) {
                map.normal = index;
                map.normal_flip_y = texture.normal_convention == nmc::NormalConvention::directx ? 1 : 0;
            }
            continue;
        }
        for (size_t c = 0; c < texture.channels.size(); ++c) {
            const auto channel = static_cast<uint32_t>(c);
            switch (texture.channels[c].semantic) {
                case nmc::Semantic::albedo:
                    if (map.albedo == kAbsent && texture.channels.size() >= 3 && c == 0) map.albedo = index;
                    break;
                case nmc::Semantic::roughness:
                case nmc::Semantic::glossiness:
                    if (map.roughness == kAbsent) {
                        map.roughness = index;
                        map.roughness_channel = channel;
                        map.roughness_is_gloss = texture.channels[c].semantic == nmc::Semantic::glossiness;
                    }
                    break;
                case nmc::Semantic::metalness:
                    if (map.metalness == kAbsent) map.metalness = index, map.metalness_channel = channel;
                    break;
                case nmc::Semantic::ambient_occlusion:
                    if (map.occlusion == kAbsent) map.occlusion = index, map.occlusion_channel = channel;
                    break;
                default:
                    break;
            }
        }
    }
    return map;
}

struct Frame {
    std::vector<uint8_t> rgba;  // width * height * 4, row-major
    double ms = 0;              // median GPU time of one frame
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s PACK SOURCE_FOLDER OUT_FOLDER [width] [height] [frames] [device]\n", argv[0]);
        return 2;
    }
    const std::string pack_path = argv[1];
    const std::string source = argv[2];
    const std::string out = argv[3];
    const uint32_t width = argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : 1920;
    const uint32_t height = argc > 5 ? static_cast<uint32_t>(std::atoi(argv[5])) : 1080;
    const int frames = argc > 6 ? std::atoi(argv[6]) : 5;
    const int device_index = argc > 7 ? std::atoi(argv[7]) : -1;
    const std::string textures = argc > 8 ? argv[8] : "source";
    if (width < 1 || width > 8192 || height < 1 || height > 8192 || frames < 1 ||
        (textures != "source" && textures != "decoded")) {
        std::fprintf(stderr, "%s: width and height 1..8192, frames >= 1, textures source or decoded\n", argv[0]);
        return 2;
    }
    const bool decoded_textures = textures == "decoded";

    nmc::Result<nmc::Pack> pack = nmc::read_pack_file(pack_path);
    check(pack.status(), "reading the pack");
    nmc::Result<nmc::ReferenceMaterial> reference = nmc::load_reference(source, pack.value());
    check(reference.status(), "reading the source textures");
    nmc::Result<nmc::GpuModel> model = nmc::build_gpu_model(pack.value());
    check(model.status(), "building the GPU model");
    // The ordinary textures' planes, mip by mip: the source's, or the pack decoded by the CPU reference decoder.
    std::vector<std::vector<std::vector<float>>> texture_planes = reference->material.mips;
    if (decoded_textures) {
        nmc::Result<nmc::CpuDecoder> cpu = nmc::CpuDecoder::create(pack.value());
        check(cpu.status(), "creating the CPU decoder");
        for (int m = 0; m < pack->material.mip_count; ++m)
            check(cpu->decode_mip_channels(m, texture_planes[static_cast<size_t>(m)]), "decoding the pack on the CPU");
    }
    nmc::Result<std::unique_ptr<Context>> opened = Context::open(device_index);
    check(opened.status(), "opening the Vulkan device");
    Context& context = *opened.value();
    if (!context.graphics() || context.timestamp_period_ns() <= 0) {
        std::fprintf(stderr, "%s: vulkan:%d (%s) has no queue that both draws and times\n", argv[0],
                     context.info().index, context.info().name.c_str());
        return 1;
    }
    const nmc::vulkan_detail::DeviceFunctions& vk = context.vk();
    const VkDevice device = context.device();
    const nmc::MaterialInfo& info = pack->material;
    const int channels = static_cast<int>(pack->channels.size());
    const auto mips = static_cast<uint32_t>(info.mip_count);

    Buffer model_buffer;
    check(context.create_device_buffer(model->words.data(), model->words.size() * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                       model_buffer),
          "uploading the model");

    // A 2D view of every mip of an image.
    const auto view_of = [&](const Image& image, VkFormat format, uint32_t levels) {
        auto view_info = vk_struct<VkImageViewCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO);
        view_info.image = image.image;
        view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
        view_info.format = format;
        view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, levels, 0, 1};
        VkImageView view = VK_NULL_HANDLE;
        check_vk(vk.vkCreateImageView(device, &view_info, nullptr, &view), "vkCreateImageView");
        return view;
    };

    // The reference planes: pack channels 4i .. 4i+3 of every mip in one RGBA32F image each.
    const int plane_images = (channels + 3) / 4;
    std::vector<Image> planes(static_cast<size_t>(plane_images));
    std::vector<VkImageView> plane_views(static_cast<size_t>(plane_images));
    for (int i = 0; i < plane_images; ++i) {
        Image& image = planes[static_cast<size_t>(i)];
        check(context.create_image(VK_FORMAT_R32G32B32A32_SFLOAT, static_cast<uint32_t>(info.width),
                                   static_cast<uint32_t>(info.height), mips,
                                   VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT, image),
              "creating a plane image");
        check(context.begin(), "recording");
        context.image_barrier(image.image, mips, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_WRITE_BIT);
        check(context.submit_and_wait(), "submitting");
        for (uint32_t m = 0; m < mips; ++m) {
            const auto w = static_cast<size_t>(info.mip_width(static_cast<int>(m)));
            const auto h = static_cast<size_t>(info.mip_height(static_cast<int>(m)));
            std::vector<float> texels(w * h * 4, 0.0f);
            for (int k = 0; k < 4 && 4 * i + k < channels; ++k) {
                const std::vector<float>& plane = texture_planes[m][static_cast<size_t>(4 * i + k)];
                for (size_t t = 0; t < w * h; ++t) texels[t * 4 + static_cast<size_t>(k)] = plane[t];
            }
            Buffer staging;
            check(context.create_buffer(texels.size() * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                        staging),
                  "creating a staging buffer");
            std::memcpy(staging.mapped, texels.data(), texels.size() * 4);
            check(context.begin(), "recording");
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, m, 0, 1};
            region.imageExtent = {static_cast<uint32_t>(w), static_cast<uint32_t>(h), 1};
            vk.vkCmdCopyBufferToImage(context.commands(), staging.buffer, image.image,
                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
            check(context.submit_and_wait(), "uploading a plane");
            context.destroy(staging);
        }
        check(context.begin(), "recording");
        context.image_barrier(image.image, mips, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                              VK_ACCESS_SHADER_READ_BIT);
        check(context.submit_and_wait(), "submitting");
        plane_views[static_cast<size_t>(i)] = view_of(image, VK_FORMAT_R32G32B32A32_SFLOAT, mips);
    }
    auto sampler_info = vk_struct<VkSamplerCreateInfo>(VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO);
    sampler_info.magFilter = VK_FILTER_LINEAR;
    sampler_info.minFilter = VK_FILTER_LINEAR;
    sampler_info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_LINEAR;
    const VkSamplerAddressMode address = info.address_mode == nmc::AddressMode::wrap
                                             ? VK_SAMPLER_ADDRESS_MODE_REPEAT
                                             : VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sampler_info.addressModeU = address;
    sampler_info.addressModeV = address;
    sampler_info.addressModeW = address;
    sampler_info.maxLod = static_cast<float>(mips - 1);
    VkSampler sampler = VK_NULL_HANDLE;
    check_vk(vk.vkCreateSampler(device, &sampler_info, nullptr, &sampler), "vkCreateSampler");

    // The frame: RGBA8 UNORM holding display-encoded (sRGB) values; alpha 1 on the plane, 0 on the sky.
    Image target;
    check(context.create_image(VK_FORMAT_R8G8B8A8_UNORM, width, height, 1,
                               VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, target),
          "creating the frame");
    const VkImageView target_view = view_of(target, VK_FORMAT_R8G8B8A8_UNORM, 1);
    VkAttachmentDescription attachment{};
    attachment.format = VK_FORMAT_R8G8B8A8_UNORM;
    attachment.samples = VK_SAMPLE_COUNT_1_BIT;
    attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    attachment.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    attachment.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    attachment.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    attachment.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    const VkAttachmentReference colour_reference{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &colour_reference;
    // The colour writes finish before the copy that reads the frame back.
    VkSubpassDependency to_copy{};
    to_copy.srcSubpass = 0;
    to_copy.dstSubpass = VK_SUBPASS_EXTERNAL;
    to_copy.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    to_copy.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    to_copy.dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    to_copy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    auto pass_info = vk_struct<VkRenderPassCreateInfo>(VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO);
    pass_info.dependencyCount = 1;
    pass_info.pDependencies = &to_copy;
    pass_info.attachmentCount = 1;
    pass_info.pAttachments = &attachment;
    pass_info.subpassCount = 1;
    pass_info.pSubpasses = &subpass;
    VkRenderPass pass = VK_NULL_HANDLE;
    check_vk(vk.vkCreateRenderPass(device, &pass_info, nullptr, &pass), "vkCreateRenderPass");
    auto framebuffer_info = vk_struct<VkFramebufferCreateInfo>(VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO);
    framebuffer_info.renderPass = pass;
    framebuffer_info.attachmentCount = 1;
    framebuffer_info.pAttachments = &target_view;
    framebuffer_info.width = width;
    framebuffer_info.height = height;
    framebuffer_info.layers = 1;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    check_vk(vk.vkCreateFramebuffer(device, &framebuffer_info, nullptr, &framebuffer), "vkCreateFramebuffer");

    // The compute pass's frame: RGBA8 words, read back like the fragment shader's image.
    Buffer compute_frame;
    check(context.create_buffer(static_cast<VkDeviceSize>(width) * height * 4,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                                VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, compute_frame),
          "creating the compute frame");

    // Descriptors: 0 the model buffer, 1 the four plane images (unused slots repeat the first), 2 the compute frame.
    const VkShaderStageFlags stages_used = VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_COMPUTE_BIT;
    const VkDescriptorSetLayoutBinding bindings[3] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages_used, nullptr},
        {1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, kPlaneImages, stages_used, nullptr},
        {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr}};
    auto set_layout_info =
        vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set_layout_info.bindingCount = 3;
    set_layout_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    check_vk(vk.vkCreateDescriptorSetLayout(device, &set_layout_info, nullptr, &set_layout),
             "vkCreateDescriptorSetLayout");
    const VkPushConstantRange push_range{stages_used, 0, sizeof(MaterialMap)};
    auto layout_info = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push_range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    check_vk(vk.vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout");
    const VkDescriptorPoolSize pool_sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
                                                {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, kPlaneImages}};
    auto pool_info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 2;
    pool_info.pPoolSizes = pool_sizes;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check_vk(vk.vkCreateDescriptorPool(device, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
    auto allocate = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check_vk(vk.vkAllocateDescriptorSets(device, &allocate, &set), "vkAllocateDescriptorSets");
    const VkDescriptorBufferInfo model_info{model_buffer.buffer, 0, VK_WHOLE_SIZE};
    VkDescriptorImageInfo image_infos[kPlaneImages];
    for (int i = 0; i < kPlaneImages; ++i)
        image_infos[i] = {sampler, plane_views[static_cast<size_t>(std::min(i, plane_images - 1))],
                          VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    const VkDescriptorBufferInfo frame_info{compute_frame.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[3] = {vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET),
                                      vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET),
                                      vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET)};
    writes[0].dstSet = set;
    writes[0].dstBinding = 0;
    writes[0].descriptorCount = 1;
    writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[0].pBufferInfo = &model_info;
    writes[1].dstSet = set;
    writes[1].dstBinding = 1;
    writes[1].descriptorCount = kPlaneImages;
    writes[1].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    writes[1].pImageInfo = image_infos;
    writes[2].dstSet = set;
    writes[2].dstBinding = 2;
    writes[2].descriptorCount = 1;
    writes[2].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[2].pBufferInfo = &frame_info;
    vk.vkUpdateDescriptorSets(device, 3, writes, 0, nullptr);

    // Two pipelines: render.frag with kReference 0 (the pack) and 1 (the source planes).
    auto module_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module_info.codeSize = sizeof(nmc_spirv_render_vert);
    module_info.pCode = nmc_spirv_render_vert;
    VkShaderModule vertex = VK_NULL_HANDLE;
    check_vk(vk.vkCreateShaderModule(device, &module_info, nullptr, &vertex), "vkCreateShaderModule");
    module_info.codeSize = sizeof(nmc_spirv_render_frag);
    module_info.pCode = nmc_spirv_render_frag;
    VkShaderModule fragment = VK_NULL_HANDLE;
    check_vk(vk.vkCreateShaderModule(device, &module_info, nullptr, &fragment), "vkCreateShaderModule");
    module_info.codeSize = sizeof(nmc_spirv_render_comp);
    module_info.pCode = nmc_spirv_render_comp;
    VkShaderModule compute = VK_NULL_HANDLE;
    check_vk(vk.vkCreateShaderModule(device, &module_info, nullptr, &compute), "vkCreateShaderModule");
    // nmc_decode.glsl's network shape and the widest layer (constant 0), then kReference (constant 1).
    const auto specialization_constants = [&](uint32_t reference_path) {
        std::vector<SpecializationConstant> constants =
            nmc::vulkan_detail::decode_constants(model->shape, model->max_width);
        constants.push_back({1, reference_path});
        return constants;
    };
    // Pipelines 0 and 1: render.frag with kReference 0 (the pack) and 1 (the source planes); 2 and 3: render.comp.
    VkPipeline pipelines[4] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
    for (uint32_t reference_path = 0; reference_path < 2; ++reference_path) {
        const Specialization specialization(specialization_constants(reference_path));
        auto stage = vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
        stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        stage.module = compute;
        stage.pName = "main";
        stage.pSpecializationInfo = &specialization.info;
        auto compute_info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
        compute_info.stage = stage;
        compute_info.layout = layout;
        check_vk(vk.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &compute_info, nullptr,
                                             &pipelines[2 + reference_path]),
                 "vkCreateComputePipelines");
    }
    for (uint32_t reference_path = 0; reference_path < 2; ++reference_path) {
        const Specialization specialization(specialization_constants(reference_path));
        VkPipelineShaderStageCreateInfo stages[2] = {
            vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO),
            vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO)};
        stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
        stages[0].module = vertex;
        stages[0].pName = "main";
        stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
        stages[1].module = fragment;
        stages[1].pName = "main";
        stages[1].pSpecializationInfo = &specialization.info;
        auto vertex_input =
            vk_struct<VkPipelineVertexInputStateCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO);
        auto assembly = vk_struct<VkPipelineInputAssemblyStateCreateInfo>(
            VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO);
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
        const VkViewport viewport{0, 0, static_cast<float>(width), static_cast<float>(height), 0, 1};
        const VkRect2D scissor{{0, 0}, {width, height}};
        auto viewport_state =
            vk_struct<VkPipelineViewportStateCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO);
        viewport_state.viewportCount = 1;
        viewport_state.pViewports = &viewport;
        viewport_state.scissorCount = 1;
        viewport_state.pScissors = &scissor;
        auto raster = vk_struct<VkPipelineRasterizationStateCreateInfo>(
            VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO);
        raster.polygonMode = VK_POLYGON_MODE_FILL;
        raster.cullMode = VK_CULL_MODE_NONE;
        raster.lineWidth = 1.0f;
        auto multisample =
            vk_struct<VkPipelineMultisampleStateCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO);
        multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
        VkPipelineColorBlendAttachmentState blend{};
        blend.colorWriteMask =
            VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
        auto blend_state =
            vk_struct<VkPipelineColorBlendStateCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO);
        blend_state.attachmentCount = 1;
        blend_state.pAttachments = &blend;
        auto pipeline_info = vk_struct<VkGraphicsPipelineCreateInfo>(VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO);
        pipeline_info.stageCount = 2;
        pipeline_info.pStages = stages;
        pipeline_info.pVertexInputState = &vertex_input;
        pipeline_info.pInputAssemblyState = &assembly;
        pipeline_info.pViewportState = &viewport_state;
        pipeline_info.pRasterizationState = &raster;
        pipeline_info.pMultisampleState = &multisample;
        pipeline_info.pColorBlendState = &blend_state;
        pipeline_info.layout = layout;
        pipeline_info.renderPass = pass;
        check_vk(vk.vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr,
                                              &pipelines[reference_path]),
                 "vkCreateGraphicsPipelines");
    }

    // Render each frame `frames` times (timestamps around the pass), then read the last one back.
    Buffer readback;
    check(context.create_buffer(static_cast<VkDeviceSize>(width) * height * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                VK_MEMORY_PROPERTY_HOST_CACHED_BIT, readback),
          "creating the read-back buffer");
    auto query_info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 2;
    VkQueryPool queries = VK_NULL_HANDLE;
    check_vk(vk.vkCreateQueryPool(device, &query_info, nullptr, &queries), "vkCreateQueryPool");
    MaterialMap map = material_map(pack.value());
    map.aspect = static_cast<float>(width) / static_cast<float>(height);
    map.width = width;
    map.height = height;
    Frame rendered[4];
    for (int path = 0; path < 4; ++path) {
        std::vector<double> times;
        for (int frame = 0; frame <= frames; ++frame) {  // frame 0 warms up
            check(context.begin(), "recording");
            vk.vkCmdResetQueryPool(context.commands(), queries, 0, 2);
            vk.vkCmdWriteTimestamp(context.commands(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
            if (path >= 2) {  // the compute pass
                vk.vkCmdBindPipeline(context.commands(), VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[path]);
                vk.vkCmdBindDescriptorSets(context.commands(), VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                                           nullptr);
                vk.vkCmdPushConstants(context.commands(), layout, stages_used, 0, sizeof(map), &map);
                vk.vkCmdDispatch(context.commands(), (width + 7) / 8, (height + 7) / 8, 1);
                vk.vkCmdWriteTimestamp(context.commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
                if (frame == frames) {
                    context.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
                    const VkBufferCopy region{0, 0, static_cast<VkDeviceSize>(width) * height * 4};
                    vk.vkCmdCopyBuffer(context.commands(), compute_frame.buffer, readback.buffer, 1, &region);
                    context.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
                }
            } else {
                auto begin = vk_struct<VkRenderPassBeginInfo>(VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO);
                begin.renderPass = pass;
                begin.framebuffer = framebuffer;
                begin.renderArea = {{0, 0}, {width, height}};
                VkClearValue clear{};
                begin.clearValueCount = 1;
                begin.pClearValues = &clear;
                vk.vkCmdBeginRenderPass(context.commands(), &begin, VK_SUBPASS_CONTENTS_INLINE);
                vk.vkCmdBindPipeline(context.commands(), VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines[path]);
                vk.vkCmdBindDescriptorSets(context.commands(), VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &set, 0,
                                           nullptr);
                vk.vkCmdPushConstants(context.commands(), layout, stages_used, 0, sizeof(map), &map);
                vk.vkCmdDraw(context.commands(), 3, 1, 0, 0);
                vk.vkCmdEndRenderPass(context.commands());
                vk.vkCmdWriteTimestamp(context.commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
                if (frame == frames) {
                    VkBufferImageCopy region{};
                    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
                    region.imageExtent = {width, height, 1};
                    vk.vkCmdCopyImageToBuffer(context.commands(), target.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                              readback.buffer, 1, &region);
                    context.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
                }
            }
            check(context.submit_and_wait(), "rendering");
            uint64_t ticks[2] = {0, 0};
            check_vk(vk.vkGetQueryPoolResults(device, queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                     "vkGetQueryPoolResults");
            if (frame > 0)
                times.push_back(static_cast<double>(ticks[1] - ticks[0]) * context.timestamp_period_ns() * 1e-6);
        }
        std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
        rendered[path].ms = times[times.size() / 2];
        const auto* bytes = static_cast<const uint8_t*>(readback.mapped);
        rendered[path].rgba.assign(bytes, bytes + static_cast<size_t>(width) * height * 4);
    }

    // PSNR between two frames over the plane's pixels (alpha 255 in both), 8-bit RGB; and the plane's pixel count.
    const auto frame_psnr = [&](const Frame& a, const Frame& b, size_t& pixels) {
        double squared = 0;
        pixels = 0;
        for (size_t p = 0; p < static_cast<size_t>(width) * height; ++p) {
            if (a.rgba[p * 4 + 3] != 255 || b.rgba[p * 4 + 3] != 255) continue;
            ++pixels;
            for (size_t c = 0; c < 3; ++c) {
                const int d = a.rgba[p * 4 + c] - b.rgba[p * 4 + c];
                squared += static_cast<double>(d * d);
            }
        }
        return squared == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 * 3.0 * static_cast<double>(pixels) / squared);
    };
    size_t fragment_pixels = 0;
    size_t compute_pixels = 0;
    const double fragment_psnr = frame_psnr(rendered[0], rendered[1], fragment_pixels);
    const double compute_psnr = frame_psnr(rendered[2], rendered[3], compute_pixels);
    // The fragment shader's frames and their difference x8.
    nmc::Image images[3] = {nmc::Image(static_cast<int>(width), static_cast<int>(height), 3),
                            nmc::Image(static_cast<int>(width), static_cast<int>(height), 3),
                            nmc::Image(static_cast<int>(width), static_cast<int>(height), 3)};
    for (size_t p = 0; p < static_cast<size_t>(width) * height; ++p) {
        for (size_t c = 0; c < 3; ++c) {
            const int a = rendered[0].rgba[p * 4 + c];
            const int b = rendered[1].rgba[p * 4 + c];
            images[0].pixels[p * 3 + c] = static_cast<float>(a) / 255.0f;
            images[1].pixels[p * 3 + c] = static_cast<float>(b) / 255.0f;
            images[2].pixels[p * 3 + c] = std::min(1.0f, static_cast<float>(std::abs(a - b) * 8) / 255.0f);
        }
    }
    const char* names[3] = {"frame_pack.png", "frame_source.png", "frame_difference_x8.png"};
    for (int i = 0; i < 3; ++i)
        check(nmc::write_image(out + "/" + names[i], images[i], "png", true), "writing a frame");

    std::printf("# Vulkan render: %s on vulkan:%d %s, %ux%u, material %s (%dx%d, %d mips, C = %d)\n", pack_path.c_str(),
                context.info().index, context.info().name.c_str(), width, height, info.name.c_str(), info.width,
                info.height, info.mip_count, channels);
    std::printf("| frame | fragment shader ms | compute pass ms |\n|---|---:|---:|\n");
    std::printf(
        "| inference on sample (nmc_decode.glsl per pixel, trilinear: up to 2 decodes a pixel) | %.3f | %.3f |\n",
        rendered[0].ms, rendered[2].ms);
    std::printf("| %s (pack-channel planes, hardware trilinear) | %.3f | %.3f |\n",
                decoded_textures ? "the pack decoded on the CPU as textures" : "source textures", rendered[1].ms,
                rendered[3].ms);
    std::printf("(GPU time, median of %d frames)\n", frames);
    std::printf(
        "frame PSNR, pack vs %s, 8-bit RGB over the plane's pixels: fragment shader %.2f dB (%zu pixels), "
        "compute pass %.2f dB (%zu pixels); the pack's psnr8: %.2f dB\n",
        decoded_textures ? "decoded textures" : "source", fragment_psnr, fragment_pixels, compute_psnr,
        compute_pixels, pack->quality.psnr8_mip0_db);
    std::printf("wrote %s/{frame_pack,frame_source,frame_difference_x8}.png (the fragment shader's)\n", out.c_str());

    vk.vkDestroyQueryPool(device, queries, nullptr);
    for (VkPipeline p : pipelines) vk.vkDestroyPipeline(device, p, nullptr);
    vk.vkDestroyShaderModule(device, vertex, nullptr);
    vk.vkDestroyShaderModule(device, fragment, nullptr);
    vk.vkDestroyShaderModule(device, compute, nullptr);
    vk.vkDestroyDescriptorPool(device, pool, nullptr);
    vk.vkDestroyPipelineLayout(device, layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    vk.vkDestroyFramebuffer(device, framebuffer, nullptr);
    vk.vkDestroyRenderPass(device, pass, nullptr);
    vk.vkDestroyImageView(device, target_view, nullptr);
    vk.vkDestroySampler(device, sampler, nullptr);
    for (VkImageView v : plane_views) vk.vkDestroyImageView(device, v, nullptr);
    context.destroy(target);
    for (Image& image : planes) context.destroy(image);
    context.destroy(readback);
    context.destroy(compute_frame);
    context.destroy(model_buffer);
    return 0;
}
