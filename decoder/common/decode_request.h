// What every decoder checks a request against, alike: texel queries (spec 1, "texel query"), mip and texture indices.
#pragma once

#include <vector>

#include "core/status.h"

namespace nmc {

// Normalised coordinates (u, v) of mip `mip`. u and v must be finite with |u|, |v| <= kMaxQueryCoordinate (wrap
// addressing repeats the material).
struct TexelQuery {
    float u = 0.0f;
    float v = 0.0f;
    int mip = 0;
};
constexpr float kMaxQueryCoordinate = 65536.0f;  // keeps u * level width within int range for any level

// invalid_argument naming the first query whose mip is outside 0 .. mip_count-1 or whose coordinates are outside
// the limit (NaN included).
Status check_texel_queries(const std::vector<TexelQuery>& queries, int mip_count);

// invalid_argument "CALL: WHAT INDEX outside 0..COUNT-1" unless 0 <= index < count (a call's mip or texture).
Status check_index(const char* call, const char* what, int index, int count);

}  // namespace nmc
