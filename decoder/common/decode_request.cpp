// The checks of decoding requests shared by the decoders.
#include "decoder/common/decode_request.h"

#include <cmath>
#include <string>

namespace nmc {

Status check_texel_queries(const std::vector<TexelQuery>& queries, int mip_count) {
    for (size_t i = 0; i < queries.size(); ++i) {
        const TexelQuery& q = queries[i];
        if (q.mip < 0 || q.mip >= mip_count) {
            return {StatusCode::invalid_argument, "decode_queries: query " + std::to_string(i) + ": mip " +
                                                      std::to_string(q.mip) + " outside 0.." +
                                                      std::to_string(mip_count - 1)};
        }
        // NaN fails both comparisons, so it is rejected too.
        if (!(std::fabs(q.u) <= kMaxQueryCoordinate) || !(std::fabs(q.v) <= kMaxQueryCoordinate)) {
            return {StatusCode::invalid_argument, "decode_queries: query " + std::to_string(i) + ": (u, v) = (" +
                                                      std::to_string(q.u) + ", " + std::to_string(q.v) +
                                                      ") is not finite within +-65536"};
        }
    }
    return Status::success();
}

Status check_index(const char* call, const char* what, int index, int count) {
    if (index >= 0 && index < count) return Status::success();
    return {StatusCode::invalid_argument,
            std::string(call) + ": " + what + " " + std::to_string(index) + " outside 0.." + std::to_string(count - 1)};
}

}  // namespace nmc
