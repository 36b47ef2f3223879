// VulkanDecoder: device selection, the upload of the model buffer, the whole-mip compute pipeline and its dispatches
// in row chunks (each within Vulkan's guaranteed dispatch size), and the read-back of the channel planes.
#include "runtime/vulkan/vulkan_decoder.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "decoder/cpu/reference_math.h"
#include "runtime/vulkan/gpu_model.h"
#include "runtime/vulkan/shaders/model_layout.h"
#include "runtime/vulkan/vulkan_api.h"

// SPIR-V compiled from runtime/vulkan/shaders at build time (runtime/vulkan/CMakeLists.txt).
#include <cstdint>  // the SPIR-V arrays are uint32_t
#include "runtime/vulkan/spirv/decode_mip_coopmat.h"
#include "runtime/vulkan/spirv/decode_mip_scalar.h"

namespace nmc {
namespace vulkan_detail {
namespace {

constexpr uint32_t kWorkgroupSize = 64;  // decode_mip_scalar.comp's and decode_mip_coopmat.comp's local_size_x
constexpr uint32_t kCooperativeSubgroupSize = 32;         // decode_mip_coopmat.comp's kSubgroup
constexpr uint32_t kCooperativeTile = 16;                 // its M, N and K
constexpr uint64_t kMaxGroupsPerDispatch = 65535;         // maxComputeWorkGroupCount[0]'s guaranteed minimum
constexpr uint64_t kMaxChunkBytes = uint64_t{256} << 20;  // the output buffer of one dispatch

struct PushConstants {
    uint32_t mip;
    uint32_t first_row;
    uint32_t row_count;
    uint32_t plane_stride;
};

Status vulkan_error(const char* call, VkResult result) {
    return Status(StatusCode::io_error, std::string("Vulkan: ") + call + " failed (" + result_name(result) + ")");
}

#define NMC_VK(call)                                                                               \
    do {                                                                                           \
        const VkResult nmc_vk_result = (call);                                                     \
        if (nmc_vk_result != VK_SUCCESS) return vulkan_detail::vulkan_error(#call, nmc_vk_result); \
    } while (0)

const char* device_type_name(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return "discrete GPU";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return "integrated GPU";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return "virtual GPU";
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            return "CPU";
        default:
            return "other";
    }
}

std::string version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

// GPU types first, in this order; the loader's order within a type.
int device_type_rank(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return 2;
        default:
            return 3;
    }
}

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

}  // namespace

// An instance, one device and everything the decoder made on it; destroyed in reverse order of creation.
struct Session {
    const GlobalFunctions* global = nullptr;
    InstanceFunctions vki;
    DeviceFunctions vkd;
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties memory_properties{};
    float timestamp_period_ns = 0;  // 0: the queue has no timestamps
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    VkCommandPool command_pool = VK_NULL_HANDLE;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet descriptor_set = VK_NULL_HANDLE;
    VkQueryPool timestamps = VK_NULL_HANDLE;
    Buffer model;     // device-local: the GPU model buffer
    Buffer output;    // device-local: one chunk's channel planes
    Buffer readback;  // host-visible: output copied back
    uint64_t chunk_texels = 0;

    VulkanDeviceInfo info;
    VulkanNetworkPath path = VulkanNetworkPath::scalar;
    MaterialInfo material;
    std::vector<TextureLayout> textures;
    int channel_count = 0;
    mutable std::mutex mutex;  // one submission at a time

    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() {
        if (device != VK_NULL_HANDLE) {
            for (Buffer* b : {&readback, &output, &model}) destroy(*b);
            if (timestamps != VK_NULL_HANDLE) vkd.vkDestroyQueryPool(device, timestamps, nullptr);
            if (descriptor_pool != VK_NULL_HANDLE) vkd.vkDestroyDescriptorPool(device, descriptor_pool, nullptr);
            if (pipeline != VK_NULL_HANDLE) vkd.vkDestroyPipeline(device, pipeline, nullptr);
            if (pipeline_layout != VK_NULL_HANDLE) vkd.vkDestroyPipelineLayout(device, pipeline_layout, nullptr);
            if (set_layout != VK_NULL_HANDLE) vkd.vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
            if (fence != VK_NULL_HANDLE) vkd.vkDestroyFence(device, fence, nullptr);
            if (command_pool != VK_NULL_HANDLE) vkd.vkDestroyCommandPool(device, command_pool, nullptr);
            vkd.vkDestroyDevice(device, nullptr);
        }
        if (instance != VK_NULL_HANDLE) vki.vkDestroyInstance(instance, nullptr);
    }

