// A tool's exit status with its standard output accounted for: output it could not write (a
// full disk, /dev/full) is an error, never a silent success.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tgemm::cli {

// `status` once standard output is flushed; when anything written to it was lost, a message
// on standard error and 1 in place of a success.
inline int checked_exit(const char* tool, int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout)) return status;
  fmt::print(stderr,
             "{}: error: standard output could not be written{}{}; what it shows is incomplete\n",
             tool, error ? ": " : "", error ? std::strerror(error) : "");
  return status == 0 ? 1 : status;
}

}  // namespace tgemm::cli
