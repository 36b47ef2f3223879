// Rate control: exact section sizes and the shape choice against the budget.
#include <gtest/gtest.h>

#include "compressor/rate_control.h"

namespace nmc {
namespace {

TEST(RateControl, LatentBytesFollowSpec6) {
    // 100x60, S=4, F=8, b=2, K=3: levels 25x15, 13x8, 7x4 -> 750, 208, 56 bytes at offsets 0, 752, 960.
    const LatentShape shape{4, 8, 2, 3};
    EXPECT_EQ(latent_section_bytes(100, 60, shape), 960u + 56u);
}

TEST(RateControl, WeightBytesFollowSpec7) {
    // 48->64 (3072 + 128 biases), 64->64 x2 (4096 + 128 each), 64->6: 384 weights, 24 scale bytes, 12 bias
    // bytes, padded to 16: 3200 + 4224 + 4224 + 432.
    EXPECT_EQ(weight_section_bytes(default_network_shape(16, 6)), 3200u + 4224u + 4224u + 432u);
    const OutputLayerFormat e4m3{WeightType::e4m3, false};
    EXPECT_EQ(weight_section_bytes(default_network_shape(16, 6, e4m3)), 3200u + 4224u + 4224u + 400u);
}

TEST(RateControl, ChoiceFitsBudgetAndGrowsWithIt) {
    uint64_t previous = 0;
    for (double bpp : {1.0, 2.5, 5.0, 10.0, 20.0}) {
        auto choice = choose_latent_shape(1024, 1024, 11, 7, 3, bpp);
        ASSERT_TRUE(choice.ok()) << choice.status().to_string();
        EXPECT_LE(choice->estimated_file_bytes, choice->budget_bytes) << bpp;
        EXPECT_GT(choice->estimated_file_bytes, previous) << bpp;
        EXPECT_GE(choice->shape.level_count, 2);
        previous = choice->estimated_file_bytes;
    }
}

TEST(RateControl, TooSmallBudgetIsAClearError) {
    auto choice = choose_latent_shape(64, 64, 7, 6, 3, 0.5);
    ASSERT_FALSE(choice.ok());
    EXPECT_EQ(choice.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(choice.status().message().find("too small"), std::string::npos) << choice.status().message();
    EXPECT_EQ(choose_latent_shape(64, 64, 7, 6, 3, -1.0).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace nmc
