// Loading the Vulkan loader and its entry points (runtime/vulkan/vulkan_api.h).
#include "runtime/vulkan/vulkan_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace nmc::vulkan_detail {

Result<const GlobalFunctions*> load_vulkan() {
    static GlobalFunctions functions;
    static Status status;
    static std::once_flag once;
    std::call_once(once, [] {
        void* library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            status = Status(StatusCode::backend_unavailable,
                            "no Vulkan loader (libvulkan.so.1) on this machine: install libvulkan1 and a Vulkan "
                            "driver (mesa-vulkan-drivers, or the GPU vendor's)");
            return;
        }
        functions.vkGetInstanceProcAddr =
            reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
        if (functions.vkGetInstanceProcAddr == nullptr) {
            status = Status(StatusCode::backend_unavailable, "libvulkan.so.1 has no vkGetInstanceProcAddr");
            return;
        }
#define NMC_VULKAN_LOAD_GLOBAL(name)                                                                               \
    functions.name = reinterpret_cast<PFN_##name>(functions.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));         \
    if (functions.name == nullptr) {                                                                               \
        status = Status(StatusCode::backend_unavailable, "the Vulkan loader lacks " #name " (Vulkan 1.1 needed)"); \
        return;                                                                                                    \
    }
        NMC_VULKAN_GLOBAL_FUNCTIONS(NMC_VULKAN_LOAD_GLOBAL)
#undef NMC_VULKAN_LOAD_GLOBAL
    });
    if (!status.ok()) return status;
    return &functions;
}

Status load_instance_functions(const GlobalFunctions& global, VkInstance instance, InstanceFunctions& out) {
#define NMC_VULKAN_LOAD_INSTANCE(name)                                                      \
    out.name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name)); \
    if (out.name == nullptr) return Status(StatusCode::internal, "Vulkan instance function " #name " missing");
    NMC_VULKAN_INSTANCE_FUNCTIONS(NMC_VULKAN_LOAD_INSTANCE)
#undef NMC_VULKAN_LOAD_INSTANCE
    out.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV =
        reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
            global.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    return Status::success();
}

Status load_device_functions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions& out) {
#define NMC_VULKAN_LOAD_DEVICE(name)                                                      \
    out.name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name)); \
    if (out.name == nullptr) return Status(StatusCode::internal, "Vulkan device function " #name " missing");
    NMC_VULKAN_DEVICE_FUNCTIONS(NMC_VULKAN_LOAD_DEVICE)
#undef NMC_VULKAN_LOAD_DEVICE
    return Status::success();
}

const char* result_name(VkResult result) {
    switch (result) {
        case VK_SUCCESS:
            return "VK_SUCCESS";
        case VK_NOT_READY:
            return "VK_NOT_READY";
        case VK_TIMEOUT:
            return "VK_TIMEOUT";
        case VK_INCOMPLETE:
            return "VK_INCOMPLETE";
        case VK_ERROR_OUT_OF_HOST_MEMORY:
            return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY:
            return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED:
            return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST:
            return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED:
            return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_LAYER_NOT_PRESENT:
            return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT:
            return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT:
            return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER:
            return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS:
            return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_OUT_OF_POOL_MEMORY:
            return "VK_ERROR_OUT_OF_POOL_MEMORY";
        default:
            return "VkResult error";
    }
}

}  // namespace nmc::vulkan_detail
