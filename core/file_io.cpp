// POSIX implementation of whole-file reads and atomic writes.
#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nmc {
namespace {

Status errno_status(const std::string& path, const char* what) {
    return Status(StatusCode::io_error, path + ": " + what + ": " + std::strerror(errno));
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::string make_temp_name(const std::string& destination) {
    static std::atomic<unsigned> counter{0};
    return destination + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(path, "cannot open");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        Status s = errno_status(path, "cannot stat");
        ::close(fd);
        return s;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status(StatusCode::io_error, path + ": not a regular file");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_bytes) {
        ::close(fd);
        return Status(StatusCode::limit_exceeded,
                      path + ": file is " + std::to_string(size) + " bytes, limit " + std::to_string(max_bytes));
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            Status s = errno_status(path, "read failed");
            ::close(fd);
            return s;
        }
        if (n == 0) break;
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    bytes.resize(done);  // a file that shrank while being read is read as it now is
    return bytes;
}

Result<AtomicFile> AtomicFile::create(const std::string& path, Overwrite overwrite) {
    if (overwrite == Overwrite::refuse && exists(path))
        return Status(StatusCode::io_error, path + ": exists (use --force to overwrite)");
    std::string temp_path = make_temp_name(path);
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    // Messages name the destination: the temporary file is gone by the time anyone reads them.
    if (fd < 0) {
        const int error = errno;
        return Status(StatusCode::io_error,
                      path + ": cannot create temporary file " + temp_path + ": " + std::strerror(error));
    }
    return AtomicFile(path, std::move(temp_path), fd, overwrite);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(other.fd_),
      size_(other.size_),
      overwrite_(other.overwrite_),
      failed_(std::move(other.failed_)),
      committed_(other.committed_) {
    other.fd_ = -1;
    other.committed_ = true;  // the moved-from object owns no temporary file
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_path_.c_str());
}

Status AtomicFile::write_at(uint64_t offset, const void* data, size_t size) {
    if (!failed_.ok()) return failed_;
    const auto* p = static_cast<const uint8_t*>(data);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd_, p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return failed_ = errno_status(path_, "write failed");
        // pwrite returns 0 only for size 0; guard against a file system that reports no progress.
        if (n == 0) return failed_ = Status(StatusCode::io_error, path_ + ": write failed: no progress");
        done += static_cast<size_t>(n);
    }
    size_ = std::max(size_, offset + size);
    return Status::success();
}

Status AtomicFile::commit() {
    if (!failed_.ok()) return failed_;
    if (::fsync(fd_) != 0) return failed_ = errno_status(path_, "fsync failed");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return failed_ = errno_status(path_, "close failed");
    if (overwrite_ == Overwrite::refuse && exists(path_))
        return failed_ = Status(StatusCode::io_error, path_ + ": exists (use --force to overwrite)");
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
        return failed_ = errno_status(path_, "cannot rename temporary file into place");
    committed_ = true;
    return Status::success();
}

Status write_file_atomically(const std::string& path, const void* data, size_t size, Overwrite overwrite) {
    Result<AtomicFile> file = AtomicFile::create(path, overwrite);
    if (!file.ok()) return file.status();
    NMC_RETURN_IF_ERROR(file->append(data, size));
    return file->commit();
}

Status make_directories(const std::string& dir) {
    std::string partial;
    for (size_t i = 0; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') {
            if (!partial.empty() && !exists(partial) && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
                return errno_status(partial, "cannot create folder");
        }
        if (i < dir.size()) partial += dir[i];
    }
    return Status::success();
}

Status prepare_output_file(const std::string& path, Overwrite overwrite) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return Status(StatusCode::io_error, path + ": is a folder; the output must be a file name");
        if (overwrite == Overwrite::refuse)
            return Status(StatusCode::io_error, path + ": exists (use --force to overwrite)");
    }
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0)
        if (Status made = make_directories(path.substr(0, slash)); !made.ok())
            return Status(StatusCode::io_error, path + ": " + made.message());
    // Permissions, a read-only file system or a parent that is a file show only when a file is created there.
    const std::string probe = make_temp_name(path);
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(path, "cannot create a file in its folder");
    ::close(fd);
    ::unlink(probe.c_str());
    return Status::success();
}

}  // namespace nmc
