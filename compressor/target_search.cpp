// Target-PSNR search over the rate ladder with warm-started fine-tunes (compressor/target_search.h).
#include "compressor/target_search.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

namespace nmc {
namespace {

constexpr double kLadderMinBpp = 0.5;
constexpr double kLadderMaxBpp = 32.0;
constexpr double kLadderGiveUpBpp = 1e6;
constexpr double kLadderStep = 1.189207115002721;  // 2^(1/4)
constexpr double kMinSlope = 1.0;                    // dB per doubling: measured slopes are clamped to this range
constexpr double kMaxSlope = 8.0;

bool same_shape(const LatentShape& a, const LatentShape& b) {
    return a.grid_scale == b.grid_scale && a.feature_count == b.feature_count && a.bits == b.bits &&
           a.level_count == b.level_count;
}

struct Measured {
    size_t rung = 0;
    double psnr_db = 0;
};

// Rate control's shape for `bpp` bits per texel of this target, as a rung (with its estimate in bits per texel).
Result<RateRung> rung_for_budget(const TrainingTarget& target, double bpp, const NetworkChoice& network,
                                 ShapePreference preference) {
    auto choice = choose_latent_shape(target.width, target.height,
                                      static_cast<int>(target.channels.size()),
                                      static_cast<int>(target.textures.size()), bpp, network, preference);
    if (!choice.ok()) return choice.status();
    const double texels = static_cast<double>(target.width) * target.height;
    return RateRung{choice->shape, 8.0 * static_cast<double>(choice->estimated_file_bytes) / texels};
}

}  // namespace

std::vector<RateRung> rate_ladder(const TrainingTarget& target, const NetworkChoice& network,
                                  ShapePreference preference) {
    std::vector<RateRung> ladder;
    const auto choose = [&](double bpp) { return rung_for_budget(target, bpp, network, preference); };
    // From the first budget any shape fits (tiny materials need hundreds of bits per texel for the network
    // alone) up to 64 times that or 32 bpp, whichever is more.
    double bpp = kLadderMinBpp;
    while (!choose(bpp).ok() && bpp < kLadderGiveUpBpp) bpp *= kLadderStep;
    const double last = std::max(kLadderMaxBpp, bpp * 64.0) * 1.0001;
    for (; bpp <= last; bpp *= kLadderStep) {
        auto rung = choose(bpp);
        if (!rung.ok()) continue;
        if (std::none_of(ladder.begin(), ladder.end(), [&](const RateRung& r) { return same_shape(r.shape, rung->shape); }))
            ladder.push_back(*rung);
    }
    std::sort(ladder.begin(), ladder.end(), [](const RateRung& a, const RateRung& b) {
        return a.estimated_bits_per_texel < b.estimated_bits_per_texel;
    });
    return ladder;
}

namespace {

// The ladder with the rung rate control picks for options.target_bpp (added when the quarter-octave grid missed
// it), and that rung's index (0 when the budget fits no shape).
struct StartedLadder {
    std::vector<RateRung> ladder;
    size_t start = 0;
};

StartedLadder ladder_from_budget(const TrainingTarget& target, const CompressOptions& options) {
    const ShapePreference preference = shape_preference_for_steps(effective_steps(options));
    StartedLadder out{rate_ladder(target, options.network, preference), 0};
    auto start = rung_for_budget(target, options.target_bpp, options.network, preference);
    if (!start.ok() || out.ladder.empty()) return out;
    const auto same = [&](const RateRung& r) { return same_shape(r.shape, start->shape); };
    if (std::none_of(out.ladder.begin(), out.ladder.end(), same))
        out.ladder.insert(std::upper_bound(out.ladder.begin(), out.ladder.end(), *start,
                                           [](const RateRung& a, const RateRung& b) {
                                               return a.estimated_bits_per_texel < b.estimated_bits_per_texel;
                                           }),
                          *start);
    out.start = static_cast<size_t>(std::find_if(out.ladder.begin(), out.ladder.end(), same) - out.ladder.begin());
    return out;
}

Status check_search_options(const TargetSearchOptions& search, const CompressOptions& options) {
    if (!(search.fine_tune_fraction > 0 && search.fine_tune_fraction <= 1) || search.max_attempts < 1 ||
        !(search.fine_tune_learning_rate_scale > 0 && search.fine_tune_learning_rate_scale <= 1))
        return Status(StatusCode::invalid_argument,
                      "target search: fine-tune fraction and learning-rate scale in (0, 1], attempts >= 1");
    if (options.shape)
        return Status(StatusCode::invalid_argument, "rate control chooses the latent shape here: do not fix one");
    return Status::success();
}

// Trains rungs of a ladder one after another: the first attempt a full run of the options' steps from scratch,
// every later one a fine-tune warm-started from the previous attempt's model (search's fraction of the steps,
// its learning-rate scale).
class LadderTrainer {
public:
    LadderTrainer(const TrainingTarget& target, const CompressOptions& options, const TargetSearchOptions& search,
                  const TargetSearchProgressCallback& progress)
        : target_(target), options_(options), search_(search), progress_(progress),
          schedule_(effective_settings(options)),
          full_steps_(schedule_.steps) {}

