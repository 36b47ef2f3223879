// Context and ComputePipeline (runtime/vulkan/vulkan_context.h).
#include "runtime/vulkan/vulkan_context.h"

#include <cstring>
#include <string>
#include <vector>

#include "runtime/vulkan/shaders/model_layout.h"

namespace nmc::vulkan_detail {
namespace {

constexpr uint32_t kCooperativeSubgroupSize = 32;  // decode_mip_coopmat.comp's kSubgroup
constexpr uint32_t kCooperativeTile = 16;          // its M, N and K

// The features decode_mip_coopmat.comp needs, chained for vkGetPhysicalDeviceFeatures2 and vkCreateDevice.
struct CooperativeMatrixFeatures {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
    VkPhysicalDevice16BitStorageFeatures storage16 =
        vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    VkPhysicalDeviceShaderFloat16Int8Features float16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);

    void* chain() {
        matrix.pNext = &storage16;
        storage16.pNext = &float16;
        float16.pNext = nullptr;
        return &matrix;
    }
};

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

}  // namespace

Status vulkan_error(const char* call, VkResult result) {
    return Status(StatusCode::io_error, std::string("Vulkan: ") + call + " failed (" + result_name(result) + ")");
}

Result<int> Context::device_count() {
    Context probe;
    NMC_RETURN_IF_ERROR(probe.create_instance());
    uint32_t count = 0;
    NMC_VK(probe.vki_.vkEnumeratePhysicalDevices(probe.instance_, &count, nullptr));
    return static_cast<int>(count);
}

Result<std::unique_ptr<Context>> Context::open(int index) {
    std::unique_ptr<Context> context(new Context());
    NMC_RETURN_IF_ERROR(context->open_device(index));
    return context;
}

Result<std::unique_ptr<Context>> Context::adopt(PFN_vkGetInstanceProcAddr get_instance_proc_addr, VkInstance instance,
                                                VkPhysicalDevice physical_device, VkDevice device) {
    if (get_instance_proc_addr == nullptr || instance == VK_NULL_HANDLE || physical_device == VK_NULL_HANDLE ||
        device == VK_NULL_HANDLE)
        return Status(StatusCode::invalid_argument,
                      "the engine's Vulkan device: vkGetInstanceProcAddr, instance, physical device and device are all "
                      "needed");
    std::unique_ptr<Context> context(new Context());
    context->owns_device_ = false;
    GlobalFunctions engine_loader;
    engine_loader.vkGetInstanceProcAddr = get_instance_proc_addr;
    NMC_RETURN_IF_ERROR(load_instance_functions(engine_loader, instance, context->vki_));
    context->instance_ = instance;
    VkPhysicalDeviceProperties properties;
    NMC_RETURN_IF_ERROR(
        context->describe_physical_device(physical_device, -1, "the engine's Vulkan device", properties));
    context->info_.cooperative_matrix_detail = "an engine's device: nmc enables no extension on it";
    context->device_ = device;
    NMC_RETURN_IF_ERROR(load_device_functions(context->vki_, device, context->vkd_));
    return context;
}

Status Context::describe_physical_device(VkPhysicalDevice physical, int index, const std::string& label,
                                         VkPhysicalDeviceProperties& properties) {
    physical_ = physical;
    vki_.vkGetPhysicalDeviceProperties(physical_, &properties);
    info_.index = index;
    info_.name = properties.deviceName;
    info_.type = device_type_name(properties.deviceType);
    info_.api_version = version_string(properties.apiVersion);
    if (properties.apiVersion < VK_API_VERSION_1_1)
        return Status(StatusCode::backend_unavailable,
                      label + " (" + info_.name + ") supports Vulkan " + info_.api_version + "; nmc needs 1.1");
    limits_ = properties.limits;
    vki_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_properties_);
    return Status::success();
}

Context::~Context() {
    if (device_ != VK_NULL_HANDLE && owns_device_) {
        if (fence_ != VK_NULL_HANDLE) vkd_.vkDestroyFence(device_, fence_, nullptr);
        if (command_pool_ != VK_NULL_HANDLE) vkd_.vkDestroyCommandPool(device_, command_pool_, nullptr);
        vkd_.vkDestroyDevice(device_, nullptr);
    }
}

// Why the device cannot run decode_mip_coopmat.comp, or "" when it can: VK_NV_cooperative_matrix with 16x16x16
// binary16 x binary16 + float32 subgroup matrices, binary16 arithmetic and 16-bit storage buffers (Vulkan 1.2), and
// subgroups of 32 in compute shaders.
bool Context::has_extension(const char* name) const {
    uint32_t count = 0;
    vki_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vki_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, extensions.data());
    for (const VkExtensionProperties& e : extensions)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

