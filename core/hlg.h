// The hybrid log-gamma curve (ITU-R BT.2100 HLG) in which packs store HDR maps (spec 5.4 value_encoding, 8.9): a
// square root below 1/12 and a logarithm above, so that a pack's error is roughly relative to the value. The
// encoding is the writer's; the decoding is spec 8.9's arithmetic, shared by every decoder that runs on the host.
#pragma once

#include "core/texture_layout.h"

namespace nmc {

// An HDR map: float samples with values above 1 and none below 0 (`min`, `max` over all its channels). Packs store
// such a map HLG-encoded relative to `max` (its peak), and quality reports measure it on that curve.
bool is_hdr_map(SampleType sample_type, float min, float max);

// BT.2100's constants as float32: a, b = 1 - 4a, c = 0.5 - a * ln(4a).
constexpr float kHlgA = 0.17883277f;
constexpr float kHlgB = 0.28466892f;
constexpr float kHlgC = 0.55991073f;

// The HLG OETF of x in [0, 1] (clamped first): x <= 1/12 ? sqrt(3x) : a * ln(12x - b) + c; in [0, 1].
float hlg_encode(float x);

// spec 8.9: the inverse, in float32 with every operation rounded separately:
//   e <= 0.5 ? (e * e) / 3 : (exp((e - c) / a) + b) / 12
// e in [0, 1] gives [0, 1]; exp is within a few units in the last place of the exact value (C's expf).
float hlg_decode(float e);

}  // namespace nmc
