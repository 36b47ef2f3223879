// Running the built nmc executable from tests.
#include "tests/cli/nmc_process.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
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

// Reads both pipes until both are closed (in turn, so that neither fills up and blocks the child).
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    std::string* sinks[2] = {&out, &err};
    int open_count = 2;
    while (open_count > 0) {
        if (::poll(fds, 2, -1) < 0) return;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<size_t>(n));
            } else {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
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

namespace {

// Runs `nmc <args>` in a child process with `resource` limited to `bytes` (setrlimit), stdout and stderr through
// pipes, and its peak resident memory from wait4.
CommandResult run_nmc_with_rlimit(const std::string& args, int resource, uint64_t bytes) {
    const std::string command = "exec '" + std::filesystem::absolute(nmc_binary()).string() + "' " + args;
    int out_pipe[2], err_pipe[2];
    CommandResult r;
    if (::pipe(out_pipe) != 0) return r;
    if (::pipe(err_pipe) != 0) {
        ::close(out_pipe[0]);
        ::close(out_pipe[1]);
        return r;
    }
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(out_pipe[1], STDOUT_FILENO);
        ::dup2(err_pipe[1], STDERR_FILENO);
        for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
        const rlimit limit{bytes, bytes};
        std::signal(SIGXFSZ, SIG_IGN);  // an ignored signal stays ignored across exec
        if (::setrlimit(resource, &limit) != 0) ::_exit(125);
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (child < 0) {
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        return r;
    }
    drain(out_pipe[0], err_pipe[0], r.out, r.err);
    int status = 0;
    rusage usage{};
    if (::wait4(child, &status, 0, &usage) == child) {
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        r.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
    }
    return r;
}

}  // namespace

CommandResult run_nmc_with_file_size_limit(const std::string& args, uint64_t max_file_bytes) {
    return run_nmc_with_rlimit(args, RLIMIT_FSIZE, max_file_bytes);
}

CommandResult run_nmc_with_memory_limit(const std::string& args, uint64_t max_address_space_bytes) {
    return run_nmc_with_rlimit(args, RLIMIT_AS, max_address_space_bytes);
}

bool address_sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

ScopedEnvironment::ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* previous = std::getenv(name)) previous_ = previous;
    ::setenv(name, value.c_str(), 1);
}

ScopedEnvironment::~ScopedEnvironment() {
    if (previous_)
        ::setenv(name_, previous_->c_str(), 1);
    else
        ::unsetenv(name_);
}

}  // namespace nmc::test
