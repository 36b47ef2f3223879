// Target-PSNR compression (`nmc compress --target-psnr D`): the smallest pack of a rate ladder whose measured
// PSNR reaches D dB, found with one full training run and short warm-started fine-tunes instead of one full
// run per rate (docs/compressor.md, "Target PSNR"). No LibTorch in this header.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compressor/compressor.h"

namespace nmc {

struct TargetSearchOptions {
    double target_psnr_db = 40.0;     // the pack's psnr_db to reach (all pack channels, all mips; spec 8.10)
    double fine_tune_fraction = 0.3;  // steps of a warm-started attempt, as a fraction of the first run's
    double fine_tune_learning_rate_scale = 0.3; // a warm-started attempt's Adam rates, times the first run's
    int max_attempts = 4;             // training runs in all, the first one included: at most 1.9 runs of steps
    double slope_db_per_doubling = 2.5; // PSNR gain per doubling of the file, until two attempts measure it
};

// One training run of the search: its shape, the file it gave and whether that file reached the target.
struct TargetAttempt {
    LatentShape shape;
    uint64_t file_bytes = 0;
    double bits_per_texel = 0;
    double psnr_db = 0;
    int64_t steps = 0;
    bool warm_started = false;
    bool reached = false;
};

struct TargetSearchResult {
    CompressResult result;               // the smallest file that reached the target, else the best one
    bool reached = false;
    std::vector<TargetAttempt> attempts; // in training order
    int64_t total_steps = 0;             // over all attempts
    int64_t full_run_steps = 0;          // steps of one full run (the first attempt)
};

struct TargetSearchProgress {
    int attempt = 0;                     // 1-based
    int max_attempts = 0;
    LatentShape shape;
    double estimated_bits_per_texel = 0; // of the attempt's file (rate control's estimate)
    TrainingProgress training;           // within the attempt
};
using TargetSearchProgressCallback = std::function<bool(const TargetSearchProgress&)>;

// The rate ladder: the distinct latent shapes rate control picks for budgets a quarter-octave apart, from
// 0.5 bits per texel (or the smallest budget any shape fits) to 32 (or 64 times that smallest budget),
// smallest file first, with their estimated bits per texel.
struct RateRung {
    LatentShape shape;
    double estimated_bits_per_texel = 0;
};
// `preference`: rate control's ranking for the full run's step count (shape_preference_for_steps).
std::vector<RateRung> rate_ladder(const TrainingTarget& target, const NetworkChoice& network = {},
                                  ShapePreference preference = ShapePreference::finest_grid);

// Starts at the rung rate control picks for options.target_bpp (a full run of the options' steps), then moves
// along the ladder by fine-tunes warm-started from the nearest trained model, predicting the rung that reaches
// the target from the measured PSNR and the slope (secant once two rates are measured). Stops when the
// smallest passing rung's lower neighbour failed or is predicted to fail, at the ladder's top, or after
// max_attempts. Cancelled -> StatusCode::cancelled. A target out of reach is not an error: reached is false.
Result<TargetSearchResult> compress_to_target_psnr(const TrainingTarget& target, const CompressOptions& options,
                                                   const TargetSearchOptions& search,
                                                   const TargetSearchProgressCallback& progress = {});

}  // namespace nmc
