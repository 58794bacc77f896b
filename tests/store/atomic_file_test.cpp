// SPDX-License-Identifier: GPL-3.0-or-later
#include "ts/store/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, WritesTheBytesAndCreatesMissingDirectories) {
  test::TempDir dir;
  const auto path = dir.file("a/b/out.bin");
  const std::string bytes("one\0two\nthree", 13);
  write_file_atomically(path, bytes);
  EXPECT_EQ(read(path), bytes);
  write_file_atomically(path, [&](int fd) {  // in several pieces, replacing the file
    write_all(fd, "first ", path);
    write_all(fd, "second", path);
  });
  EXPECT_EQ(read(path), "first second");
  EXPECT_EQ(entries(dir.file("a/b")), 1u) << "a temp file was left beside the target";
}

TEST(AtomicFile, AFailingBodyLeavesTheOldFileAndNoTempFile) {
  test::TempDir dir;
  const auto path = dir.write("keep.txt", "the previous version");
  EXPECT_THROW(write_file_atomically(path,
                                     [&](int fd) {
                                       write_all(fd, "half of the new ", path);
                                       throw std::runtime_error("disk full");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read(path), "the previous version");
  EXPECT_EQ(entries(dir.str()), 1u);
}

TEST(AtomicFile, ErrorsNameTheFile) {
  test::TempDir dir;
  // A directory where the file should go: the temp file is written, the rename over it fails.
  fs::create_directories(dir.file("taken"));
  try {
    write_file_atomically(dir.file("taken"), "x");
    FAIL() << "renamed a file over a directory";
  } catch (const FileWriteError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("taken") + ": cannot rename into place"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(entries(dir.str()), 1u);
  // A descriptor that cannot be written to.
  try {
    write_all(-1, "x", "/some/file");
    FAIL();
  } catch (const FileWriteError& e) {
    EXPECT_EQ(std::string(e.what()), "/some/file: cannot write: Bad file descriptor");
  }
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir.file("locked"));
    ::chmod(dir.file("locked").c_str(), 0500);
    try {
      write_file_atomically(dir.file("locked/out.txt"), "x");
      FAIL();
    } catch (const FileWriteError& e) {
      EXPECT_NE(std::string(e.what()).find("locked/out.txt: cannot create: Permission denied"), std::string::npos)
          << e.what();
    }
    ::chmod(dir.file("locked").c_str(), 0700);
  }
}

}  // namespace
}  // namespace ts
