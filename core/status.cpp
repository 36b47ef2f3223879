// Names and formatting of nmc::Status.
#include "core/status.h"

namespace nmc {

const char* to_string(StatusCode code) {
    switch (code) {
        case StatusCode::ok: return "ok";
        case StatusCode::invalid_argument: return "invalid_argument";
        case StatusCode::not_recognized: return "not_recognized";
        case StatusCode::version_unsupported: return "version_unsupported";
        case StatusCode::corrupt: return "corrupt";
        case StatusCode::limit_exceeded: return "limit_exceeded";
        case StatusCode::io_error: return "io_error";
        case StatusCode::backend_unavailable: return "backend_unavailable";
        case StatusCode::cancelled: return "cancelled";
        case StatusCode::out_of_memory: return "out_of_memory";
        case StatusCode::internal: return "internal";
    }
    return "unknown";
}

std::string Status::to_string() const {
    if (ok()) return "ok";
    return std::string(nmc::to_string(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
}

}  // namespace nmc