    int64_t full_steps() const { return full_steps_; }

    // Trains `rung`; `attempt` counts from 1 (for progress). The record's `reached` is left false.
    Result<std::pair<CompressResult, TargetAttempt>> train(const RateRung& rung, int attempt) {
        CompressOptions o = options_;
        o.shape = rung.shape;
        o.steps = last_ ? std::max<int64_t>(
                              1, std::llround(static_cast<double>(full_steps_) * search_.fine_tune_fraction))
                        : full_steps_;
        if (last_) {
            const auto scale = static_cast<float>(search_.fine_tune_learning_rate_scale);
            o.latent_learning_rate = schedule_.latent_learning_rate * scale;
            o.network_learning_rate = schedule_.network_learning_rate * scale;
        }
        auto compressor = Compressor::create(target_, o, last_.get());
        if (!compressor.ok()) return compressor.status();
        const ProgressCallback training_progress = [&](const TrainingProgress& p) {
            if (!progress_) return true;
            TargetSearchProgress s;
            s.attempt = attempt;
            s.max_attempts = search_.max_attempts;
            s.shape = rung.shape;
            s.estimated_bits_per_texel = rung.estimated_bits_per_texel;
            s.training = p;
            return progress_(s);
        };
        NMC_RETURN_IF_ERROR((*compressor)->train(training_progress));
        auto result = finish_compression(**compressor, target_);
        if (!result.ok()) return result.status();
        TargetAttempt record;
        record.shape = rung.shape;
        record.file_bytes = result->file.size();
        record.bits_per_texel = result->pack.quality.bits_per_texel;
        record.psnr_db = result->pack.quality.psnr_db;
        record.steps = o.steps;
        record.warm_started = last_ != nullptr;
        last_ = std::move(*compressor);
        return std::make_pair(std::move(*result), record);
    }

private:
    const TrainingTarget& target_;
    const CompressOptions& options_;
    const TargetSearchOptions& search_;
    const TargetSearchProgressCallback& progress_;
    PresetSettings schedule_;  // the first attempt's: its trainer's preset, with the options' settings over it
    int64_t full_steps_ = 0;
    std::unique_ptr<Compressor> last_;  // the model the next attempt starts from
};

}  // namespace

Result<TargetSearchResult> compress_to_target_psnr(const TrainingTarget& target, const CompressOptions& options,
                                                   const TargetSearchOptions& search,
                                                   const TargetSearchProgressCallback& progress) {
    if (!std::isfinite(search.target_psnr_db) || search.target_psnr_db <= 0 || search.target_psnr_db > 99)
        return Status(StatusCode::invalid_argument, "target PSNR must lie in (0, 99] dB");
    NMC_RETURN_IF_ERROR(check_search_options(search, options));
    const StartedLadder started = ladder_from_budget(target, options);
    const std::vector<RateRung>& ladder = started.ladder;
    if (ladder.empty()) return Status(StatusCode::invalid_argument, "no latent shape fits this material");
    size_t rung = started.start;
    LadderTrainer trainer(target, options, search, progress);

    const double goal = search.target_psnr_db;
    TargetSearchResult out;
    out.full_run_steps = trainer.full_steps();
    std::vector<Measured> measured;               // one per attempt, training order
    std::optional<CompressResult> best_passing;   // smallest file that reached the goal
    std::optional<size_t> best_passing_rung;      // lowest rung that reached it
    std::optional<CompressResult> best_failing;   // highest PSNR below the goal

    // PSNR predicted at rung r from the measured attempt m, with the secant slope of the two measured rungs
    // nearest to r when there are two, else the prior slope.
    const auto slope = [&]() {
        if (measured.size() < 2) return search.slope_db_per_doubling;
        const Measured& a = measured[measured.size() - 2];
        const Measured& b = measured.back();
        const double doublings =
            std::log2(ladder[b.rung].estimated_bits_per_texel / ladder[a.rung].estimated_bits_per_texel);
        if (std::abs(doublings) < 1e-6) return search.slope_db_per_doubling;
        return std::clamp((b.psnr_db - a.psnr_db) / doublings, kMinSlope, kMaxSlope);
    };
    const auto predicted = [&](const Measured& m, size_t r) {
        return m.psnr_db +
               slope() * std::log2(ladder[r].estimated_bits_per_texel / ladder[m.rung].estimated_bits_per_texel);
    };

    for (int attempt = 1; attempt <= search.max_attempts; ++attempt) {
        auto trained = trainer.train(ladder[rung], attempt);
        if (!trained.ok()) return trained.status();
        CompressResult& result = trained->first;
        TargetAttempt& record = trained->second;
        record.reached = record.psnr_db >= goal;
        out.attempts.push_back(record);
        out.total_steps += record.steps;
        measured.push_back({rung, record.psnr_db});
        if (record.reached) {
            // The search moves by rungs; the answer is the smallest file (zstd can reorder neighbouring rungs).
            if (!best_passing_rung || rung < *best_passing_rung) best_passing_rung = rung;
            if (!best_passing || result.file.size() < best_passing->file.size()) best_passing = std::move(result);
        } else if (!best_failing || record.psnr_db > best_failing->pack.quality.psnr_db) {
            best_failing = std::move(result);
        }

        // The next rung: the lowest one predicted to reach the goal, between the highest failing rung below the
        // best passing one and that passing rung.
        std::optional<size_t> highest_failing;
        for (const TargetAttempt& a : out.attempts) {
            if (a.reached) continue;
            size_t r = 0;
            while (!same_shape(ladder[r].shape, a.shape)) ++r;
            if (!best_passing_rung || r < *best_passing_rung)
                highest_failing = highest_failing ? std::max(*highest_failing, r) : r;
        }
        const size_t lowest = highest_failing ? *highest_failing + 1 : 0;
        const size_t highest = best_passing_rung ? *best_passing_rung : ladder.size() - 1;
        if (lowest > highest || (best_passing_rung && lowest == *best_passing_rung)) break;
        const Measured& anchor = measured.back();
        size_t next = highest;
        for (size_t r = highest + 1; r-- > lowest;)
            if (predicted(anchor, r) >= goal) next = r;
        if (best_passing_rung && next == *best_passing_rung) break;  // the rung below is predicted to fail
        if (next == rung) break;
        rung = next;
    }

    out.reached = best_passing.has_value();
    out.result = out.reached ? std::move(*best_passing) : std::move(*best_failing);
    return out;
}

}  // namespace nmc
