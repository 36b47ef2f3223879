// Status and Result: the one error vocabulary of every nmc library. Libraries never print or exit; they
// return a Status whose code says what kind of failure it is and whose message says what, where, and
// expected versus got.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace nmc {

enum class StatusCode {
    ok = 0,
    invalid_argument,     // the caller asked for something impossible (bad flag value, absurd size)
    not_recognized,       // the bytes are not an nmc pack / the file is not an image we know
    version_unsupported,  // a pack of a major version this build cannot read
    corrupt,              // checksum mismatch, truncation, out-of-range field, reserved bits set
    limit_exceeded,       // a size or count beyond the limits of docs/format-spec.md
    io_error,             // the file system refused (missing file, permission, disk full)
    backend_unavailable,  // the build or the machine lacks what was asked for (CUDA, LibTorch, a codec)
    cancelled,            // a progress callback asked to stop
    out_of_memory,        // an allocation failed (std::bad_alloc, LibTorch's or zstd's allocator): too little memory
    internal,             // a broken invariant inside nmc: a bug, reported instead of crashing
};

// Stable lower-case name of a code ("corrupt", "io_error", ...), used in JSON reports.
const char* to_string(StatusCode code);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status success() { return {}; }

    bool ok() const { return code_ == StatusCode::ok; }
    StatusCode code() const { return code_; }
    const std::string& message() const { return message_; }

    // "corrupt: section 'LATN': checksum mismatch (expected 0x1234abcd, got 0x00000000)"
    std::string to_string() const;

    // Prefixes the message with context, e.g. the file name: "foo.nmc: <message>". No-op on success.
    Status with_context(const std::string& context) const;

private:
    StatusCode code_ = StatusCode::ok;
    std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
    Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

    bool ok() const { return value_.has_value(); }
    const Status& status() const { return status_; }

    T& value() & { assert(ok()); return *value_; }
    const T& value() const& { assert(ok()); return *value_; }
    T&& value() && { assert(ok()); return std::move(*value_); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

private:
    std::optional<T> value_;
    Status status_;
};

}  // namespace nmc

// Returns early from a function returning Status or Result<T> when `expr` (a Status) failed.
#define NMC_RETURN_IF_ERROR(expr)                 \
    do {                                          \
        ::nmc::Status nmc_status_ = (expr);       \
        if (!nmc_status_.ok()) return nmc_status_; \
    } while (0)
