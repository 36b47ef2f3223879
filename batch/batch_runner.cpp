// nmc batch's job runner: one `nmc compress` child process per claimed material, at most `jobs` at once, each with
// its share of the CPU threads or its own GPU; records written after each child's pack (batch.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch.h"
#include "batch/batch_claims.h"
#include "batch/compress_result.h"
#include "core/file_io.h"

extern char** environ;

namespace nmc {
namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// `nmc compress`'s exit code when SIGINT or SIGTERM stopped it (cli/exit_codes.h kExitCancelled).
constexpr int kCompressInterrupted = 10;

// Whether a child stopped because it was interrupted (it exits 10 on SIGINT and SIGTERM; killed by one of them before
// its handler was installed), not because its material failed.
bool child_was_interrupted(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status) == kCompressInterrupted;
    return WIFSIGNALED(wait_status) && (WTERMSIG(wait_status) == SIGINT || WTERMSIG(wait_status) == SIGTERM);
}

// A child's result file is one JSON object and its stderr a few lines; bounded reads all the same.
constexpr uint64_t kMaxChildOutputBytes = 16u << 20;

struct Running {
    pid_t pid = -1;
    size_t job = 0;
    Clock::time_point start;
    std::string out_path, err_path, result_path;
};

std::string format_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::vector<std::string> child_arguments(const BatchJob& job, const BatchRunOptions& o, const std::string& device,
                                         const std::string& result_path) {
    const BatchSettings& s = o.settings;
    std::vector<std::string> args = {o.nmc_executable, "-q", "compress", job.material.input, "-o",
                                     job.material.output, "--force", "--result", result_path, "--bpp",
                                     format_number(s.bpp), "--quality", s.quality, "--seed", std::to_string(s.seed),
                                     "--device", device, "--arithmetic", s.arithmetic, "--normal-mode", s.normal_mode,
                                     "--address-mode", s.address_mode};
    if (s.resample) args.push_back("--resample");
    if (s.gloss_to_roughness) args.push_back("--gloss-to-roughness");
    if (s.target_psnr > 0) args.insert(args.end(), {"--target-psnr", format_number(s.target_psnr)});
    if (s.steps > 0) args.insert(args.end(), {"--steps", std::to_string(s.steps)});
    if (s.batch_size > 0) args.insert(args.end(), {"--batch", std::to_string(s.batch_size)});
    if (o.strict) args.push_back("--strict");
    return args;
}

// The parent's environment with the children's OpenMP thread count (threads > 0; 0 keeps the parent's) and,
// unless the caller chose one, OMP_WAIT_POLICY=PASSIVE: children share the cores with their siblings (and
// often with other work), and spinning OpenMP workers then starve each other; measured on a loaded 2-core
// machine, a 20-step compress took 28 s with spinning workers and 1.5 s with passive ones.
std::vector<std::string> child_environment(int threads) {
    std::vector<std::string> env;
    bool has_wait_policy = false;
    for (char** e = environ; e && *e; ++e) {
        const std::string v = *e;
        if (threads > 0 && (v.rfind("OMP_NUM_THREADS=", 0) == 0 || v.rfind("MKL_NUM_THREADS=", 0) == 0)) continue;
        has_wait_policy = has_wait_policy || v.rfind("OMP_WAIT_POLICY=", 0) == 0;
        env.push_back(v);
    }
    if (threads > 0) {
        env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
        env.push_back("MKL_NUM_THREADS=" + std::to_string(threads));
    }
    if (!has_wait_policy) env.push_back("OMP_WAIT_POLICY=PASSIVE");
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> p;
    for (std::string& s : v) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
}

// fork + execve with stdout and stderr redirected to files. Everything the child touches is prepared before
// fork, so the child only calls async-signal-safe functions.
Result<pid_t> spawn(std::vector<std::string> args, std::vector<std::string> env, const std::string& out_path,
                    const std::string& err_path) {
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = out_fd < 0 ? -1 : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0 || err_fd < 0) {
        const std::string why = std::strerror(errno);
        if (out_fd >= 0) ::close(out_fd);
        return Status(StatusCode::io_error, out_path + ": cannot create a child's output file: " + why);
    }
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
#ifdef __linux__
        // The child dies with the batch (kill -9 included), so no orphan keeps training; its pack is written
        // by rename, so a killed child leaves at most a temporary file, never a half-written pack.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
