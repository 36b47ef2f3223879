// Which GPU each job slot of `nmc batch --device ...` gets (batch_devices, slot_device): no GPU needed, the visible
// devices are given as CUDA_VISIBLE_DEVICES's value or a device count; and the command line's errors for them.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "tests/cli/nmc_process.h"
#include "tests/material/test_support.h"

namespace {

using Devices = std::vector<std::string>;

// A device count the test must not be asked for (CUDA_VISIBLE_DEVICES answers, or the name is explicit).
int not_asked() {
    ADD_FAILURE() << "the device count was asked for";
    return 0;
}

TEST(BatchDevices, CudaSpreadsOverTheVisibleGpus) {
    // Slurm's --gres=gpu:2 sets CUDA_VISIBLE_DEVICES to the node's GPU indices; the children inherit it, so they
    // see those GPUs as cuda:0 and cuda:1.
    auto devices = nmc::batch_devices("cuda", "2,3", not_asked);
    ASSERT_TRUE(devices.ok()) << devices.status().to_string();
    EXPECT_EQ(*devices, (Devices{"cuda:0", "cuda:1"}));
    devices = nmc::batch_devices("cuda", "GPU-8d5e0c7a,GPU-1b2f44e0,GPU-77aa01c3", not_asked);  // UUIDs count alike
    ASSERT_TRUE(devices.ok());
    EXPECT_EQ(*devices, (Devices{"cuda:0", "cuda:1", "cuda:2"}));
    // Unset: every GPU the runtime sees.
    devices = nmc::batch_devices("cuda", nullptr, [] { return 4; });
    ASSERT_TRUE(devices.ok());
    EXPECT_EQ(*devices, (Devices{"cuda:0", "cuda:1", "cuda:2", "cuda:3"}));
}

TEST(BatchDevices, NoVisibleGpuIsAnError) {
    auto devices = nmc::batch_devices("cuda", "", not_asked);
    ASSERT_FALSE(devices.ok());
    EXPECT_EQ(devices.status().code(), nmc::StatusCode::backend_unavailable);
    devices = nmc::batch_devices("cuda", nullptr, [] { return 0; });
    ASSERT_FALSE(devices.ok());
    EXPECT_EQ(devices.status().code(), nmc::StatusCode::backend_unavailable);
    EXPECT_NE(devices.status().message().find("no CUDA device"), std::string::npos) << devices.status().message();
}

TEST(BatchDevices, ExplicitListsAndTheCpu) {
    auto devices = nmc::batch_devices("cpu", "0,1", not_asked);
    ASSERT_TRUE(devices.ok());
    EXPECT_TRUE(devices->empty());
    for (const char* list : {"cuda:0,2", "cuda:0,cuda:2"}) {
        devices = nmc::batch_devices(list, nullptr, not_asked);
        ASSERT_TRUE(devices.ok()) << list;
        EXPECT_EQ(*devices, (Devices{"cuda:0", "cuda:2"})) << list;
    }
    for (const char* bad : {"gpu", "cuda:", "cuda:0,", "cuda:x", "cuda:0,vulkan:1", "cuda:0,,1", "vulkan", "CPU"}) {
        devices = nmc::batch_devices(bad, "0", not_asked);
        ASSERT_FALSE(devices.ok()) << bad;
        EXPECT_EQ(devices.status().code(), nmc::StatusCode::invalid_argument) << bad;
    }
}

// -j 5 over 2 GPUs: slots 0, 2, 4 on the first GPU and 1, 3 on the second; a slot keeps its GPU for every child
// it runs (run_batch gives a finished child's slot to the next one).
TEST(BatchDevices, JobSlotsTakeTheGpusRoundRobin) {
    const Devices two = {"cuda:0", "cuda:1"};
    const Devices expected = {"cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"};
    for (size_t slot = 0; slot < expected.size(); ++slot) EXPECT_EQ(nmc::slot_device(two, slot), expected[slot]);
    EXPECT_EQ(nmc::slot_device({}, 3), "cpu");
}

// `nmc batch --device cuda` where CUDA_VISIBLE_DEVICES hides every GPU: exit 7 before anything is read or written;
// planning and merging (--dry-run, --report-only) do not look for GPUs. A name that is no device is exit 2.
TEST(BatchDevices, CommandLineRefusesCudaWithNoVisibleGpu) {
    nmc::test::TempDir dir;
    const nmc::test::ScopedEnvironment no_gpu("CUDA_VISIBLE_DEVICES", "");
    nmc::test::CommandResult r =
        nmc::test::run_nmc("batch " + dir.path() + " -o " + dir.file("out") + " --device cuda", dir.path());
    EXPECT_EQ(r.exit_code, 7) << r.err;
    EXPECT_NE(r.err.find("CUDA_VISIBLE_DEVICES='' names no GPU"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
    r = nmc::test::run_nmc("batch " + dir.path() + " -o " + dir.file("out") + " --device cuda --dry-run", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = nmc::test::run_nmc("batch " + dir.path() + " -o " + dir.file("out") + " --device gpu --dry-run", dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
