// The library's log belongs to the library, not to the application: a warning goes to standard
// error, never to standard output, and text from a path or a database reaches it with its
// control characters escaped, so it cannot move the cursor or forge a line of its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/common/temp_dir.h"
#include "tgemm/tgemm_c.h"

namespace {

using tgemm::testing::read_bytes;
using tgemm::testing::TempDir;

struct Streams {
  int exit_code = -1;
  std::string out, err;
};

// Runs `body` in a child process whose standard output and error go to files.
Streams in_child(const std::function<int()>& body) {
  TempDir dir("library_log");
  const std::string out = dir.file("out"), err = dir.file("err");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      _exit(100);
    const int code = body();
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_bytes(out),
          read_bytes(err)};
}

TEST(LibraryLog, warns_on_stderr_never_on_stdout) {
  const Streams s = in_child([] {
    tgemmHandle_t h = nullptr;
    if (tgemmCreate(&h, "/nonexistent/dir/tgemm.db") != TGEMM_STATUS_SUCCESS) return 1;
    return tgemmDestroy(h) == TGEMM_STATUS_SUCCESS ? 0 : 2;
  });
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "") << "the application's standard output was written";
  EXPECT_NE(s.err.find("tuning database unavailable"), std::string::npos) << s.err;
}

TEST(LibraryLog, escapes_control_characters_of_a_path) {
  const Streams s = in_child([] {
    tgemmHandle_t h = nullptr;
    if (tgemmCreate(&h, "/nonexistent/\x1b[2J\nforged line\r.db") != TGEMM_STATUS_SUCCESS) return 1;
    return tgemmDestroy(h) == TGEMM_STATUS_SUCCESS ? 0 : 2;
  });
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.err.find('\x1b'), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find('\r'), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("\nforged line"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("\\x1b[2J\\nforged line\\r.db"), std::string::npos) << s.err;
}

}  // namespace