    void destroy(Buffer& b) {
        if (b.mapped != nullptr) vkd.vkUnmapMemory(device, b.memory);
        if (b.buffer != VK_NULL_HANDLE) vkd.vkDestroyBuffer(device, b.buffer, nullptr);
        if (b.memory != VK_NULL_HANDLE) vkd.vkFreeMemory(device, b.memory, nullptr);
        b = Buffer{};
    }

    // A buffer in memory with all of `required` properties, preferring those that also have `preferred`.
    Status create_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred, Buffer& out) {
        auto create = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
        create.size = size;
        create.usage = usage;
        create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        NMC_VK(vkd.vkCreateBuffer(device, &create, nullptr, &out.buffer));
        out.size = size;
        VkMemoryRequirements needs;
        vkd.vkGetBufferMemoryRequirements(device, out.buffer, &needs);
        int chosen = -1;
        for (int pass = 0; pass < 2 && chosen < 0; ++pass) {
            const VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
            for (uint32_t i = 0; i < memory_properties.memoryTypeCount; ++i) {
                if ((needs.memoryTypeBits & (1u << i)) != 0 &&
                    (memory_properties.memoryTypes[i].propertyFlags & want) == want) {
                    chosen = static_cast<int>(i);
                    break;
                }
            }
        }
        if (chosen < 0)
            return Status(StatusCode::io_error,
                          "Vulkan: no memory type for a buffer of " + std::to_string(size) + " bytes on " + info.name);
        auto allocate = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
        allocate.allocationSize = needs.size;
        allocate.memoryTypeIndex = static_cast<uint32_t>(chosen);
        NMC_VK(vkd.vkAllocateMemory(device, &allocate, nullptr, &out.memory));
        NMC_VK(vkd.vkBindBufferMemory(device, out.buffer, out.memory, 0));
        if ((required & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0)
            NMC_VK(vkd.vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped));
        return Status::success();
    }

    Status begin() {
        NMC_VK(vkd.vkResetCommandBuffer(commands, 0));
        auto begin_info = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
        begin_info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        NMC_VK(vkd.vkBeginCommandBuffer(commands, &begin_info));
        return Status::success();
    }

