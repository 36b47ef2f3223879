// Mapping of library status codes to process exit codes.
#include "cli/exit_codes.h"

#include <cstdio>

namespace nmc::cli {

int exit_code_for(const Status& status, bool input_is_material) {
    switch (status.code()) {
        case StatusCode::ok: return kExitOk;
        case StatusCode::invalid_argument: return input_is_material ? kExitBadInput : kExitUsage;
        case StatusCode::io_error: return kExitIo;
        case StatusCode::not_recognized:
        case StatusCode::version_unsupported: return input_is_material ? kExitBadInput : kExitNotAPack;
        case StatusCode::corrupt:
        case StatusCode::limit_exceeded: return input_is_material ? kExitBadInput : kExitCorrupt;
        case StatusCode::backend_unavailable: return kExitUnavailable;
        case StatusCode::cancelled: return kExitCancelled;
        case StatusCode::out_of_memory: return kExitOutOfMemory;
        case StatusCode::internal: return kExitInternal;
    }
    return kExitInternal;
}

namespace {
std::string last_error;
}  // namespace

void print_error(const Status& status) {
    last_error = status.message();
    std::fprintf(stderr, "nmc: error: %s\n", status.message().c_str());
}

const std::string& last_error_message() { return last_error; }

}  // namespace nmc::cli
