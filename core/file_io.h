// Whole-file reads with a size limit, and atomic writes: output goes to a temporary file in the destination
// folder and is renamed over the destination only when complete, so an interrupted write never leaves a
// half-written file and never damages an existing one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace nmc {

// Reads a whole file. Fails with io_error (missing, unreadable) or limit_exceeded (larger than max_bytes).
Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes);

enum class Overwrite { refuse, allow };

// Writes `size` bytes to `path` atomically (temporary file + fsync + rename).
Status write_file_atomically(const std::string& path, const void* data, size_t size,
                             Overwrite overwrite = Overwrite::allow);

// A temporary path next to a destination, for writers that need a file name (image libraries): write to
// temp_path(), then commit(). Destroying an uncommitted AtomicOutputPath removes the temporary file.
class AtomicOutputPath {
public:
    explicit AtomicOutputPath(std::string destination);
    ~AtomicOutputPath();
    AtomicOutputPath(const AtomicOutputPath&) = delete;
    AtomicOutputPath& operator=(const AtomicOutputPath&) = delete;

    const std::string& temp_path() const { return temp_path_; }
    const std::string& destination() const { return destination_; }
    // Renames the temporary file over the destination (fails if overwrite is refused and it exists).
    Status commit(Overwrite overwrite = Overwrite::allow);

private:
    std::string destination_;
    std::string temp_path_;
    bool committed_ = false;
};

}  // namespace nmc
