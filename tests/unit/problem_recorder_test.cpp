// Record mode: each problem served without an exact tuned entry lands once in a shape file
// the problem-set loader reads, with its call count, from many threads and processes; a file
// that cannot be written never fails the caller. (The dispatcher's call of the recorder is
// a GPU test: a call is served only on a device.)
#include "src/dispatch/problem_recorder.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "src/core/error.h"
#include "tests/common/temp_dir.h"
#include "tgemm/tgemm_c.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

using testing::TempDir;

Problem problem(const std::string& dtype, const std::string& out, const std::string& layout,
                int64_t m, int64_t n, int64_t k) {
  Op op_a = Op::N, op_b = Op::N;
  parse_layout(layout, &op_a, &op_b);
  return Problem::packed(gemm_types(dtype, out), op_a, op_b, m, n, k);
}

// Calls per Problem::key() of a loaded shape file.
std::map<std::string, int64_t> calls_by_key(const std::string& path) {
  std::map<std::string, int64_t> calls;
  for (const NamedProblem& p : load_problem_set(path)) calls[p.problem.key()] = p.calls;
  return calls;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProblemRecorder, writes_each_problem_once_with_its_call_count_in_the_loaders_format) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  const Problem decode = problem("bf16", "", "NT", 16, 4096, 4096);
  const Problem wide_out = problem("f16", "f32", "TN", 127, 33, 65);
  const Problem tf32 = problem("tf32", "", "TT", 1, 1, 1);
  ProblemRecorder recorder;
  recorder.start(path);
  for (int i = 0; i < 3; ++i) recorder.note(decode);
  recorder.note(wide_out);
  recorder.note(tf32);
  recorder.stop();

  const auto loaded = load_problem_set(path);
  ASSERT_EQ(loaded.size(), 3u);
  const auto calls = calls_by_key(path);
  EXPECT_EQ(calls.at(decode.key()), 3);
  EXPECT_EQ(calls.at(wide_out.key()), 1);
  EXPECT_EQ(calls.at(tf32.key()), 1);
  // The first call's leading dimensions, alignments and beta stay readable as a comment.
  EXPECT_NE(read_text(path).find("# ld 4096.4096.4096 align 16.16.16 beta0 1"), std::string::npos)
      << read_text(path);
}

TEST(ProblemRecorder, a_new_shape_is_in_the_file_before_stop) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  ProblemRecorder recorder;
  recorder.start(path);
  recorder.note(problem("f32", "", "NN", 5, 6, 7));
  // A process killed now keeps the shape.
  EXPECT_EQ(load_problem_set(path).size(), 1u);
  recorder.note(problem("f32", "", "NN", 5, 6, 7));
  recorder.flush();
  EXPECT_EQ(load_problem_set(path)[0].calls, 2);
}

TEST(ProblemRecorder, counts_every_call_from_many_threads) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  const std::vector<Problem> shapes = {
      problem("f32", "", "NN", 64, 64, 64), problem("f16", "", "NT", 128, 256, 64),
      problem("bf16", "f32", "TN", 1, 4096, 4096), problem("f32x3", "", "TT", 3, 5, 7)};
  ProblemRecorder recorder;
  recorder.start(path);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        recorder.note(shapes[(i + t) % shapes.size()]);
        if (i % 100 == 0) recorder.flush();
      }
    });
  for (auto& thread : threads) thread.join();
  recorder.stop();
  const auto calls = calls_by_key(path);
  ASSERT_EQ(calls.size(), shapes.size());
  for (const Problem& p : shapes) EXPECT_EQ(calls.at(p.key()), 8 * 500 / 4) << p.key();
}