std::string Context::cooperative_matrix_missing(uint32_t api_version) {
    uint32_t count = 0;
    if (!has_extension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
        vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV == nullptr)
        return "the device has no " VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (api_version < VK_API_VERSION_1_2) return "the device supports Vulkan " + info_.api_version + ", not 1.2";
    CooperativeMatrixFeatures wanted;
    auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    features.pNext = wanted.chain();
    vki_.vkGetPhysicalDeviceFeatures2(physical_, &features);
    if (!wanted.matrix.cooperativeMatrix) return "cooperativeMatrix is not supported";
    if (!wanted.storage16.storageBuffer16BitAccess) return "storageBuffer16BitAccess is not supported";
    if (!wanted.float16.shaderFloat16) return "shaderFloat16 is not supported";
    auto subgroup =
        vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
    auto properties = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    properties.pNext = &subgroup;
    vki_.vkGetPhysicalDeviceProperties2(physical_, &properties);
    if (subgroup.subgroupSize != kCooperativeSubgroupSize)
        return "subgroups are " + std::to_string(subgroup.subgroupSize) + " invocations, not 32";
    count = 0;
    vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical_, &count, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(
        count, vk_struct<VkCooperativeMatrixPropertiesNV>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV));
    vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical_, &count, shapes.data());
    for (const VkCooperativeMatrixPropertiesNV& m : shapes) {
        if (m.MSize == kCooperativeTile && m.NSize == kCooperativeTile && m.KSize == kCooperativeTile &&
            m.AType == VK_COMPONENT_TYPE_FLOAT16_NV && m.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
            m.CType == VK_COMPONENT_TYPE_FLOAT32_NV && m.DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
            m.scope == VK_SCOPE_SUBGROUP_NV)
            return "";
    }
    return "no 16x16x16 float16 x float16 + float32 subgroup matrix among its " + std::to_string(count) + " shapes";
}

namespace {

// The process's one VkInstance, made on first use and never destroyed, as the loader is never closed (load_vulkan).
// Every Context used to make and destroy its own: in a test process that had done so a few dozen times, NVIDIA's
// driver 580 refused the next one (VK_ERROR_INCOMPATIBLE_DRIVER). Contexts share it; each has its own VkDevice.
struct SharedInstance {
    Status status = Status::success();
    const GlobalFunctions* global = nullptr;
    VkInstance instance = VK_NULL_HANDLE;
    InstanceFunctions functions{};
};

SharedInstance make_shared_instance() {
    SharedInstance shared;
    Result<const GlobalFunctions*> loaded = load_vulkan();
    if (!loaded.ok()) {
        shared.status = loaded.status();
        return shared;
    }
    shared.global = loaded.value();
    uint32_t loader_version = VK_API_VERSION_1_0;
    const VkResult version = shared.global->vkEnumerateInstanceVersion(&loader_version);
    if (version != VK_SUCCESS) {
        shared.status = vulkan_error("vkEnumerateInstanceVersion", version);
        return shared;
    }
    if (loader_version < VK_API_VERSION_1_1) {
        shared.status = Status(StatusCode::backend_unavailable, "the Vulkan loader is version " +
                                                                     version_string(loader_version) +
                                                                     "; nmc needs Vulkan 1.1");
        return shared;
    }
    auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "nmc";
    app.apiVersion = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
    auto create = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    create.pApplicationInfo = &app;
    const VkResult made = shared.global->vkCreateInstance(&create, nullptr, &shared.instance);
    if (made != VK_SUCCESS) {
        shared.instance = VK_NULL_HANDLE;
        shared.status = Status(StatusCode::backend_unavailable,
                               std::string("Vulkan: no instance (") + result_name(made) + "): is a Vulkan driver installed?");
        return shared;
    }
    shared.status = load_instance_functions(*shared.global, shared.instance, shared.functions);
    return shared;
}

}  // namespace

Status Context::create_instance() {
    static const SharedInstance shared = make_shared_instance();  // thread-safe initialisation
    if (!shared.status.ok()) return shared.status;
    global_ = shared.global;
    instance_ = shared.instance;
    vki_ = shared.functions;
    return Status::success();
}

