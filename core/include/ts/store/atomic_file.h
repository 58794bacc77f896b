// SPDX-License-Identifier: GPL-3.0-or-later
// Files that are either whole or absent: a reader (or a crash) never sees half of one.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ts {

/// A failed write. what() names the file: "PATH: cannot write: No space left on device".
class FileWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes all of `data` to the open descriptor `fd` (short writes and EINTR are retried). `path`
/// only names the file in the error.
void write_all(int fd, std::string_view data, const std::string& path);

/// Writes `path` atomically: `write_body(fd)` fills a temp file "PATH.tmp.PID" in the same
/// directory (created if missing), which is then fsynced, renamed over `path`, and the directory
/// fsynced. When anything fails, write_body's own exceptions included, the temp file is removed
/// and an existing `path` is left as it was.
void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write_body);
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace ts
