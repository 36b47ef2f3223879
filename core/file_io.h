// Whole-file reads with a size limit, and atomic writes: output goes to a temporary file in the destination
// folder and is renamed over the destination only when complete, so an interrupted write never leaves a
// half-written file and never damages an existing one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace nmc {

// Reads a whole file. Fails with io_error (missing, unreadable) or limit_exceeded (larger than max_bytes).
Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes);

enum class Overwrite { refuse, allow };

// Writes `size` bytes to `path` atomically: to a temporary file beside it (PATH.tmp-PID-N), fsync'ed, then renamed
// over `path`. Every write, the fsync and the close are checked: a failure (a full disk, a file size limit) is an
// io_error naming the file and the reason, the temporary file is removed, and `path` is left as it was. Every
// file nmc writes goes through here (packs, images, reports, manifests).
Status write_file_atomically(const std::string& path, const void* data, size_t size,
                             Overwrite overwrite = Overwrite::allow);

// A file written a piece at a time, atomically: the pieces go to a temporary file beside `path` (PATH.tmp-PID-N);
// commit() fsyncs it and renames it over `path`. Every write is checked; after a failure (an io_error naming `path`
// and the reason) the writer refuses further writes. Destroyed without a successful commit(), it removes the
// temporary file and leaves `path` as it was. For outputs too large to hold in memory (decoded textures).
class AtomicFile {
public:
    // Creates the temporary file; io_error if `path` exists and overwrite is refused, or no file can be created.
    static Result<AtomicFile> create(const std::string& path, Overwrite overwrite = Overwrite::allow);
    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    // Writes at the end; write_at() at `offset` (for formats that go back to fill in a table of offsets).
    Status append(const void* data, size_t size) { return write_at(size_, data, size); }
    Status write_at(uint64_t offset, const void* data, size_t size);
    Status commit();
    const std::string& path() const { return path_; }
    uint64_t size() const { return size_; }
    // The first failure of a write, or success.
    const Status& status() const { return failed_; }

private:
    AtomicFile(std::string path, std::string temp_path, int fd, Overwrite overwrite)
        : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), overwrite_(overwrite) {}
    std::string path_;
    std::string temp_path_;
    int fd_ = -1;
    uint64_t size_ = 0;
    Overwrite overwrite_;
    Status failed_;
    bool committed_ = false;
};

// Creates folder `dir` and its missing parents (mode 0755); an existing folder is success. io_error naming the
// folder that could not be made and why.
Status make_directories(const std::string& dir);

// Makes sure, before expensive work, that write_file_atomically(path, ..., overwrite) can write `path`: it is not
// a folder, it does not exist unless `overwrite` allows, its folder exists (created with its parents if missing,
// as make_directories()) and a file can be created there (a temporary file beside `path` is created and
// removed). io_error naming `path` and the problem. A missing folder it created is kept.
Status prepare_output_file(const std::string& path, Overwrite overwrite);

}  // namespace nmc
