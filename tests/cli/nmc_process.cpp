// Running the built nmc executable from tests.
#include "tests/cli/nmc_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nmc::test {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

std::string nmc_binary() {
    const char* env = std::getenv("NMC_BINARY");
    return env && *env ? env : NMC_BINARY_PATH;
}

CommandResult run_nmc(const std::string& args, const std::string& scratch_dir) {
    return run_nmc_in("", args, scratch_dir);
}

CommandResult run_nmc_in(const std::string& working_dir, const std::string& args, const std::string& scratch_dir) {
    // Absolute paths: the binary and the capture files must not move with the working directory.
    const std::string binary = std::filesystem::absolute(nmc_binary()).string();
    const std::string prefix = std::filesystem::absolute(scratch_dir).string() + "/nmc_" + std::to_string(::getpid());
    const std::string out_path = prefix + "_stdout.txt";
    const std::string err_path = prefix + "_stderr.txt";
    std::string command = "'" + binary + "' " + args;
    if (!working_dir.empty()) command = "(cd '" + working_dir + "' && " + command + ")";
    command += " >'" + out_path + "' 2>'" + err_path + "'";
    const int status = std::system(command.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    return r;
}

}  // namespace nmc::test
