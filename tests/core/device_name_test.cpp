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

}  // namespace
}  // namespace nmc
