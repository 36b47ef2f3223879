// The Vulkan plumbing the runtime's programs share (internal to runtime/vulkan and its tests): one device with a
// compute queue, buffers, one-time command submission, and compute pipelines from embedded SPIR-V.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/vulkan/vulkan_api.h"
#include "runtime/vulkan/vulkan_decoder.h"

namespace nmc::vulkan_detail {

Status vulkan_error(const char* call, VkResult result);

// Returns the Status of a failed Vulkan call (io_error naming the call and the VkResult).
#define NMC_VK(call)                                                                                      \
    do {                                                                                                  \
        const VkResult nmc_vk_result = (call);                                                            \
        if (nmc_vk_result != VK_SUCCESS) return ::nmc::vulkan_detail::vulkan_error(#call, nmc_vk_result); \
    } while (0)

// A zero-initialised Vulkan structure of type `type`.
template <typename T>
T vk_struct(VkStructureType type) {
    T value{};
    value.sType = type;
    return value;
}

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    void* mapped = nullptr;  // host-visible buffers stay mapped
};

struct Image {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
};

// An instance and one device with a compute queue, one command buffer and a fence. Where the device runs the
// cooperative-matrix pipeline (info().cooperative_matrix), its extension and features are enabled.
class Context {
public:
    // Device `index` of the loader's list; -1: the first GPU (discrete, then integrated, then virtual), else the first
    // device. backend_unavailable without a loader, a driver, such a device or Vulkan 1.1.
    static Result<std::unique_ptr<Context>> open(int index);
    // How many devices the loader lists; the same errors as open() without a loader or a driver.
    static Result<int> device_count();
    // An engine's device instead of one of its own (EngineTextureDecoder): entry points loaded through the engine's
    // vkGetInstanceProcAddr; no queue, command buffer or fence (begin and submit_and_wait refuse); the device is the
    // engine's and outlives the context. backend_unavailable below Vulkan 1.1.
    static Result<std::unique_ptr<Context>> adopt(PFN_vkGetInstanceProcAddr get_instance_proc_addr, VkInstance instance,
                                                  VkPhysicalDevice physical_device, VkDevice device);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const VulkanDeviceInfo& info() const { return info_; }
    const VkPhysicalDeviceLimits& limits() const { return limits_; }
    float timestamp_period_ns() const { return timestamp_period_ns_; }  // 0: the queue has no timestamps
    bool graphics() const { return graphics_; }                         // whether the queue also draws
    // Whether pipelines report their compiled statistics (VK_KHR_pipeline_executable_properties).
    bool pipeline_statistics() const { return vkd_.vkGetPipelineExecutableStatisticsKHR != nullptr; }
    const DeviceFunctions& vk() const { return vkd_; }
    VkInstance instance() const { return instance_; }
    VkPhysicalDevice physical_device() const { return physical_; }
    VkDevice device() const { return device_; }
    VkCommandBuffer commands() const { return commands_; }

    // A buffer in memory with all of `required` properties, preferring memory that also has `preferred`; host-visible
    // buffers are mapped. On failure nothing is left allocated.
    Status create_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred, Buffer& out);
    // A device-local storage buffer holding `size` bytes of `data` (through a staging buffer).
    Status create_device_buffer(const void* data, VkDeviceSize size, VkBufferUsageFlags usage, Buffer& out);
    void destroy(Buffer& b);

    // Recording into commands() and running it to completion.
    Status begin();
    Status submit_and_wait();
    void barrier(VkPipelineStageFlags from, VkAccessFlags from_access, VkPipelineStageFlags to,
                 VkAccessFlags to_access);
    // A layout transition of every mip of a colour image, after `from` / `from_access`, before `to` / `to_access`.
    void image_barrier(VkImage image, uint32_t mips, VkImageLayout old_layout, VkImageLayout new_layout,
                       VkPipelineStageFlags from, VkAccessFlags from_access, VkPipelineStageFlags to,
                       VkAccessFlags to_access);
    // The same, recorded into `commands`.
    void image_barrier(VkCommandBuffer commands, VkImage image, uint32_t mips, VkImageLayout old_layout,
                       VkImageLayout new_layout, VkPipelineStageFlags from, VkAccessFlags from_access,
                       VkPipelineStageFlags to, VkAccessFlags to_access) const;

