// The Vulkan entry points the runtime uses, loaded at run time from the system's loader (libvulkan.so.1) instead of
// linked: nmc starts, and reports a clear error, on a machine without Vulkan. Internal to runtime/vulkan.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "core/status.h"

namespace nmc::vulkan_detail {

#define NMC_VULKAN_GLOBAL_FUNCTIONS(X) \
    X(vkCreateInstance)                \
    X(vkEnumerateInstanceVersion)

#define NMC_VULKAN_INSTANCE_FUNCTIONS(X)        \
    X(vkDestroyInstance)                        \
    X(vkEnumeratePhysicalDevices)               \
    X(vkGetPhysicalDeviceProperties)            \
    X(vkGetPhysicalDeviceFeatures2)             \
    X(vkGetPhysicalDeviceProperties2)           \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetPhysicalDeviceMemoryProperties)      \
    X(vkGetPhysicalDeviceFormatProperties)      \
    X(vkEnumerateDeviceExtensionProperties)     \
    X(vkCreateDevice)                           \
    X(vkGetDeviceProcAddr)

#define NMC_VULKAN_DEVICE_FUNCTIONS(X) \
    X(vkDestroyDevice)                 \
    X(vkGetDeviceQueue)                \
    X(vkCreateBuffer)                  \
    X(vkDestroyBuffer)                 \
    X(vkGetBufferMemoryRequirements)   \
    X(vkAllocateMemory)                \
    X(vkFreeMemory)                    \
    X(vkBindBufferMemory)              \
    X(vkMapMemory)                     \
    X(vkUnmapMemory)                   \
    X(vkCreateShaderModule)            \
    X(vkDestroyShaderModule)           \
    X(vkCreateDescriptorSetLayout)     \
    X(vkDestroyDescriptorSetLayout)    \
    X(vkCreatePipelineLayout)          \
    X(vkDestroyPipelineLayout)         \
    X(vkCreateComputePipelines)        \
    X(vkDestroyPipeline)               \
    X(vkCreateDescriptorPool)          \
    X(vkDestroyDescriptorPool)         \
    X(vkAllocateDescriptorSets)        \
    X(vkUpdateDescriptorSets)          \
    X(vkCreateCommandPool)             \
    X(vkDestroyCommandPool)            \
    X(vkAllocateCommandBuffers)        \
    X(vkBeginCommandBuffer)            \
    X(vkEndCommandBuffer)              \
    X(vkResetCommandBuffer)            \
    X(vkCmdBindPipeline)               \
    X(vkCmdBindDescriptorSets)         \
    X(vkCmdPushConstants)              \
    X(vkCmdDispatch)                   \
    X(vkCreateRenderPass)              \
    X(vkDestroyRenderPass)             \
    X(vkCreateFramebuffer)             \
    X(vkDestroyFramebuffer)            \
    X(vkCreateImageView)               \
    X(vkDestroyImageView)              \
    X(vkCreateSampler)                 \
    X(vkDestroySampler)                \
    X(vkCreateGraphicsPipelines)       \
    X(vkCmdBeginRenderPass)            \
    X(vkCmdEndRenderPass)              \
    X(vkCmdDraw)                       \
    X(vkCmdPipelineBarrier)            \
    X(vkCmdCopyBuffer)                 \
    X(vkCmdCopyBufferToImage)          \
    X(vkCmdCopyImageToBuffer)          \
    X(vkCreateImage)                   \
    X(vkDestroyImage)                  \
    X(vkGetImageMemoryRequirements)    \
    X(vkBindImageMemory)               \
    X(vkCmdWriteTimestamp)             \
    X(vkCmdResetQueryPool)             \
    X(vkCreateQueryPool)               \
    X(vkDestroyQueryPool)              \
    X(vkGetQueryPoolResults)           \
    X(vkCreateFence)                   \
    X(vkDestroyFence)                  \
    X(vkResetFences)                   \
    X(vkWaitForFences)                 \
    X(vkQueueSubmit)

#define NMC_VULKAN_DECLARE(name) PFN_##name name = nullptr;

// Loader-level functions (no instance needed).
struct GlobalFunctions {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    NMC_VULKAN_GLOBAL_FUNCTIONS(NMC_VULKAN_DECLARE)
};
struct InstanceFunctions {
    NMC_VULKAN_INSTANCE_FUNCTIONS(NMC_VULKAN_DECLARE)
    // VK_NV_cooperative_matrix's query; null where the loader and drivers lack the extension.
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;
};
struct DeviceFunctions {
    NMC_VULKAN_DEVICE_FUNCTIONS(NMC_VULKAN_DECLARE)
    // VK_KHR_pipeline_executable_properties, where the device has it (else null).
    PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR = nullptr;
    PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR = nullptr;
};

// The loader, opened once per process (and never closed: drivers keep threads). backend_unavailable when no Vulkan
// loader is installed ("libvulkan.so.1 not found: install libvulkan1 and a Vulkan driver").
Result<const GlobalFunctions*> load_vulkan();
// internal if an entry point is missing (a loader older than Vulkan 1.1).
Status load_instance_functions(const GlobalFunctions& global, VkInstance instance, InstanceFunctions& out);
Status load_device_functions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions& out);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like.
const char* result_name(VkResult result);

}  // namespace nmc::vulkan_detail
