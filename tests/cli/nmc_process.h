// Test support for the tests that run the built `nmc` executable: where it is, and running it with its exit code,
// stdout and stderr captured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nmc::test {

struct CommandResult {
    int exit_code = -1;  // -1 when the process did not exit normally
    std::string out;
    std::string err;
    uint64_t peak_rss_bytes = 0;  // the child's peak resident memory (wait4's ru_maxrss); the limited runs only
};

// The nmc executable: $NMC_BINARY when set, else the one this build made.
std::string nmc_binary();

// Runs `nmc <args>` through the shell (arguments are test-controlled paths without quotes), capturing stdout
// and stderr through files in `scratch_dir`, which are removed afterwards.
CommandResult run_nmc(const std::string& args, const std::string& scratch_dir);

// The same with `working_dir` as the working directory of nmc (relative paths in `args` are relative to it).
CommandResult run_nmc_in(const std::string& working_dir, const std::string& args, const std::string& scratch_dir);

// run_nmc() on a full disk, without one (and without root to mount a tiny file system): nmc runs in a child
// process whose file size limit (RLIMIT_FSIZE) is `max_file_bytes`, with SIGXFSZ ignored, so a write that would
// make any file larger fails with EFBIG, as one on a full disk fails with ENOSPC, after writing what fits.
// stdout and stderr come back through pipes, which the limit does not touch.
CommandResult run_nmc_with_file_size_limit(const std::string& args, uint64_t max_file_bytes);

// run_nmc() on a machine with less memory: the child's address space is limited (RLIMIT_AS) to
// `max_address_space_bytes`, so an allocation beyond it fails as it would there; RLIM_INFINITY sets no limit (to
// measure peak_rss_bytes alone). Builds with AddressSanitizer reserve terabytes of address space: skip there.
CommandResult run_nmc_with_memory_limit(const std::string& args, uint64_t max_address_space_bytes);

// True in builds with AddressSanitizer, where run_nmc_with_memory_limit() cannot work.
bool address_sanitizer_build();

// Sets an environment variable for its lifetime (nmc children inherit it), restoring the previous value after.
class ScopedEnvironment {
public:
    ScopedEnvironment(const char* name, const std::string& value);
    ~ScopedEnvironment();
    ScopedEnvironment(const ScopedEnvironment&) = delete;
    ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

private:
    const char* name_;
    std::optional<std::string> previous_;
};

}  // namespace nmc::test
