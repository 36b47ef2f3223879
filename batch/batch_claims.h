// How batches share one output tree (docs/cli.md, "Sharing OUT"): each running batch has a working folder
// OUT/.nmc-batch/<host>-<pid> whose modification time is its heartbeat, and holds a claim file <pack>.claim, created
// atomically (O_EXCL), for each material it is compressing; claims of batches that are gone are taken over and their
// folders removed. Internal to nmc_batch (batch_runner.cpp).
#pragma once

#include <chrono>
#include <string>

#include "core/status.h"

namespace nmc {

// How often a batch refreshes its working folder's modification time, and how old it must be before batches on
// other hosts take it for gone (a process on this host is asked directly). The margin covers file-server caching and
// clocks that differ by minutes.
constexpr std::chrono::seconds kBatchHeartbeat{30};
constexpr std::chrono::minutes kBatchStaleAfter{10};

// A batch as it names its working folder and its claims.
struct BatchOwner {
    std::string host;  // gethostname()
    long pid = 0;
    std::string folder_name() const { return host + "-" + std::to_string(pid); }
};
BatchOwner this_batch();

// Removes the working folders under `work_dir` (OUT/.nmc-batch) of batches that are gone: on this host, a process
// that no longer runs (or one in this process's own name, left by an earlier process with the same pid); on another
// host, a folder not refreshed for kBatchStaleAfter. Folders whose names are not <host>-<pid> are left alone.
void remove_stale_batch_folders(const std::string& work_dir, const BatchOwner& me);

// Sets the modification time of this batch's working folder to now: the heartbeat other hosts read.
void refresh_batch_folder(const std::string& folder);

// "<pack>.claim": the file that says which batch is compressing that pack's material.
std::string claim_path(const std::string& pack_path);

// Claims the material of `pack_path` for `me`: creates its claim file with O_EXCL, or takes over a claim whose batch
// is gone (as remove_stale_batch_folders judges; a claim that cannot be read is gone when its file is older than
// kBatchStaleAfter). Returns true when claimed, false when a live batch holds it (ask again later). io_error when the
// claim cannot be created (an unwritable OUT).
Result<bool> claim_material(const std::string& pack_path, const std::string& work_dir, const BatchOwner& me);

// Removes the material's claim if it is still `me`'s.
void release_claim(const std::string& pack_path, const BatchOwner& me);

}  // namespace nmc