    Status submit_and_wait() {
        NMC_VK(vkd.vkEndCommandBuffer(commands));
        NMC_VK(vkd.vkResetFences(device, 1, &fence));
        auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &commands;
        NMC_VK(vkd.vkQueueSubmit(queue, 1, &submit, fence));
        NMC_VK(vkd.vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
        return Status::success();
    }

    void barrier(VkPipelineStageFlags from, VkAccessFlags from_access, VkPipelineStageFlags to,
                 VkAccessFlags to_access) {
        auto b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
        b.srcAccessMask = from_access;
        b.dstAccessMask = to_access;
        vkd.vkCmdPipelineBarrier(commands, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
    }

    // Rows of mip `mip` decoded by one dispatch.
    int chunk_rows(int mip) const {
        const uint64_t w = static_cast<uint64_t>(material.mip_width(mip));
        return static_cast<int>(
            std::clamp<uint64_t>(chunk_texels / w, 1, static_cast<uint64_t>(material.mip_height(mip))));
    }

    // Records the dispatch of rows [first_row, first_row + rows) of mip `mip` into the output buffer.
    void record_dispatch(int mip, int first_row, int rows) {
        const uint32_t w = static_cast<uint32_t>(material.mip_width(mip));
        const uint32_t texels = w * static_cast<uint32_t>(rows);
        const PushConstants push{static_cast<uint32_t>(mip), static_cast<uint32_t>(first_row),
                                 static_cast<uint32_t>(rows), texels};
        vkd.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkd.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout, 0, 1, &descriptor_set, 0,
                                    nullptr);
        vkd.vkCmdPushConstants(commands, pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
        vkd.vkCmdDispatch(commands, (texels + kWorkgroupSize - 1) / kWorkgroupSize, 1, 1);
    }

    Status open(int requested_device, VulkanNetworkPath requested_path);
    std::string cooperative_matrix_missing(uint32_t api_version);
    Status upload(const GpuModel& gpu_model);
    Status create_pipeline(int max_width);
};

// Why the device cannot run decode_mip_coopmat.comp, or "" when it can: VK_NV_cooperative_matrix with 16x16x16
// binary16 x binary16 + float32 subgroup matrices, binary16 arithmetic and 16-bit storage buffers (Vulkan 1.2), and
// subgroups of 32 in compute shaders.
std::string Session::cooperative_matrix_missing(uint32_t api_version) {
    uint32_t count = 0;
    vki.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vki.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
    bool listed = false;
    for (const VkExtensionProperties& e : extensions)
        listed = listed || std::strcmp(e.extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;
    if (!listed || vki.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV == nullptr)
        return "the device has no " VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (api_version < VK_API_VERSION_1_2) return "the device supports Vulkan " + info.api_version + ", not 1.2";
    auto matrix_features = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
    auto storage16 =
        vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto float16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    matrix_features.pNext = &storage16;
    storage16.pNext = &float16;
    auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    features.pNext = &matrix_features;
    vki.vkGetPhysicalDeviceFeatures2(physical, &features);
    if (!matrix_features.cooperativeMatrix) return "cooperativeMatrix is not supported";
    if (!storage16.storageBuffer16BitAccess) return "storageBuffer16BitAccess is not supported";
    if (!float16.shaderFloat16) return "shaderFloat16 is not supported";
    auto subgroup =
        vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    auto properties = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    properties.pNext = &subgroup;
    vki.vkGetPhysicalDeviceProperties2(physical, &properties);
    if (subgroup.subgroupSize != kCooperativeSubgroupSize)
        return "subgroups are " + std::to_string(subgroup.subgroupSize) + " invocations, not 32";
    count = 0;
    vki.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical, &count, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(
        count, vk_struct<VkCooperativeMatrixPropertiesNV>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV));
    vki.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical, &count, shapes.data());
    for (const VkCooperativeMatrixPropertiesNV& m : shapes) {
        if (m.MSize == kCooperativeTile && m.NSize == kCooperativeTile && m.KSize == kCooperativeTile &&
            m.AType == VK_COMPONENT_TYPE_FLOAT16_NV && m.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
            m.CType == VK_COMPONENT_TYPE_FLOAT32_NV && m.DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
            m.scope == VK_SCOPE_SUBGROUP_NV)
            return "";
    }
    return "no 16x16x16 float16 x float16 + float32 subgroup matrix among its " + std::to_string(count) + " shapes";
}

Status Session::open(int requested_device, VulkanNetworkPath requested_path) {
    Result<const GlobalFunctions*> loaded = load_vulkan();
    if (!loaded.ok()) return loaded.status();
    global = loaded.value();
    uint32_t loader_version = VK_API_VERSION_1_0;
    NMC_VK(global->vkEnumerateInstanceVersion(&loader_version));
    if (loader_version < VK_API_VERSION_1_1)
        return Status(StatusCode::backend_unavailable,
                      "the Vulkan loader is version " + version_string(loader_version) + "; nmc needs Vulkan 1.1");
    auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "nmc";
    app.apiVersion = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
    auto create = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    create.pApplicationInfo = &app;
    const VkResult made = global->vkCreateInstance(&create, nullptr, &instance);
    if (made != VK_SUCCESS)
        return Status(StatusCode::backend_unavailable,
                      std::string("Vulkan: no instance (") + result_name(made) + "): is a Vulkan driver installed?");
    NMC_RETURN_IF_ERROR(load_instance_functions(*global, instance, vki));

    uint32_t count = 0;
    NMC_VK(vki.vkEnumeratePhysicalDevices(instance, &count, nullptr));
    std::vector<VkPhysicalDevice> devices(count);
    NMC_VK(vki.vkEnumeratePhysicalDevices(instance, &count, devices.data()));
    devices.resize(count);
    if (devices.empty()) return Status(StatusCode::backend_unavailable, "Vulkan: no device found");
    int index = requested_device;
    if (index < 0) {
        int best_rank = 4;
        for (size_t i = 0; i < devices.size(); ++i) {
            VkPhysicalDeviceProperties p;
            vki.vkGetPhysicalDeviceProperties(devices[i], &p);
            if (device_type_rank(p.deviceType) < best_rank) {
                best_rank = device_type_rank(p.deviceType);
                index = static_cast<int>(i);
            }
        }
    }
    if (index >= static_cast<int>(devices.size()))
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(index) + ": no such Vulkan device (" +
                                                           std::to_string(devices.size()) + " found)");
    physical = devices[static_cast<size_t>(index)];
    VkPhysicalDeviceProperties properties;
    vki.vkGetPhysicalDeviceProperties(physical, &properties);
    info.index = index;
    info.name = properties.deviceName;
    info.type = device_type_name(properties.deviceType);
    info.api_version = version_string(properties.apiVersion);
    if (properties.apiVersion < VK_API_VERSION_1_1)
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(index) + " (" + info.name +
                                                           ") supports Vulkan " + info.api_version + "; nmc needs 1.1");
    vki.vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);

    uint32_t family_count = 0;
    vki.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vki.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
    bool found = false;
    for (uint32_t i = 0; i < family_count && !found; ++i) {
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
            queue_family = i;
            found = true;
            if (families[i].timestampValidBits > 0) timestamp_period_ns = properties.limits.timestampPeriod;
        }
    }
    if (!found)
        return Status(StatusCode::backend_unavailable,
                      "vulkan:" + std::to_string(index) + " (" + info.name + ") has no compute queue");

    // The network path: the cooperative-matrix one where asked for or, by default, where the device has it.
    const std::string missing = cooperative_matrix_missing(properties.apiVersion);
    info.cooperative_matrix = missing.empty();
    info.cooperative_matrix_detail = missing.empty() ? "16x16x16 fp16 -> fp32, subgroups of 32" : missing;
    if (requested_path == VulkanNetworkPath::cooperative_matrix && !info.cooperative_matrix)
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(index) + " (" + info.name +
                                                           ") cannot run the cooperative-matrix path: " + missing);
    path = requested_path == VulkanNetworkPath::scalar || !info.cooperative_matrix
               ? VulkanNetworkPath::scalar
               : VulkanNetworkPath::cooperative_matrix;

    const float priority = 1.0f;
    auto queue_info = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queue_info.queueFamilyIndex = queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    auto device_info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    auto matrix_features = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
    auto storage16 =
        vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto float16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    const char* extension = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (path == VulkanNetworkPath::cooperative_matrix) {
        matrix_features.cooperativeMatrix = VK_TRUE;
        storage16.storageBuffer16BitAccess = VK_TRUE;
        float16.shaderFloat16 = VK_TRUE;
        matrix_features.pNext = &storage16;
        storage16.pNext = &float16;
        device_info.pNext = &matrix_features;
        device_info.enabledExtensionCount = 1;
        device_info.ppEnabledExtensionNames = &extension;
    }
    NMC_VK(vki.vkCreateDevice(physical, &device_info, nullptr, &device));
    NMC_RETURN_IF_ERROR(load_device_functions(vki, device, vkd));
    vkd.vkGetDeviceQueue(device, queue_family, 0, &queue);

    auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queue_family;
    NMC_VK(vkd.vkCreateCommandPool(device, &pool, nullptr, &command_pool));
    auto allocate = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    allocate.commandPool = command_pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    NMC_VK(vkd.vkAllocateCommandBuffers(device, &allocate, &commands));
    auto fence_info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    NMC_VK(vkd.vkCreateFence(device, &fence_info, nullptr, &fence));
    return Status::success();
}

