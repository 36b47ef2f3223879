// EngineTextureDecoder on a device the test opens itself, as an engine would: the images it fills through the
// engine's command buffer hold VulkanDecoder::decode_texture_image's bytes (checked against the CPU decoder by
// vulkan_decoder_test.cpp), mip by mip, also when the texel buffer holds only a few rows at a time.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/pack.h"
#include "runtime/vulkan/engine_texture_decoder.h"
#include "runtime/vulkan/vulkan_api.h"
#include "runtime/vulkan/vulkan_context.h"
#include "runtime/vulkan/vulkan_decoder.h"

namespace nmc {
namespace {

using vulkan_detail::Buffer;
using vulkan_detail::Context;
using vulkan_detail::Image;

// The engine: a device of its own (not the decoder's), with its own queue and command buffer.
struct Engine {
    std::unique_ptr<Context> context;
    EngineVulkanDevice handles;
};

Engine open_engine() {
    Engine engine;
    Result<std::unique_ptr<Context>> opened = Context::open(-1);
    EXPECT_TRUE(opened.ok()) << opened.status().to_string();
    if (!opened.ok()) return engine;
    engine.context = std::move(opened).value();
    Result<const vulkan_detail::GlobalFunctions*> loader = vulkan_detail::load_vulkan();
    EXPECT_TRUE(loader.ok());
    engine.handles.get_instance_proc_addr = loader.value()->vkGetInstanceProcAddr;
    engine.handles.instance = engine.context->instance();
    engine.handles.physical_device = engine.context->physical_device();
    engine.handles.device = engine.context->device();
    return engine;
}

// Every mip of texture `t` decoded into an image of the engine's and copied back, tightly packed.
std::vector<std::vector<uint8_t>> decode_in_engine(Engine& engine, const EngineTextureDecoder& decoder, const Pack& pack,
                                                   int t, int bytes_per_texel) {
    Context& context = *engine.context;
    std::vector<std::vector<uint8_t>> mips;
    Result<VkFormat> format = decoder.image_format(t);
    EXPECT_TRUE(format.ok()) << format.status().to_string();
    if (!format.ok()) return mips;
    const auto levels = static_cast<uint32_t>(pack.material.mip_count);
    Image image;
    EXPECT_TRUE(context
                    .create_image(format.value(), static_cast<uint32_t>(pack.material.width),
                                  static_cast<uint32_t>(pack.material.height), levels,
                                  VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                      VK_IMAGE_USAGE_SAMPLED_BIT,
                                  image)
                    .ok());
    EXPECT_TRUE(context.begin().ok());
    const Status recorded = decoder.record_decode(context.commands(), t, image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    EXPECT_TRUE(recorded.ok()) << recorded.to_string();
    EXPECT_TRUE(context.submit_and_wait().ok());
    for (int m = 0; m < pack.material.mip_count; ++m) {
        const uint64_t bytes = static_cast<uint64_t>(pack.material.mip_width(m)) *
                               static_cast<uint64_t>(pack.material.mip_height(m)) * static_cast<uint64_t>(bytes_per_texel);
        Buffer readback;
        EXPECT_TRUE(context
                        .create_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                       readback)
                        .ok());
        EXPECT_TRUE(context.begin().ok());
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, static_cast<uint32_t>(m), 0, 1};
        region.imageExtent = {static_cast<uint32_t>(pack.material.mip_width(m)),
                              static_cast<uint32_t>(pack.material.mip_height(m)), 1};
        context.vk().vkCmdCopyImageToBuffer(context.commands(), image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                            readback.buffer, 1, &region);
        context.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        EXPECT_TRUE(context.submit_and_wait().ok());
        const auto* data = static_cast<const uint8_t*>(readback.mapped);
        mips.emplace_back(data, data + bytes);
        context.destroy(readback);
    }
    context.destroy(image);
    return mips;
}

void expect_engine_images_equal_the_decoders(const Pack& pack, uint64_t texel_buffer_bytes) {
    Engine engine = open_engine();
    ASSERT_TRUE(engine.context);
    Result<EngineTextureDecoder> decoder = EngineTextureDecoder::create(pack, engine.handles, texel_buffer_bytes);
    ASSERT_TRUE(decoder.ok()) << decoder.status().to_string();
    ASSERT_EQ(decoder->texture_count(), static_cast<int>(pack.textures.size()));
    VulkanDecoderOptions scalar;
    scalar.path = VulkanNetworkPath::scalar;
    Result<VulkanDecoder> reference = VulkanDecoder::create(pack, scalar);
    ASSERT_TRUE(reference.ok()) << reference.status().to_string();
    for (int t = 0; t < decoder->texture_count(); ++t) {
        SCOPED_TRACE(pack.textures[static_cast<size_t>(t)].name);
        Result<TextureImage> expected = reference->decode_texture_image(t);
        ASSERT_TRUE(expected.ok()) << expected.status().to_string();
        const std::vector<std::vector<uint8_t>> got =
            decode_in_engine(engine, decoder.value(), pack, t, expected->bytes_per_texel);
        ASSERT_EQ(got.size(), expected->mips.size());
        for (size_t m = 0; m < got.size(); ++m) EXPECT_EQ(got[m], expected->mips[m]) << "mip " << m;
    }
}

std::string golden_path() {
    return std::string(NMC_SOURCE_DIR) + "/data/golden/v1_0_small.nmc";
}

TEST(EngineTextureDecoder, FillsTheEnginesImagesWithTheDecodersBytes) {
    Result<Pack> pack = read_pack_file(golden_path());
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    expect_engine_images_equal_the_decoders(pack.value(), uint64_t{16} << 20);
}

// A texel buffer of a few rows: many chunks per mip, each copy ordered before the next dispatch rewrites the buffer.
TEST(EngineTextureDecoder, SmallTexelBufferManyChunks) {
    Result<Pack> pack = read_pack_file(golden_path());
    ASSERT_TRUE(pack.ok()) << pack.status().to_string();
    const uint64_t three_rows = static_cast<uint64_t>(pack->material.width) * 16 * 3;
    expect_engine_images_equal_the_decoders(pack.value(), three_rows);
}

TEST(EngineTextureDecoder, RefusesMissingHandlesABrokenPackAndBadArguments) {
    Result<Pack> pack = read_pack_file(golden_path());
    ASSERT_TRUE(pack.ok());
    EXPECT_EQ(EngineTextureDecoder::create(pack.value(), EngineVulkanDevice{}).status().code(),
              StatusCode::invalid_argument);
    Engine engine = open_engine();
    ASSERT_TRUE(engine.context);
    Pack broken = pack.value();
    broken.network.layers.front().input_width += 1;  // no longer the weights' shape
    const Result<EngineTextureDecoder> refused = EngineTextureDecoder::create(broken, engine.handles);
    EXPECT_EQ(refused.status().code(), StatusCode::invalid_argument) << refused.status().to_string();
    Result<EngineTextureDecoder> decoder = EngineTextureDecoder::create(pack.value(), engine.handles);
    ASSERT_TRUE(decoder.ok()) << decoder.status().to_string();
    EXPECT_EQ(decoder->image_format(-1).status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(decoder->image_format(decoder->texture_count()).status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(decoder->record_decode(VK_NULL_HANDLE, 0, VK_NULL_HANDLE, VK_IMAGE_LAYOUT_GENERAL).code(),
              StatusCode::invalid_argument);
}

}  // namespace
}  // namespace nmc