Status Context::open_device(int requested_device) {
    NMC_RETURN_IF_ERROR(create_instance());
    uint32_t count = 0;
    NMC_VK(vki_.vkEnumeratePhysicalDevices(instance_, &count, nullptr));
    std::vector<VkPhysicalDevice> devices(count);
    NMC_VK(vki_.vkEnumeratePhysicalDevices(instance_, &count, devices.data()));
    devices.resize(count);
    if (devices.empty()) return Status(StatusCode::backend_unavailable, "Vulkan: no device found");
    int index = requested_device;
    if (index < 0) {
        int best_rank = 4;
        for (size_t i = 0; i < devices.size(); ++i) {
            VkPhysicalDeviceProperties p;
            vki_.vkGetPhysicalDeviceProperties(devices[i], &p);
            if (device_type_rank(p.deviceType) < best_rank) {
                best_rank = device_type_rank(p.deviceType);
                index = static_cast<int>(i);
            }
        }
    }
    if (index >= static_cast<int>(devices.size()))
        return Status(StatusCode::backend_unavailable, "vulkan:" + std::to_string(index) + ": no such Vulkan device (" +
                                                           std::to_string(devices.size()) + " found)");
    VkPhysicalDeviceProperties properties;
    NMC_RETURN_IF_ERROR(
        describe_physical_device(devices[static_cast<size_t>(index)], index, "vulkan:" + std::to_string(index),
                                 properties));

    uint32_t family_count = 0;
    vki_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vki_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
    // A compute queue, one that also draws where the device has one (the render bench's).
    bool found = false;
    for (int pass = 0; pass < 2 && !found; ++pass) {
        const VkQueueFlags want = pass == 0 ? VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT : VK_QUEUE_COMPUTE_BIT;
        for (uint32_t i = 0; i < family_count && !found; ++i) {
            if ((families[i].queueFlags & want) == want) {
                queue_family_ = i;
                found = true;
                graphics_ = (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
                if (families[i].timestampValidBits > 0) timestamp_period_ns_ = properties.limits.timestampPeriod;
            }
        }
    }
    if (!found)
        return Status(StatusCode::backend_unavailable,
                      "vulkan:" + std::to_string(index) + " (" + info_.name + ") has no compute queue");

    // The cooperative-matrix pipeline's extension and features, enabled below where the device has them.
    const std::string missing = cooperative_matrix_missing(properties.apiVersion);
    info_.cooperative_matrix = missing.empty();
    info_.cooperative_matrix_detail = missing.empty() ? "16x16x16 fp16 -> fp32, subgroups of 32" : missing;

    const float priority = 1.0f;
    auto queue_info = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queue_info.queueFamilyIndex = queue_family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    auto device_info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    CooperativeMatrixFeatures enabled;
    std::vector<const char*> extensions;
    if (info_.cooperative_matrix) {
        enabled.matrix.cooperativeMatrix = VK_TRUE;
        enabled.storage16.storageBuffer16BitAccess = VK_TRUE;
        enabled.float16.shaderFloat16 = VK_TRUE;
        device_info.pNext = enabled.chain();
        extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    // The compiled pipelines' statistics (registers, local memory) where the driver reports them: for benchmarks.
    auto executable_info = vk_struct<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
    if (has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
        executable_info.pipelineExecutableInfo = VK_TRUE;
        executable_info.pNext = const_cast<void*>(device_info.pNext);
        device_info.pNext = &executable_info;
        extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
    device_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    device_info.ppEnabledExtensionNames = extensions.data();
    NMC_VK(vki_.vkCreateDevice(physical_, &device_info, nullptr, &device_));
    NMC_RETURN_IF_ERROR(load_device_functions(vki_, device_, vkd_));
    if (executable_info.pipelineExecutableInfo == VK_TRUE) {
        vkd_.vkGetPipelineExecutablePropertiesKHR = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
            vki_.vkGetDeviceProcAddr(device_, "vkGetPipelineExecutablePropertiesKHR"));
        vkd_.vkGetPipelineExecutableStatisticsKHR = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
            vki_.vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));
        if (vkd_.vkGetPipelineExecutablePropertiesKHR == nullptr) vkd_.vkGetPipelineExecutableStatisticsKHR = nullptr;
    }
    vkd_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

    auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queue_family_;
    NMC_VK(vkd_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool_));
    auto allocate = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    allocate.commandPool = command_pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    NMC_VK(vkd_.vkAllocateCommandBuffers(device_, &allocate, &commands_));
    auto fence_info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    NMC_VK(vkd_.vkCreateFence(device_, &fence_info, nullptr, &fence_));
    return Status::success();
}