Status Session::upload(const GpuModel& gpu_model) {
    const VkDeviceSize model_bytes = gpu_model.words.size() * sizeof(uint32_t);
    VkPhysicalDeviceProperties properties;
    vki.vkGetPhysicalDeviceProperties(physical, &properties);
    if (model_bytes > properties.limits.maxStorageBufferRange)
        return Status(StatusCode::limit_exceeded, "vulkan:" + std::to_string(info.index) + " (" + info.name +
                                                      "): the pack's model buffer is " + std::to_string(model_bytes) +
                                                      " bytes, beyond the device's storage buffer range of " +
                                                      std::to_string(properties.limits.maxStorageBufferRange));
    // One chunk's output: whole rows, at most kMaxGroupsPerDispatch groups and kMaxChunkBytes (and the device's range).
    const uint64_t plane_bytes = sizeof(float) * static_cast<uint64_t>(channel_count);
    const uint64_t max_bytes = std::min<uint64_t>(kMaxChunkBytes, properties.limits.maxStorageBufferRange);
    chunk_texels = std::min<uint64_t>(kMaxGroupsPerDispatch * kWorkgroupSize, max_bytes / plane_bytes);
    uint64_t output_texels = 0;
    for (int m = 0; m < material.mip_count; ++m)
        output_texels = std::max<uint64_t>(
            output_texels, static_cast<uint64_t>(chunk_rows(m)) * static_cast<uint64_t>(material.mip_width(m)));
    const VkDeviceSize output_bytes = output_texels * plane_bytes;

    Buffer staging;
    NMC_RETURN_IF_ERROR(create_buffer(model_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                      staging));
    std::memcpy(staging.mapped, gpu_model.words.data(), model_bytes);
    Status status = create_buffer(model_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, model);
    if (status.ok()) status = begin();
    if (status.ok()) {
        const VkBufferCopy region{0, 0, model_bytes};
        vkd.vkCmdCopyBuffer(commands, staging.buffer, model.buffer, 1, &region);
        status = submit_and_wait();
    }
    destroy(staging);
    NMC_RETURN_IF_ERROR(status);
    NMC_RETURN_IF_ERROR(create_buffer(output_bytes,
                                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                                      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, output));
    return create_buffer(output_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT, readback);
}