TEST(ProblemRecorder, two_processes_appending_at_once_lose_nothing) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  // Each process runs one shared shape and ten of its own, flushing after every call so
  // that the two merge into the file as often as possible.
  std::vector<pid_t> children;
  for (int process = 0; process < 2; ++process) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        ProblemRecorder recorder;
        recorder.start(path);
        for (int i = 0; i < 200; ++i) {
          recorder.note(problem("f32", "", "NN", 1000, 1000, 1000));
          recorder.note(problem("f16", "", "NT", 1 + process, 8 + i % 10, 16));
          recorder.flush();
        }
        recorder.stop();
        code = recorder.active() ? 3 : 0;
      } catch (...) {
        code = 2;
      }
      std::_Exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  const auto calls = calls_by_key(path);
  EXPECT_EQ(calls.size(), 1u + 2 * 10);
  EXPECT_EQ(calls.at(problem("f32", "", "NN", 1000, 1000, 1000).key()), 400);
  for (int process = 0; process < 2; ++process)
    for (int i = 0; i < 10; ++i)
      EXPECT_EQ(calls.at(problem("f16", "", "NT", 1 + process, 8 + i, 16).key()), 20);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("")))
    files += entry.path().filename().string().find(".tmp.") == std::string::npos ? 1 : 100;
  EXPECT_EQ(files, 2);  // the file and its lock
}

TEST(ProblemRecorder, keeps_shapes_written_by_hand_and_raises_counts_of_recorded_ones) {
  TempDir dir("record");
  const std::string path = dir.write("recorded.yaml",
                                     "shapes:\n"
                                     "  - {m: 4096, n: 4096, k: 4096, name: square}\n");
  ProblemRecorder first, second;
  first.start(path);
  first.note(problem("f32", "", "NN", 7, 8, 9));
  first.stop();
  second.start(path);
  second.note(problem("f32", "", "NN", 7, 8, 9));
  second.stop();
  const auto loaded = load_problem_set(path);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].name, "square");
  EXPECT_EQ(loaded[1].calls, 2);
}

TEST(ProblemRecorder, rejects_a_path_it_cannot_write_naming_it) {
  ProblemRecorder recorder;
  try {
    recorder.start("/nonexistent_tgemm_dir/recorded.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent_tgemm_dir/recorded.yaml.lock"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(recorder.active());
}

TEST(ProblemRecorder, a_write_failing_later_warns_once_on_stderr_and_stops) {
  TempDir dir("record");
  const std::string folder = dir.file("gone");
  std::filesystem::create_directories(folder);
  ProblemRecorder recorder;
  recorder.start(folder + "/recorded.yaml");
  std::filesystem::remove_all(folder);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  recorder.note(problem("f32", "", "NN", 2, 3, 4));
  recorder.note(problem("f32", "", "NN", 2, 3, 5));
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("record mode stopped"), std::string::npos) << err;
  EXPECT_EQ(err.find("record mode stopped"), err.rfind("record mode stopped")) << err;
  EXPECT_FALSE(recorder.active());
}

TEST(ProblemRecorder, c_api_turns_recording_on_and_off_and_reports_a_bad_path) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  ASSERT_EQ(tgemmSetRecordFile(path.c_str()), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  EXPECT_EQ(std::string(tgemmGetRecordFile()), path);
  problem_recorder().note(problem("f16", "", "NN", 3, 5, 7));
  ASSERT_EQ(tgemmSetRecordFile(nullptr), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(tgemmGetRecordFile()), "");
  EXPECT_EQ(load_problem_set(path).size(), 1u);

  EXPECT_EQ(tgemmSetRecordFile("/nonexistent_tgemm_dir/r.yaml"), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("/nonexistent_tgemm_dir/r.yaml"),
            std::string::npos);
  EXPECT_EQ(std::string(tgemmGetRecordFile()), "");
}

TEST(ProblemRecorder, starts_from_the_environment_variable) {
  TempDir dir("record");
  const std::string path = dir.file("recorded.yaml");
  ProblemRecorder recorder;
  ::setenv("TGEMM_RECORD", path.c_str(), 1);
  start_from_environment(recorder);
  EXPECT_EQ(recorder.path(), path);

  ProblemRecorder unusable;
  ::setenv("TGEMM_RECORD", "/nonexistent_tgemm_dir/r.yaml", 1);
  ::testing::internal::CaptureStderr();
  start_from_environment(unusable);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("TGEMM_RECORD");
  EXPECT_FALSE(unusable.active());
  EXPECT_NE(err.find("TGEMM_RECORD=/nonexistent_tgemm_dir/r.yaml not used"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace tgemm
