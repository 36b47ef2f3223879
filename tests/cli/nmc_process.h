// Test support for the tests that run the built `nmc` executable: where it is, and running it with its exit code,
// stdout and stderr captured.
#pragma once

#include <string>

namespace nmc::test {

struct CommandResult {
    int exit_code = -1;  // -1 when the process did not exit normally
    std::string out;
    std::string err;
};

// The nmc executable: $NMC_BINARY when set, else the one this build made.
std::string nmc_binary();

// Runs `nmc <args>` through the shell (arguments are test-controlled paths without quotes), capturing stdout
// and stderr through files in `scratch_dir`, which are removed afterwards.
CommandResult run_nmc(const std::string& args, const std::string& scratch_dir);

// The same with `working_dir` as the working directory of nmc (relative paths in `args` are relative to it).
CommandResult run_nmc_in(const std::string& working_dir, const std::string& args, const std::string& scratch_dir);

}  // namespace nmc::test