Status Session::create_pipeline(int max_width) {
    // Bindings: 0 the model buffer, 1 the output, and for the cooperative-matrix path 2 the model buffer again (its
    // binary16 weights).
    const bool cooperative = path == VulkanNetworkPath::cooperative_matrix;
    const uint32_t binding_count = cooperative ? 3 : 2;
    VkDescriptorSetLayoutBinding bindings[3]{};
    for (uint32_t i = 0; i < binding_count; ++i) {
        bindings[i].binding = i;
        bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    auto set_info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set_info.bindingCount = binding_count;
    set_info.pBindings = bindings;
    NMC_VK(vkd.vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout));
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    auto layout_info = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    NMC_VK(vkd.vkCreatePipelineLayout(device, &layout_info, nullptr, &pipeline_layout));

    auto module_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module_info.codeSize = cooperative ? sizeof(nmc_spirv_decode_mip_coopmat) : sizeof(nmc_spirv_decode_mip_scalar);
    module_info.pCode = cooperative ? nmc_spirv_decode_mip_coopmat : nmc_spirv_decode_mip_scalar;
    VkShaderModule module = VK_NULL_HANDLE;
    NMC_VK(vkd.vkCreateShaderModule(device, &module_info, nullptr, &module));
    // Specialization constants: 0 the widest layer, 1 (cooperative-matrix path) that width padded to 16.
    const uint32_t widths[2] = {static_cast<uint32_t>(max_width), NMC_PADDED(static_cast<uint32_t>(max_width))};
    const VkSpecializationMapEntry entries[2] = {{0, 0, sizeof(uint32_t)}, {1, sizeof(uint32_t), sizeof(uint32_t)}};
    VkSpecializationInfo specialization{cooperative ? 2u : 1u, entries, sizeof(widths), widths};
    auto pipeline_info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.stage.pSpecializationInfo = &specialization;
    pipeline_info.layout = pipeline_layout;
    const VkResult made = vkd.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline);
    vkd.vkDestroyShaderModule(device, module, nullptr);
    NMC_VK(made);

    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, binding_count};
    auto pool_info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    NMC_VK(vkd.vkCreateDescriptorPool(device, &pool_info, nullptr, &descriptor_pool));
    auto allocate = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocate.descriptorPool = descriptor_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    NMC_VK(vkd.vkAllocateDescriptorSets(device, &allocate, &descriptor_set));
    const VkDescriptorBufferInfo buffers[3] = {
        {model.buffer, 0, VK_WHOLE_SIZE}, {output.buffer, 0, VK_WHOLE_SIZE}, {model.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[3]{};
    for (uint32_t i = 0; i < binding_count; ++i) {
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = descriptor_set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &buffers[i];
    }
    vkd.vkUpdateDescriptorSets(device, binding_count, writes, 0, nullptr);

    if (timestamp_period_ns > 0) {
        auto query_info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
        query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        query_info.queryCount = 2;
        NMC_VK(vkd.vkCreateQueryPool(device, &query_info, nullptr, &timestamps));
    }
    return Status::success();
}

}  // namespace vulkan_detail

using vulkan_detail::Session;

Result<std::vector<VulkanDeviceInfo>> list_vulkan_devices() {
    std::vector<VulkanDeviceInfo> list;
    for (int i = 0;; ++i) {
        Session session;
        const Status opened = session.open(i, VulkanNetworkPath::scalar);
        if (opened.ok()) {
            list.push_back(session.info);
            continue;
        }
        if (i > 0 && opened.message().find("no such Vulkan device") != std::string::npos) break;
        return opened;
    }
    return list;
}