#endif
        ::dup2(out_fd, STDOUT_FILENO);
        ::dup2(err_fd, STDERR_FILENO);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::close(out_fd);
    ::close(err_fd);
    if (pid < 0) return Status(StatusCode::io_error, std::string("cannot start a child process: ") + std::strerror(fork_errno));
    return pid;
}

std::string read_text(const std::string& path) {
    auto bytes = read_file(path, kMaxChildOutputBytes);
    return bytes.ok() ? std::string(bytes->begin(), bytes->end()) : std::string();
}

// The child's last error line, without the "nmc: error: " prefix.
std::string last_error_line(const std::string& err) {
    std::string last;
    size_t start = 0;
    while (start < err.size()) {
        size_t end = err.find('\n', start);
        if (end == std::string::npos) end = err.size();
        std::string line = err.substr(start, end - start);
        const size_t cr = line.rfind('\r');  // progress lines
        if (cr != std::string::npos) line = line.substr(cr + 1);
        if (!line.empty()) last = line;
        start = end + 1;
    }
    const std::string prefix = "nmc: error: ";
    if (last.rfind(prefix, 0) == 0) last = last.substr(prefix.size());
    return last;
}

MaterialRecord finished_record(const BatchJob& job, const Running& r, int wait_status) {
    MaterialRecord rec;
    rec.relative = job.material.relative;
    rec.output = job.material.output;
    rec.fingerprint = job.fingerprint;
    rec.sources = job.sources;
    rec.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
    if (WIFSIGNALED(wait_status)) {
        rec.status = "failed";
        rec.exit_code = -1;
        rec.error = "nmc compress was killed by signal " + std::to_string(WTERMSIG(wait_status));
        return rec;
    }
    rec.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    const Json j = Json::parse(read_text(r.result_path), nullptr, false);
    if (j.is_object() && j.value("result_version", 0) != kCompressResultVersion) {
        rec.status = "failed";
        rec.error = "nmc compress wrote a result of version " + j.value("result_version", Json(0)).dump() +
                    "; this nmc batch reads version " + std::to_string(kCompressResultVersion);
        return rec;
    }
    if (rec.exit_code != 0) {
        rec.status = "failed";
        // The result's error; a child that failed before it could write one (its command line refused) left it on
        // stderr only.
        if (j.is_object() && j.contains("error") && j["error"].is_string()) rec.error = j["error"].get<std::string>();
        if (rec.error.empty()) rec.error = last_error_line(read_text(r.err_path));
        if (rec.error.empty()) rec.error = "nmc compress exited with code " + std::to_string(rec.exit_code);
        return rec;
    }
    const auto is_ignored_image = [](const Json& i) {
        return i.is_object() && i.contains("file") && i["file"].is_string() && i.contains("reason") &&
               i["reason"].is_string();
    };
    if (!j.is_object() || !j.contains("source_bytes") || !j.contains("bcn_bytes") ||
        !j["source_bytes"].is_number_unsigned() || !j["bcn_bytes"].is_number_unsigned() ||
        !j.contains("ignored_images") || !j["ignored_images"].is_array() ||
        !std::all_of(j["ignored_images"].begin(), j["ignored_images"].end(), is_ignored_image)) {
        rec.status = "failed";
        rec.error = "nmc compress succeeded but wrote no result file";
        return rec;
    }
    rec.source_bytes = j["source_bytes"].get<uint64_t>();
    rec.bcn_bytes = j["bcn_bytes"].get<uint64_t>();
    for (const Json& i : j["ignored_images"])
        rec.ignored_images.push_back({i["file"].get<std::string>(), i["reason"].get<std::string>()});
    if (j.contains("warnings") && j["warnings"].is_array())
        for (const Json& w : j["warnings"])
            if (w.is_string()) rec.warnings.push_back(w.get<std::string>());
    if (j.contains("textures") && j["textures"].is_array())
        for (const Json& t : j["textures"])
            if (t.is_object() && t.value("texture", Json()).is_string() && t.contains("structure") &&
                t["structure"].is_object() && t["structure"].value("collapsed", false) == true)
                rec.collapsed.push_back(t["texture"].get<std::string>());
    const Status filled = fill_record_from_pack(job.material.output, rec);
    rec.status = filled.ok() ? "ok" : "failed";
    if (!filled.ok()) rec.error = "the written pack does not read back: " + filled.to_string();
    return rec;
}