    // A 2D optimal-tiling device-local image of `mips` levels with its memory (limit_exceeded beyond the device's
    // maxImageDimension2D). On failure nothing is left allocated.
    Status create_image(VkFormat format, uint32_t width, uint32_t height, uint32_t mips, VkImageUsageFlags usage,
                        Image& out);
    void destroy(Image& image);
    bool format_supports(VkFormat format, VkFormatFeatureFlags features) const;

private:
    Context() = default;
    Status create_instance();
    Status open_device(int index);
    // physical_, info_ (index, name, type, API version), limits_ and the memory properties of `physical`; its
    // properties into `properties`. backend_unavailable below Vulkan 1.1, named `label` ("vulkan:0").
    Status describe_physical_device(VkPhysicalDevice physical, int index, const std::string& label,
                                    VkPhysicalDeviceProperties& properties);
    Status make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred, Buffer& out);
    Status make_image(VkFormat format, uint32_t width, uint32_t height, uint32_t mips, VkImageUsageFlags usage,
                      Image& out);
    std::string cooperative_matrix_missing(uint32_t api_version);
    bool has_extension(const char* name) const;  // whether the physical device lists a device extension

    const GlobalFunctions* global_ = nullptr;
    InstanceFunctions vki_;
    DeviceFunctions vkd_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties memory_properties_{};
    VkPhysicalDeviceLimits limits_{};
    float timestamp_period_ns_ = 0;
    bool graphics_ = false;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkCommandBuffer commands_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    bool owns_device_ = true;  // false for an adopted engine device
    VulkanDeviceInfo info_;
};

// One uint32 specialization constant of a pipeline.
struct SpecializationConstant {
    uint32_t id;  // the shader's constant_id
    uint32_t value;
};

// The specialization constants of a shader that includes nmc_decode.glsl, as nmc's shaders declare them: the network's
// shape (GpuModel::shape, ids NMC_CONSTANT_ID onwards; none for an empty shape) and constant 0, the widest layer.
std::vector<SpecializationConstant> decode_constants(const std::vector<uint32_t>& shape, int max_width);

// The VkSpecializationInfo of a list of constants, pointing into this object (which therefore does not move).
struct Specialization {
    explicit Specialization(const std::vector<SpecializationConstant>& constants);
    Specialization(const Specialization&) = delete;
    Specialization& operator=(const Specialization&) = delete;
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<uint32_t> values;
    VkSpecializationInfo info{};
};

// A compute pipeline from embedded SPIR-V with its storage buffers bound (binding i = buffers[i]), uint32
// specialization constants and push constants of `push_bytes`.
class ComputePipeline {
public:
    static Result<std::unique_ptr<ComputePipeline>> create(Context& context, const uint32_t* spirv, size_t spirv_bytes,
                                                           const std::vector<VkBuffer>& buffers,
                                                           const std::vector<SpecializationConstant>& specialization,
                                                           uint32_t push_bytes);
    ~ComputePipeline();
    ComputePipeline(const ComputePipeline&) = delete;
    ComputePipeline& operator=(const ComputePipeline&) = delete;

    // The driver's statistics of the compiled shader ("Register Count 64, Local Memory Size 0, ..."), or "" where the
    // device does not report them (Context::pipeline_statistics).
    std::string statistics() const;

    // Records binding, the push constants and a dispatch of `groups` workgroups into context.commands() or
    // `commands`.
    void record_dispatch(const void* push, uint32_t groups) const;
    void record_dispatch(VkCommandBuffer commands, const void* push, uint32_t groups) const;

private:
    explicit ComputePipeline(Context& context) : context_(context) {}
    Context& context_;
    uint32_t push_bytes_ = 0;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
};

}  // namespace nmc::vulkan_detail
