// SPDX-License-Identifier: GPL-3.0-or-later
// Atomic file writes (see ts/store/atomic_file.h).
#include "ts/store/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ts {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw FileWriteError(path + ": " + what); }

}  // namespace

void write_all(int fd, std::string_view data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("cannot write: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write_body) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, std::string("cannot create: ") + std::strerror(errno));
  try {
    write_body(fd);
    if (::fsync(fd) != 0) fail(path, std::string("fsync failed: ") + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {  // NFS and some FUSE file systems report a failed write only here
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path, "cannot write: " + reason);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path, "cannot rename into place: " + reason);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, [&](int fd) { write_all(fd, bytes, path); });
}

}  // namespace ts