// Temporary files of an earlier writer of this pack that was killed before its rename (core/file_io.h names
// them PACK.tmp-PID-N), and stale claims a killed batch had moved aside (batch_claims.cpp). Called by the batch that
// holds the material's claim, so no live writer owns them.
void remove_stale_temporaries(const std::string& output) {
    const fs::path out(output);
    const std::string prefixes[] = {out.filename().string() + ".tmp-", out.filename().string() + ".state.json.tmp-",
                                    fs::path(claim_path(output)).filename().string() + ".stale-"};
    std::error_code ec;
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(out.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        for (const std::string& prefix : prefixes)
            if (name.rfind(prefix, 0) == 0) stale.push_back(it->path());
    }
    for (const fs::path& p : stale) fs::remove(p, ec);
}

// A material that another live batch holds, asked for again after a while.
struct Waiting {
    size_t job = 0;
    Clock::time_point retry;
};
constexpr std::chrono::seconds kClaimRetry{1};

}  // namespace

Status run_batch(const std::vector<BatchJob>& plan, const BatchRunOptions& options, const BatchCallback& callback,
                 std::vector<MaterialRecord>& records) {
    if (options.jobs < 1) return Status(StatusCode::invalid_argument, "jobs must be at least 1");
    const BatchOwner me = this_batch();
    remove_stale_batch_folders(options.work_dir, me);
    const std::string folder = (fs::path(options.work_dir) / me.folder_name()).string();
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return Status(StatusCode::io_error, folder + ": cannot create: " + ec.message());

    records.assign(plan.size(), MaterialRecord{});
    std::vector<size_t> queue;
    for (size_t i = 0; i < plan.size(); ++i) {
        records[i].relative = plan[i].material.relative;
        records[i].output = plan[i].material.output;
        records[i].fingerprint = plan[i].fingerprint;
        records[i].sources = plan[i].sources;
        if (plan[i].action == BatchAction::skip) {
            records[i] = plan[i].existing;
            records[i].status = "skipped";
        } else {
            records[i].status = "pending";
            queue.push_back(i);
        }
    }

    const auto start = Clock::now();
    auto last_tick = start;
    auto last_heartbeat = start;
    BatchEvent event;
    event.total = static_cast<int>(queue.size());
    // Asks the callback whether to go on (between events, a few times a second).
    const auto tick = [&] {
        event.kind = BatchEvent::Kind::tick;
        event.job = nullptr;
        event.record = nullptr;
        event.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return !callback || callback(event);
    };
    const auto notify = [&](BatchEvent::Kind kind, size_t job, const MaterialRecord* record) {
        event.kind = kind;
        event.job = &plan[job];
        event.record = record;
        event.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        event.eta_seconds = event.done > 0 ? event.elapsed_seconds / event.done * (event.total - event.done) : -1;
        return !callback || callback(event);
    };

    std::vector<Running> running;
    std::vector<Waiting> waiting;
    std::vector<bool> announced(plan.size(), false);  // a waiting event was sent
    std::vector<bool> slot_busy(static_cast<size_t>(options.jobs), false);
    std::vector<size_t> slot_of(plan.size(), 0);
    size_t next = 0;
    bool cancelled = false;
    Status spawn_failure;
    // The next job to start: the plan's order, then the waiting ones whose time to ask again has come.
    const auto next_job = [&]() -> std::optional<size_t> {
        if (next < queue.size()) return queue[next++];
        const auto due =
            std::find_if(waiting.begin(), waiting.end(), [](const Waiting& w) { return w.retry <= Clock::now(); });
        if (due == waiting.end()) return std::nullopt;
        const size_t job = due->job;
        waiting.erase(due);
        return job;
    };
    // A job that ends without a child of this batch: its record is final (written when `store`), and the claim is
    // released if this batch holds it.
    const auto finish_without_child = [&](size_t job, bool store) {
        ++event.done;
        if (store) (void)write_record(record_path(plan[job].material), records[job]);
        release_claim(plan[job].material.output, me);
        if (!notify(BatchEvent::Kind::finished, job, &records[job])) cancelled = true;
    };
    while (true) {
        while (!cancelled && spawn_failure.ok() && running.size() < static_cast<size_t>(options.jobs)) {
            const std::optional<size_t> picked = next_job();
            if (!picked) break;
            const size_t job = *picked;
            const BatchJob& j = plan[job];
            fs::create_directories(fs::path(j.material.output).parent_path(), ec);
            const Result<bool> claimed = claim_material(j.material.output, options.work_dir, me);
            if (!claimed.ok()) {  // an unwritable OUT: fails like a child that could not write
                records[job].status = "failed";
                records[job].error = claimed.status().to_string();
                records[job].exit_code = 3;
                finish_without_child(job, false);
                continue;
            }
            if (!*claimed) {
                waiting.push_back({job, Clock::now() + kClaimRetry});
                if (!announced[job] && !notify(BatchEvent::Kind::waiting, job, nullptr)) cancelled = true;
                announced[job] = true;
                continue;
            }
            if (std::optional<MaterialRecord> done = recorded_elsewhere(j, options.settings, options.strict)) {
                records[job] = std::move(*done);
                finish_without_child(job, false);
                continue;
            }
            if (j.fingerprint.empty()) {  // sources unreadable: fails without a child
                records[job].status = "failed";
                records[job].error = j.hash_error;
                records[job].exit_code = 3;
                finish_without_child(job, true);
                continue;
            }
            const size_t slot = static_cast<size_t>(std::find(slot_busy.begin(), slot_busy.end(), false) -
                                                    slot_busy.begin());
            const std::string device = slot_device(options.devices, slot);
            remove_stale_temporaries(j.material.output);
            Running r;
            r.job = job;
            r.start = Clock::now();
            r.out_path = (fs::path(folder) / ("job-" + std::to_string(job) + ".out")).string();
            r.err_path = (fs::path(folder) / ("job-" + std::to_string(job) + ".err")).string();
            r.result_path = (fs::path(folder) / ("job-" + std::to_string(job) + ".result.json")).string();
            auto pid = spawn(child_arguments(j, options, device, r.result_path),
                             child_environment(std::max(0, options.threads_per_job)),
                             r.out_path, r.err_path);
            if (!pid.ok()) {
                release_claim(j.material.output, me);
                spawn_failure = pid.status();
                break;
            }
            r.pid = *pid;
            slot_busy[slot] = true;
            slot_of[job] = slot;
            running.push_back(r);
            if (!notify(BatchEvent::Kind::started, job, nullptr)) cancelled = true;
        }
        if (running.empty() && (cancelled || !spawn_failure.ok() || (next >= queue.size() && waiting.empty()))) break;
        if (cancelled)
            for (const Running& r : running) ::kill(r.pid, SIGINT);

        bool reaped = false;
        for (size_t k = 0; k < running.size();) {
            int wait_status = 0;
            const pid_t done = ::waitpid(running[k].pid, &wait_status, WNOHANG);
            if (done == 0 || (done < 0 && errno == EINTR)) {
                ++k;
                continue;
            }
            reaped = true;
            const Running r = running[k];
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
            slot_busy[slot_of[r.job]] = false;
            // Ctrl-C reaches the whole process group, so a child may exit interrupted before this batch has seen its
            // own signal: ask now, so that the material stays pending instead of failing.
            if (!cancelled && child_was_interrupted(wait_status) && !tick()) cancelled = true;
            MaterialRecord rec = finished_record(plan[r.job], r, wait_status);
            std::remove(r.out_path.c_str());
            std::remove(r.err_path.c_str());
            std::remove(r.result_path.c_str());
            // A child we interrupted wrote nothing: the material stays pending, its old record stands.
            if (cancelled && rec.status == "failed") {
                release_claim(plan[r.job].material.output, me);
                continue;
            }
            records[r.job] = std::move(rec);
            const Status stored = write_record(record_path(plan[r.job].material), records[r.job]);
            if (!stored.ok() && records[r.job].status == "ok") {
                records[r.job].status = "failed";
                records[r.job].error = "cannot write the record: " + stored.to_string();
            }
            // After the record: a batch waiting for the material finds what this one made.
            release_claim(plan[r.job].material.output, me);
            ++event.done;
            if (!notify(BatchEvent::Kind::finished, r.job, &records[r.job])) cancelled = true;
        }
        if (Clock::now() - last_heartbeat > kBatchHeartbeat) {
            last_heartbeat = Clock::now();
            refresh_batch_folder(folder);
        }
        if (!reaped) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (!cancelled && Clock::now() - last_tick > std::chrono::milliseconds(200)) {
                last_tick = Clock::now();
                if (!tick()) cancelled = true;
            }
        }
    }
    fs::remove_all(folder, ec);
    if (!spawn_failure.ok()) return spawn_failure;
    if (cancelled) return Status(StatusCode::cancelled, "interrupted");
    return Status::success();
}

}  // namespace nmc