void Context::destroy(Buffer& b) {
    if (b.mapped != nullptr) vkd_.vkUnmapMemory(device_, b.memory);
    if (b.buffer != VK_NULL_HANDLE) vkd_.vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.memory != VK_NULL_HANDLE) vkd_.vkFreeMemory(device_, b.memory, nullptr);
    b = Buffer{};
}

Status Context::create_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred, Buffer& out) {
    const Status made = make_buffer(size, usage, required, preferred, out);
    if (!made.ok()) destroy(out);  // what was made before the failure
    return made;
}

Status Context::make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred, Buffer& out) {
    auto create = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    create.size = size;
    create.usage = usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    NMC_VK(vkd_.vkCreateBuffer(device_, &create, nullptr, &out.buffer));
    out.size = size;
    VkMemoryRequirements needs;
    vkd_.vkGetBufferMemoryRequirements(device_, out.buffer, &needs);
    int chosen = -1;
    for (int pass = 0; pass < 2 && chosen < 0; ++pass) {
        const VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
        for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
            if ((needs.memoryTypeBits & (1u << i)) != 0 &&
                (memory_properties_.memoryTypes[i].propertyFlags & want) == want) {
                chosen = static_cast<int>(i);
                break;
            }
        }
    }
    if (chosen < 0)
        return Status(StatusCode::io_error,
                      "Vulkan: no memory type for a buffer of " + std::to_string(size) + " bytes on " + info_.name);
    auto allocate = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = static_cast<uint32_t>(chosen);
    NMC_VK(vkd_.vkAllocateMemory(device_, &allocate, nullptr, &out.memory));
    NMC_VK(vkd_.vkBindBufferMemory(device_, out.buffer, out.memory, 0));
    if ((required & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0)
        NMC_VK(vkd_.vkMapMemory(device_, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped));
    return Status::success();
}

Status Context::begin() {
    if (commands_ == VK_NULL_HANDLE)
        return Status(StatusCode::internal, "Vulkan: an adopted engine device records into the engine's commands");
    NMC_VK(vkd_.vkResetCommandBuffer(commands_, 0));
    auto begin_info = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin_info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    NMC_VK(vkd_.vkBeginCommandBuffer(commands_, &begin_info));
    return Status::success();
}

Status Context::submit_and_wait() {
    NMC_VK(vkd_.vkEndCommandBuffer(commands_));
    NMC_VK(vkd_.vkResetFences(device_, 1, &fence_));
    auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    NMC_VK(vkd_.vkQueueSubmit(queue_, 1, &submit, fence_));
    NMC_VK(vkd_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX));
    return Status::success();
}