Result<VulkanDecoder> VulkanDecoder::create(const Pack& pack, const VulkanDecoderOptions& options) {
    Result<GpuModel> gpu_model = build_gpu_model(pack);  // the pack's rules first: a bad pack never reaches the GPU
    if (!gpu_model.ok()) return gpu_model.status();
    auto session = std::make_shared<Session>();
    session->material = pack.material;
    session->textures = pack.textures;
    session->channel_count = static_cast<int>(pack.channels.size());
    NMC_RETURN_IF_ERROR(session->open(options.device, options.path));
    NMC_RETURN_IF_ERROR(session->upload(gpu_model.value()));
    NMC_RETURN_IF_ERROR(session->create_pipeline(gpu_model->max_width));
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
    return session_->info;
}

VulkanNetworkPath VulkanDecoder::path() const {
    return session_->path;
}

int VulkanDecoder::channel_count() const {
    return session_->channel_count;
}

Status VulkanDecoder::decode_mip_channels(int mip, std::vector<std::vector<float>>& out) const {
    Session& s = *session_;
    if (mip < 0 || mip >= s.material.mip_count)
        return Status(StatusCode::invalid_argument, "decode_mip_channels: mip " + std::to_string(mip) + " outside 0.." +
                                                        std::to_string(s.material.mip_count - 1));
    const std::lock_guard<std::mutex> lock(s.mutex);
    const size_t w = static_cast<size_t>(s.material.mip_width(mip));
    const int h = s.material.mip_height(mip);
    out.assign(static_cast<size_t>(s.channel_count), std::vector<float>(w * static_cast<size_t>(h)));
    const int rows_per_chunk = s.chunk_rows(mip);
    for (int first = 0; first < h; first += rows_per_chunk) {
        const int rows = std::min(rows_per_chunk, h - first);
        const size_t texels = w * static_cast<size_t>(rows);
        NMC_RETURN_IF_ERROR(s.begin());
        s.record_dispatch(mip, first, rows);
        s.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, texels * sizeof(float) * static_cast<size_t>(s.channel_count)};
        s.vkd.vkCmdCopyBuffer(s.commands, s.output.buffer, s.readback.buffer, 1, &region);
        s.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                  VK_ACCESS_HOST_READ_BIT);
        NMC_RETURN_IF_ERROR(s.submit_and_wait());
        const float* planes = static_cast<const float*>(s.readback.mapped);
        for (size_t c = 0; c < out.size(); ++c)
            std::memcpy(out[c].data() + static_cast<size_t>(first) * w, planes + c * texels, texels * sizeof(float));
    }
    return Status::success();
}

Result<Image> VulkanDecoder::decode_texture(int texture, int mip) const {
    const Session& s = *session_;
    if (texture < 0 || texture >= static_cast<int>(s.textures.size()))
        return Status(StatusCode::invalid_argument, "decode_texture: texture " + std::to_string(texture) +
                                                        " outside 0.." + std::to_string(s.textures.size() - 1));
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
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(s.info.index) + " (" + s.info.name +
                                                           "): its compute queue has no timestamps");
    if (repetitions < 1) return Status(StatusCode::invalid_argument, "time_all_mips_ms: repetitions must be >= 1");
    const std::lock_guard<std::mutex> lock(s.mutex);
    std::vector<double> times;
    for (int run = 0; run <= repetitions; ++run) {  // run 0 warms up
        NMC_RETURN_IF_ERROR(s.begin());
        s.vkd.vkCmdResetQueryPool(s.commands, s.timestamps, 0, 2);
        s.vkd.vkCmdWriteTimestamp(s.commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.timestamps, 0);
        for (int m = 0; m < s.material.mip_count; ++m) {
            const int rows_per_chunk = s.chunk_rows(m);
            for (int first = 0; first < s.material.mip_height(m); first += rows_per_chunk) {
                // Chunks share the output buffer: each waits for the one before it to finish writing.
                if (m > 0 || first > 0)
                    s.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
                s.record_dispatch(m, first, std::min(rows_per_chunk, s.material.mip_height(m) - first));
            }
        }
        s.vkd.vkCmdWriteTimestamp(s.commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps, 1);
        NMC_RETURN_IF_ERROR(s.submit_and_wait());
        uint64_t ticks[2] = {0, 0};
        NMC_VK(s.vkd.vkGetQueryPoolResults(s.device, s.timestamps, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (run > 0) times.push_back(static_cast<double>(ticks[1] - ticks[0]) * s.timestamp_period_ns * 1e-6);
    }
    std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

}  // namespace nmc
