// Working folders and per-material claims of batches sharing one output tree (batch_claims.h).
#include "batch/batch_claims.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "core/file_io.h"

namespace nmc {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A claim is one line of JSON; anything longer is not a claim.
constexpr uint64_t kMaxClaimBytes = 4096;

std::optional<std::string> read_text(const std::string& path) {
    auto bytes = read_file(path, kMaxClaimBytes);
    if (!bytes.ok()) return std::nullopt;
    return std::string(bytes->begin(), bytes->end());
}

std::string claim_text(const BatchOwner& owner) {
    return Json{{"host", owner.host}, {"pid", owner.pid}}.dump() + "\n";
}

std::optional<BatchOwner> claim_owner(const std::string& text) {
    const Json j = Json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("host") || !j["host"].is_string() || !j.contains("pid") ||
        !j["pid"].is_number_unsigned())
        return std::nullopt;
    return BatchOwner{j["host"].get<std::string>(), j["pid"].get<long>()};
}

// "<host>-<pid>" back into its parts (a host name may hold dashes, a pid does not); nullopt for other names.
std::optional<BatchOwner> folder_owner(const std::string& name) {
    const size_t dash = name.rfind('-');
    if (dash == std::string::npos || dash == 0) return std::nullopt;
    const std::string pid = name.substr(dash + 1);
    if (pid.empty() || pid.size() > 9 ||
        !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return BatchOwner{name.substr(0, dash), std::stol(pid)};
}

bool modified_recently(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    return std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime) < kBatchStaleAfter;
}

// The one rule for whether a batch that owns a folder or a claim still runs.
bool batch_alive(const BatchOwner& owner, const std::string& work_dir, const BatchOwner& me) {
    if (owner.host != me.host) return modified_recently((fs::path(work_dir) / owner.folder_name()).string());
    // This process never asks about what it holds itself: its own name is an earlier process's with this pid.
    if (owner.pid == me.pid || owner.pid <= 0) return false;
    return ::kill(static_cast<pid_t>(owner.pid), 0) == 0 || errno == EPERM;
}

}  // namespace

BatchOwner this_batch() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return BatchOwner{host, static_cast<long>(::getpid())};
}

void remove_stale_batch_folders(const std::string& work_dir, const BatchOwner& me) {
    std::error_code ec;
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(work_dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code type_ec;
        const std::optional<BatchOwner> owner = folder_owner(it->path().filename().string());
        if (it->is_directory(type_ec) && owner && !batch_alive(*owner, work_dir, me)) stale.push_back(it->path());
    }
    for (const fs::path& p : stale) fs::remove_all(p, ec);
}

void refresh_batch_folder(const std::string& folder) {
    ::utimensat(AT_FDCWD, folder.c_str(), nullptr, 0);
}

std::string claim_path(const std::string& pack_path) {
    return pack_path + ".claim";
}

Result<bool> claim_material(const std::string& pack_path, const std::string& work_dir, const BatchOwner& me) {
    const std::string path = claim_path(pack_path);
    const std::string mine = claim_text(me);
    // Two rounds: a claim found stale is removed and the creation tried once more. A batch that loses a race to
    // another one asks again later.
    for (int round = 0; round < 2; ++round) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            const ssize_t written = ::write(fd, mine.data(), mine.size());
            const int write_errno = errno;
            const bool closed = ::close(fd) == 0;
            if (written == static_cast<ssize_t>(mine.size()) && closed) return true;
            const std::string why = written < 0 ? std::strerror(write_errno)
                                    : closed    ? "short write"
                                                : std::strerror(errno);
            ::unlink(path.c_str());
            return Status(StatusCode::io_error, path + ": cannot write the claim: " + why);
        }
        if (errno != EEXIST)
            return Status(StatusCode::io_error, path + ": cannot create the claim: " + std::strerror(errno));
        const std::optional<std::string> held = read_text(path);
        if (!held) continue;  // released in between
        const std::optional<BatchOwner> owner = claim_owner(*held);
        // A claim without a readable owner is being written now, or was left by a batch that died doing so.
        if (owner ? batch_alive(*owner, work_dir, me) : modified_recently(path)) return false;
        // Its batch is gone. Move the claim aside and delete it only when it is the one judged stale: another batch
        // may have taken it over in between, and a claim moved by mistake is put back (if a third batch claimed the
        // material meanwhile, two batches compress it: the same pack, written atomically twice).
        const std::string aside = path + ".stale-" + me.folder_name();
        if (::rename(path.c_str(), aside.c_str()) != 0) continue;
        if (read_text(aside) == held) {
            ::unlink(aside.c_str());
            continue;
        }
        ::link(aside.c_str(), path.c_str());
        ::unlink(aside.c_str());
        return false;
    }
    return false;
}

void release_claim(const std::string& pack_path, const BatchOwner& me) {
    const std::string path = claim_path(pack_path);
    if (read_text(path) == claim_text(me)) ::unlink(path.c_str());
}

}  // namespace nmc