void Context::barrier(VkPipelineStageFlags from, VkAccessFlags from_access, VkPipelineStageFlags to,
                      VkAccessFlags to_access) {
    auto b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    b.srcAccessMask = from_access;
    b.dstAccessMask = to_access;
    vkd_.vkCmdPipelineBarrier(commands_, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void Context::image_barrier(VkImage image, uint32_t mips, VkImageLayout old_layout, VkImageLayout new_layout,
                            VkPipelineStageFlags from, VkAccessFlags from_access, VkPipelineStageFlags to,
                            VkAccessFlags to_access) {
    image_barrier(commands_, image, mips, old_layout, new_layout, from, from_access, to, to_access);
}

void Context::image_barrier(VkCommandBuffer commands, VkImage image, uint32_t mips, VkImageLayout old_layout,
                            VkImageLayout new_layout, VkPipelineStageFlags from, VkAccessFlags from_access,
                            VkPipelineStageFlags to, VkAccessFlags to_access) const {
    auto b = vk_struct<VkImageMemoryBarrier>(VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER);
    b.srcAccessMask = from_access;
    b.dstAccessMask = to_access;
    b.oldLayout = old_layout;
    b.newLayout = new_layout;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, mips, 0, 1};
    vkd_.vkCmdPipelineBarrier(commands, from, to, 0, 0, nullptr, 0, nullptr, 1, &b);
}

bool Context::format_supports(VkFormat format, VkFormatFeatureFlags features) const {
    VkFormatProperties properties;
    vki_.vkGetPhysicalDeviceFormatProperties(physical_, format, &properties);
    return (properties.optimalTilingFeatures & features) == features;
}

Status Context::create_image(VkFormat format, uint32_t width, uint32_t height, uint32_t mips, VkImageUsageFlags usage,
                             Image& out) {
    if (width > limits_.maxImageDimension2D || height > limits_.maxImageDimension2D)
        return Status(StatusCode::limit_exceeded, "vulkan:" + std::to_string(info_.index) + " (" + info_.name +
                                                      "): a " + std::to_string(width) + "x" + std::to_string(height) +
                                                      " image exceeds the device's " +
                                                      std::to_string(limits_.maxImageDimension2D) + " texels");
    const Status made = make_image(format, width, height, mips, usage, out);
    if (!made.ok()) destroy(out);
    return made;
}

Status Context::make_image(VkFormat format, uint32_t width, uint32_t height, uint32_t mips, VkImageUsageFlags usage,
                           Image& out) {
    auto create = vk_struct<VkImageCreateInfo>(VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO);
    create.imageType = VK_IMAGE_TYPE_2D;
    create.format = format;
    create.extent = {width, height, 1};
    create.mipLevels = mips;
    create.arrayLayers = 1;
    create.samples = VK_SAMPLE_COUNT_1_BIT;
    create.tiling = VK_IMAGE_TILING_OPTIMAL;
    create.usage = usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    create.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    NMC_VK(vkd_.vkCreateImage(device_, &create, nullptr, &out.image));
    VkMemoryRequirements needs;
    vkd_.vkGetImageMemoryRequirements(device_, out.image, &needs);
    int chosen = -1;
    for (uint32_t i = 0; i < memory_properties_.memoryTypeCount && chosen < 0; ++i)
        if ((needs.memoryTypeBits & (1u << i)) != 0) chosen = static_cast<int>(i);
    for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
        if ((needs.memoryTypeBits & (1u << i)) != 0 &&
            (memory_properties_.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0) {
            chosen = static_cast<int>(i);
            break;
        }
    }
    if (chosen < 0) return Status(StatusCode::io_error, "Vulkan: no memory type for an image on " + info_.name);
    auto allocate = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = static_cast<uint32_t>(chosen);
    NMC_VK(vkd_.vkAllocateMemory(device_, &allocate, nullptr, &out.memory));
    NMC_VK(vkd_.vkBindImageMemory(device_, out.image, out.memory, 0));
    return Status::success();
}

void Context::destroy(Image& image) {
    if (image.image != VK_NULL_HANDLE) vkd_.vkDestroyImage(device_, image.image, nullptr);
    if (image.memory != VK_NULL_HANDLE) vkd_.vkFreeMemory(device_, image.memory, nullptr);
    image = Image{};
}

Status Context::create_device_buffer(const void* data, VkDeviceSize size, VkBufferUsageFlags usage, Buffer& out) {
    Buffer staging;
    NMC_RETURN_IF_ERROR(create_buffer(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                      staging));
    std::memcpy(staging.mapped, data, size);
    Status status =
        create_buffer(size, usage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, out);
    if (status.ok()) status = begin();
    if (status.ok()) {
        const VkBufferCopy region{0, 0, size};
        vkd_.vkCmdCopyBuffer(commands_, staging.buffer, out.buffer, 1, &region);
        status = submit_and_wait();
    }
    destroy(staging);
    return status;
}

std::vector<SpecializationConstant> decode_constants(const std::vector<uint32_t>& shape, int max_width) {
    std::vector<SpecializationConstant> constants;
    for (size_t i = 0; i < shape.size(); ++i)
        constants.push_back({NMC_DEFAULT_CONSTANT_ID + static_cast<uint32_t>(i), shape[i]});
    constants.push_back({0, static_cast<uint32_t>(max_width)});
    return constants;
}

Specialization::Specialization(const std::vector<SpecializationConstant>& constants) {
    for (const SpecializationConstant& c : constants) {
        entries.push_back({c.id, static_cast<uint32_t>(values.size() * sizeof(uint32_t)), sizeof(uint32_t)});
        values.push_back(c.value);
    }
    info = {static_cast<uint32_t>(entries.size()), entries.data(), values.size() * sizeof(uint32_t), values.data()};
}

Result<std::unique_ptr<ComputePipeline>> ComputePipeline::create(Context& context, const uint32_t* spirv,
                                                                 size_t spirv_bytes,
                                                                 const std::vector<VkBuffer>& buffers,
                                                                 const std::vector<SpecializationConstant>& specialization,
                                                                 uint32_t push_bytes) {
    std::unique_ptr<ComputePipeline> p(new ComputePipeline(context));
    p->push_bytes_ = push_bytes;
    const DeviceFunctions& vkd = context.vk();
    const VkDevice device = context.device();
    const auto count = static_cast<uint32_t>(buffers.size());
    std::vector<VkDescriptorSetLayoutBinding> bindings(count);
    for (uint32_t i = 0; i < count; ++i) {
        bindings[i].binding = i;
        bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    auto set_info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set_info.bindingCount = count;
    set_info.pBindings = bindings.data();
    NMC_VK(vkd.vkCreateDescriptorSetLayout(device, &set_info, nullptr, &p->set_layout_));
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    auto layout_info = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &p->set_layout_;
    layout_info.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
    layout_info.pPushConstantRanges = &push;
    NMC_VK(vkd.vkCreatePipelineLayout(device, &layout_info, nullptr, &p->layout_));

    auto module_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module_info.codeSize = spirv_bytes;
    module_info.pCode = spirv;
    VkShaderModule module = VK_NULL_HANDLE;
    NMC_VK(vkd.vkCreateShaderModule(device, &module_info, nullptr, &module));
    const Specialization constants(specialization);
    auto pipeline_info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.stage.pSpecializationInfo = &constants.info;
    pipeline_info.layout = p->layout_;
    if (context.pipeline_statistics()) pipeline_info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    const VkResult made =
        vkd.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &p->pipeline_);
    vkd.vkDestroyShaderModule(device, module, nullptr);
    NMC_VK(made);

    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count};
    auto pool_info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    NMC_VK(vkd.vkCreateDescriptorPool(device, &pool_info, nullptr, &p->pool_));
    auto allocate = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocate.descriptorPool = p->pool_;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &p->set_layout_;
    NMC_VK(vkd.vkAllocateDescriptorSets(device, &allocate, &p->set_));
    std::vector<VkDescriptorBufferInfo> infos(count);
    std::vector<VkWriteDescriptorSet> writes(count);
    for (uint32_t i = 0; i < count; ++i) {
        infos[i] = {buffers[i], 0, VK_WHOLE_SIZE};
        writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        writes[i].dstSet = p->set_;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkd.vkUpdateDescriptorSets(device, count, writes.data(), 0, nullptr);
    return p;
}

ComputePipeline::~ComputePipeline() {
    const DeviceFunctions& vkd = context_.vk();
    const VkDevice device = context_.device();
    if (pool_ != VK_NULL_HANDLE) vkd.vkDestroyDescriptorPool(device, pool_, nullptr);
    if (pipeline_ != VK_NULL_HANDLE) vkd.vkDestroyPipeline(device, pipeline_, nullptr);
    if (layout_ != VK_NULL_HANDLE) vkd.vkDestroyPipelineLayout(device, layout_, nullptr);
    if (set_layout_ != VK_NULL_HANDLE) vkd.vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
}

std::string ComputePipeline::statistics() const {
    if (!context_.pipeline_statistics()) return "";
    const DeviceFunctions& vkd = context_.vk();
    auto executable = vk_struct<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
    executable.pipeline = pipeline_;
    executable.executableIndex = 0;
    uint32_t count = 0;
    if (vkd.vkGetPipelineExecutableStatisticsKHR(context_.device(), &executable, &count, nullptr) != VK_SUCCESS)
        return "";
    std::vector<VkPipelineExecutableStatisticKHR> statistics(
        count, vk_struct<VkPipelineExecutableStatisticKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR));
    if (vkd.vkGetPipelineExecutableStatisticsKHR(context_.device(), &executable, &count, statistics.data()) !=
        VK_SUCCESS)
        return "";
    std::string text;
    for (const VkPipelineExecutableStatisticKHR& s : statistics) {
        std::string value;
        switch (s.format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: value = s.value.b32 ? "yes" : "no"; break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: value = std::to_string(s.value.i64); break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: value = std::to_string(s.value.u64); break;
            default: value = std::to_string(s.value.f64); break;
        }
        text += (text.empty() ? "" : ", ") + std::string(s.name) + " " + value;
    }
    return text;
}

void ComputePipeline::record_dispatch(const void* push, uint32_t groups) const {
    record_dispatch(context_.commands(), push, groups);
}

void ComputePipeline::record_dispatch(VkCommandBuffer commands, const void* push, uint32_t groups) const {
    const DeviceFunctions& vkd = context_.vk();
    vkd.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    vkd.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    if (push_bytes_ > 0) vkd.vkCmdPushConstants(commands, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_, push);
    vkd.vkCmdDispatch(commands, groups, 1, 1);
}

}  // namespace nmc::vulkan_detail
