// Quality of a pack against its training target, measured by decoding the pack with the CPU reference
// decoder exactly as a reader would (docs/format-spec.md 5.8 and 8.10). No LibTorch.
#pragma once

#include "compressor/training_target.h"
#include "core/status.h"
#include "format/pack.h"

namespace nmc {

// Fills every field of spec 5.8 except bits_per_texel (the file's size is the caller's): PSNR over all pack
// channels and mips, per pack channel, per mip, per texture over its source channels (spec 8.8-8.9 applied to
// both the decoded pack and the target), the mean angle between decoded and target normals (mip 0, degrees)
// and psnr8_mip0_db (mip 0 of every source channel quantised to 8 bits, channels weighted equally). The
// target's source channels are rebuilt from its pack-channel planes with the same transform, so a normal
// map's Z reference is the Z rebuilt from the source X, Y. Lossless figures are 99 dB.
// Fails if the pack cannot be decoded or does not match the target's size, mips or channel count.
Result<QualityReport> measure_quality(const Pack& pack, const TrainingTarget& target);

}  // namespace nmc
