// The device names shared by nmc compress, decompress, validate and batch (core/device_name.h).
#include <gtest/gtest.h>

#include "core/device_name.h"

namespace nmc {
namespace {

TEST(DeviceName, CpuCudaAndIndexedCuda) {
    EXPECT_EQ(cuda_index_of_device("cpu"), -1);
    EXPECT_EQ(cuda_index_of_device("cuda"), 0);
    EXPECT_EQ(cuda_index_of_device("cuda:0"), 0);
    EXPECT_EQ(cuda_index_of_device("cuda:7"), 7);
    EXPECT_EQ(cuda_index_of_device("cuda:123"), 123);
}

TEST(DeviceName, AnythingElseIsRejected) {
    for (const char* name : {"", "gpu", "CPU", "cuda:", "cuda:x", "cuda:1x", "cuda:-1", "cuda:1234", "cuda0", " cuda",
                             "cuda:1,2"})
        EXPECT_FALSE(cuda_index_of_device(name).has_value()) << "'" << name << "'";
}

TEST(DeviceName, VulkanNamesParseButAreNoCudaDevice) {
    EXPECT_EQ(parse_device_name("vulkan")->kind, DeviceKind::vulkan);
    EXPECT_EQ(parse_device_name("vulkan")->index, -1);
    EXPECT_EQ(parse_device_name("vulkan:2")->index, 2);
    EXPECT_EQ(parse_device_name("cuda")->index, -1);
    EXPECT_EQ(parse_device_name("cpu")->kind, DeviceKind::cpu);
    EXPECT_FALSE(cuda_index_of_device("vulkan").has_value());
    EXPECT_FALSE(cuda_index_of_device("vulkan:0").has_value());
    for (const char* name : {"vulkan:", "vulkan:x", "vulkan:1234", "Vulkan", "vk", "vulkan0"})
        EXPECT_FALSE(parse_device_name(name).has_value()) << "'" << name << "'";
}

}  // namespace
}  // namespace nmc
