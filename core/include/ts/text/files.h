// SPDX-License-Identifier: GPL-3.0-or-later
// Checks before a file is opened for reading: a FIFO would block the reader forever, a device could
// stream without end, and a directory gives a confusing error later. Every reader of user files
// (corpus, text, config, checkpoint, run store) asks here first. Header-only, so that the run
// store (which does not link ts_text) can use it too.
#pragma once

#include <string>

#include <sys/stat.h>

namespace ts {

/// "" for a regular file (symlinks followed) or a path that does not exist (the caller's open
/// reports that); otherwise what it is instead: "a directory", "a FIFO (named pipe)", "a socket",
/// "a character device", "a block device".
inline std::string special_file_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // missing or unreadable: the open that follows says why
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  return "not a regular file";
}

}  // namespace ts
