// Warm starts between latent shapes and the target-PSNR search, on small synthetic materials (seconds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compressor/compressor.h"
#include "compressor/target_search.h"
#include "synthetic_material.h"

namespace nmc {
namespace {

CompressOptions options_for(int size, LatentShape shape, int64_t steps) {
    CompressOptions o;
    shape.level_count = latent_level_count(size, size, 7, shape.grid_scale);
    o.shape = shape;
    o.steps = steps;
    o.batch_size = 2048;
    o.seed = 3;
    return o;
}

// Growing F adds features whose first-layer weights are zero and keeps everything else, so before any
// training the new model decodes what the old one did. Both networks have 32 inputs (F = 4 and F = 8), so only
// the matmul's summation may differ: adding exact zeros leaves each sum unchanged, but a different blocking of
// the sum could move a float32 result by an ulp, which can flip one FP8-rounded input of the next layer; the
// bound 1e-3 (a 1/4 of an 8-bit step) allows for such a rare flip and still catches any real change.
TEST(WarmStart, MoreFeaturesKeepTheFunction) {
    const int size = 64;
    const TrainingTarget target = test::synthetic_material(size);
    auto small = Compressor::create(target, options_for(size, {2, 4, 4, 0}, 150));
    ASSERT_TRUE(small.ok()) << small.status().to_string();
    ASSERT_TRUE((*small)->train().ok());
    auto grown = Compressor::create(target, options_for(size, {2, 8, 4, 0}, 150), small->get());
    ASSERT_TRUE(grown.ok()) << grown.status().to_string();
    for (int mip : {0, 3}) {
        auto before = (*small)->evaluate_mip(mip);
        auto after = (*grown)->evaluate_mip(mip);
        ASSERT_TRUE(before.ok() && after.ok());
        double worst = 0;
        for (size_t c = 0; c < before->size(); ++c)
            for (size_t i = 0; i < (*before)[c].size(); ++i)
                worst = std::max(worst, static_cast<double>(std::abs((*before)[c][i] - (*after)[c][i])));
        EXPECT_LT(worst, 1e-3) << "mip " << mip;
    }
}

// A warm start to a finer grid (S 4 -> 2) starts far closer to the target than a random start: after 30 steps
// the warm-started model must beat a fresh model of the same shape trained for the same 30 steps.
TEST(WarmStart, FinerGridStartsAhead) {
    const int size = 64;
    const TrainingTarget target = test::synthetic_material(size);
    auto coarse = compress(target, options_for(size, {4, 8, 4, 0}, 300));
    ASSERT_TRUE(coarse.ok()) << coarse.status().to_string();
    auto trained = Compressor::create(target, options_for(size, {4, 8, 4, 0}, 300));
    ASSERT_TRUE(trained.ok());
    ASSERT_TRUE((*trained)->train().ok());
    auto warm = Compressor::create(target, options_for(size, {2, 8, 4, 0}, 30), trained->get());
    auto fresh = Compressor::create(target, options_for(size, {2, 8, 4, 0}, 30));
    ASSERT_TRUE(warm.ok() && fresh.ok());
    ASSERT_TRUE((*warm)->train().ok());
    ASSERT_TRUE((*fresh)->train().ok());
    auto warm_result = finish_compression(**warm, target);
    auto fresh_result = finish_compression(**fresh, target);
    ASSERT_TRUE(warm_result.ok() && fresh_result.ok());
    EXPECT_GT(warm_result->pack.quality.psnr_db, fresh_result->pack.quality.psnr_db + 1.0);
}

TEST(TargetSearch, LadderIsSortedAndDistinct) {
    const TrainingTarget target = test::synthetic_material(256);
    const std::vector<RateRung> ladder = rate_ladder(target);
    ASSERT_GE(ladder.size(), 8u);
    for (size_t i = 1; i < ladder.size(); ++i) {
        EXPECT_LT(ladder[i - 1].estimated_bits_per_texel, ladder[i].estimated_bits_per_texel);
        const LatentShape& a = ladder[i - 1].shape;
        const LatentShape& b = ladder[i].shape;
        EXPECT_FALSE(a.grid_scale == b.grid_scale && a.feature_count == b.feature_count && a.bits == b.bits);
    }
}

CompressOptions search_options() {
    CompressOptions o;
    o.target_bpp = 5.0;
    o.steps = 200;
    o.batch_size = 2048;
    o.seed = 5;
    return o;
}

// A modest target: the search must deliver a pack that reaches it, never spend more than the allowed attempts,
// and the pack it returns must be the smallest passing one it trained.
TEST(TargetSearch, ReachesAReachableTargetWithTheSmallestPassingPack) {
    const TrainingTarget target = test::synthetic_material(256);
    auto first = compress(target, search_options());
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    TargetSearchOptions search;
    search.target_psnr_db = first->pack.quality.psnr_db - 1.5;  // the start rate reaches it: the search goes down
    auto result = compress_to_target_psnr(target, search_options(), search);
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    ASSERT_TRUE(result->reached);
    EXPECT_GE(result->result.pack.quality.psnr_db, search.target_psnr_db);
    ASSERT_GE(result->attempts.size(), 1u);
    ASSERT_LE(result->attempts.size(), static_cast<size_t>(search.max_attempts));
    EXPECT_FALSE(result->attempts.front().warm_started);
    uint64_t smallest_passing = UINT64_MAX;
    for (const TargetAttempt& a : result->attempts) {
        EXPECT_EQ(a.reached, a.psnr_db >= search.target_psnr_db);
        if (a.reached) smallest_passing = std::min(smallest_passing, a.file_bytes);
    }
    EXPECT_EQ(result->result.file.size(), smallest_passing);
    EXPECT_LE(result->total_steps, 200 + (search.max_attempts - 1) * 60);
    // The first attempt is `first` again (same shape, seed and steps: the same model), so it passes and the
    // answer is no larger. The files may differ by one 64-byte alignment step: the metadata records the
    // training time, whose digits vary from run to run.
    EXPECT_DOUBLE_EQ(result->attempts.front().psnr_db, first->pack.quality.psnr_db);
    EXPECT_LE(result->result.file.size(), first->file.size() + 64);
    ASSERT_GE(result->attempts.size(), 2u);
    EXPECT_LT(result->attempts[1].bits_per_texel, result->attempts[0].bits_per_texel);
}

TEST(TargetSearch, UnreachableTargetIsReportedNotWritten) {
    const TrainingTarget target = test::synthetic_material(64);
    TargetSearchOptions search;
    search.target_psnr_db = 98.0;
    search.max_attempts = 2;
    auto result = compress_to_target_psnr(target, search_options(), search);
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    EXPECT_FALSE(result->reached);
    EXPECT_EQ(result->attempts.size(), 2u);
    EXPECT_TRUE(result->attempts[1].warm_started);
    // The second attempt went up the ladder (the first one was far below the target).
    EXPECT_GT(result->attempts[1].bits_per_texel, result->attempts[0].bits_per_texel);

    search.target_psnr_db = -3;
    EXPECT_EQ(compress_to_target_psnr(target, search_options(), search).status().code(), StatusCode::invalid_argument);
}

}  // namespace
}  // namespace nmc
