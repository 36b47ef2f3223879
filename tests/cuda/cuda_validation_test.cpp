// nmc validate on the GPU: the same checks and figures as on the CPU (the PSNR definition is shared; only the
// decoder differs), so a pack validated with --device cuda has the CPU's verdict and PSNR within 0.01 dB.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>

#include "cuda/cuda_device.h"
#include "format/pack.h"
#include "tests/cuda/gpu_requirement.h"
#include "tests/validate/constant_pack.h"
#include "validate/validation.h"

namespace nmc {
namespace {

bool require_device() {
    return test::gpu_requirement_met(cuda_device_count() > 0, "no CUDA device was found");
}

TEST(CudaValidation, GpuVerdictAndPsnrEqualTheCpus) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    testing::TempDir dir;
    const std::string sources = dir.file("src");
    ASSERT_EQ(::mkdir(sources.c_str(), 0755), 0);
    // 16x8 texels, 3 mips: the decoded constants against a gradient source, so every figure is finite.
    Pack pack = testing::constant_pack(16, 8, 3, {{"albedo.r", 0, 1}, {"albedo.g", 0, 1}, {"albedo.b", 0, 1}},
                                       {0.5f, 0.25f, 0.75f});
    pack.textures = {
        testing::texture_layout("tile_Color.png", SampleType::uint8, ColorSpace::srgb,
                                {testing::from_pack(0, Semantic::albedo), testing::from_pack(1, Semantic::albedo),
                                 testing::from_pack(2, Semantic::albedo)})};
    Image color(16, 8, 3);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 16; ++x)
            for (int c = 0; c < 3; ++c)
                color.at(x, y, c) = static_cast<float>((x * 13 + y * 7 + c * 50) % 256) / 255.0f;
    ASSERT_TRUE(testing::write_sources(pack, sources, {color}).ok());
    ASSERT_TRUE(testing::store_measured_quality(pack, sources).ok());
    const std::string path = dir.file("tile.nmc");
    ASSERT_TRUE(write_pack_file(path, pack).ok());

    ValidationOptions cpu_options;
    cpu_options.source_dir = sources;
    auto cpu = validate_pack_file(path, cpu_options);
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    ValidationOptions gpu_options = cpu_options;
    gpu_options.decoder.device = "cuda";
    auto gpu = validate_pack_file(path, gpu_options);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();

    EXPECT_EQ(gpu->verdict, cpu->verdict);
    EXPECT_NE(gpu->decoder.find("CUDA device 0"), std::string::npos) << gpu->decoder;
    ASSERT_TRUE(gpu->quality_measured);
    EXPECT_NEAR(gpu->quality.psnr_db, cpu->quality.psnr_db, 0.01);
    EXPECT_NEAR(gpu->quality.psnr8_mip0_db, cpu->quality.psnr8_mip0_db, 0.01);
    EXPECT_LE(std::fabs(gpu->drift_db), gpu_options.max_drop_db);
}

TEST(CudaValidation, MissingDeviceIsBackendUnavailable) {
    if (!require_device()) GTEST_SKIP() << "no CUDA device";
    testing::TempDir dir;
    Pack pack = testing::constant_pack(4, 4, 1, {{"height", 0, 1}}, {0.5f});
    pack.textures = {testing::texture_layout("h_Height.png", SampleType::uint8, ColorSpace::linear,
                                             {testing::from_pack(0, Semantic::height)})};
    const std::string path = dir.file("h.nmc");
    ASSERT_TRUE(write_pack_file(path, pack).ok());
    ValidationOptions options;
    options.decoder.device = "cuda:" + std::to_string(cuda_device_count());
    auto report = validate_pack_file(path, options);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.status().code(), StatusCode::backend_unavailable);
    EXPECT_NE(report.status().message().find("no such CUDA device"), std::string::npos) << report.status().message();
}

}  // namespace
}  // namespace nmc
