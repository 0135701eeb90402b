// WorkerClient against fake workers (shell scripts in tests/data/worker) and, without a GPU,
// the real tgemm-worker: crashes, hangs, restarts, reaping and the probe.
#include "tuner/evaluate/worker_client.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/core/error.h"
#include "tests/common/fake_worker.h"
#include "tuner/evaluate/worker_protocol.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

using testing::evaluated;
using testing::FakeWorkerDir;
using testing::kFixtures;
using testing::prepared_ok;

// "pid state cmdline" of every live or zombie child of this process.
std::vector<std::string> child_processes() {
  std::vector<std::string> children;
  const std::string self = std::to_string(::getpid());
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid != self) continue;
    std::ifstream cmd_file(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd_file)), {});
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    children.push_back(pid + " " + state + " " + cmdline);
  }
  return children;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

KernelConfig some_config() {
  KernelConfig c{"sgemm_simt", {}};
  c.set("BM", 64);
  c.set("BN", 64);
  c.set("VEC", 4);
  return c;
}

CompiledKernel some_kernel() {
  CompiledKernel k;
  k.ok = true;
  k.entry = "sgemm_simt";
  k.cubin = {'n', 'o', 't', ' ', 'a', ' ', 'c', 'u', 'b', 'i', 'n'};
  return k;
}

Problem some_problem() { return Problem::packed(GemmTypes{}, Op::N, Op::N, 128, 128, 128); }

TEST(WorkerClient, throws_naming_the_path_of_a_missing_worker) {
  const std::string missing = "/nonexistent/dir/tgemm-worker";
  try {
    WorkerClient client(missing, 0, milliseconds(1000));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string not_executable = std::string(TGEMM_SOURCE_DIR) + "/configs/shapes/quick.yaml";
  EXPECT_THROW(WorkerClient(not_executable, 0, milliseconds(1000)), Error);
}

TEST(WorkerClient, evaluate_before_prepare_is_misuse) {
  FakeWorkerDir dir;
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  EXPECT_THROW(client.evaluate(some_config(), some_kernel()), Error);
  EXPECT_THROW(client.compare(some_config(), some_kernel()), Error);
}

TEST(WorkerClient, reports_crashed_with_the_exit_status_and_restarts) {
  {
    WorkerClient client(kFixtures + "exit_after_request.sh", 0, milliseconds(5000));
    const CublasTiming prepared = client.prepare_problem(some_problem());
    EXPECT_FALSE(prepared.ok);
    EXPECT_NE(prepared.error.find("crashed"), std::string::npos) << prepared.error;
    EXPECT_NE(prepared.error.find("exited with status 1"), std::string::npos) << prepared.error;
    EXPECT_EQ(client.restarts(), 0);

    // The next request starts a fresh worker, which dies re-preparing the problem.
    const TrialResult r = client.evaluate(some_config(), some_kernel());
    EXPECT_EQ(r.status, TrialStatus::crashed);
    EXPECT_EQ(r.config, some_config());
    EXPECT_NE(r.error.find("exited with status 1"), std::string::npos) << r.error;
    EXPECT_EQ(client.restarts(), 1);
    EXPECT_EQ(client.evaluate(some_config(), some_kernel()).status, TrialStatus::crashed);
    EXPECT_EQ(client.restarts(), 2);
    EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
  }
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
}

TEST(WorkerClient, restarts_after_a_crash_and_re_prepares_the_problem) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  dir.answer("evaluate", evaluated(TrialStatus::ok));
  dir.write("evaluate.exit_once", "7");
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));

  const CublasTiming prepared = client.prepare_problem(some_problem());
  ASSERT_TRUE(prepared.ok) << prepared.error;
  EXPECT_EQ(prepared.median_us, 11);

  const TrialResult crashed = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(crashed.status, TrialStatus::crashed);
  EXPECT_NE(crashed.error.find("exited with status 7"), std::string::npos) << crashed.error;
  EXPECT_EQ(client.restarts(), 0);

  const TrialResult ok = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
  EXPECT_EQ(ok.config, some_config());  // the client's config, whatever the worker echoes
  EXPECT_EQ(ok.time_median_us, 5.5);
  EXPECT_EQ(client.restarts(), 1);
  EXPECT_EQ(dir.read("log"), "prepare\nevaluate\nprepare\nevaluate\n");
  // The re-prepare skips timing cuBLAS again; the evaluate names a cubin file.
  const std::string payloads = dir.read("payloads");
  EXPECT_NE(payloads.find("\"time_cublas\":true"), std::string::npos) << payloads;
  EXPECT_NE(payloads.find("\"time_cublas\":false"), std::string::npos) << payloads;
  EXPECT_NE(payloads.find("\"cubin_path\":"), std::string::npos) << payloads;
}

TEST(WorkerClient, times_out_a_hung_worker_promptly_and_leaves_no_zombie) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  dir.write("evaluate.hang", "");
  {
    WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(300));
    ASSERT_TRUE(client.prepare_problem(some_problem()).ok);

    const auto start = std::chrono::steady_clock::now();
    const TrialResult r = client.evaluate(some_config(), some_kernel());
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.status, TrialStatus::timeout);
    EXPECT_NE(r.error.find("300 ms"), std::string::npos) << r.error;
    EXPECT_GE(elapsed, milliseconds(300));
    EXPECT_LT(elapsed, milliseconds(2500));
    EXPECT_TRUE(child_processes().empty()) << joined(child_processes());

    // The hang is fixed; the next request runs on a fresh worker.
    dir.remove("evaluate.hang");
    dir.answer("evaluate", evaluated(TrialStatus::ok));
    const TrialResult ok = client.evaluate(some_config(), some_kernel());
    EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
    EXPECT_EQ(client.restarts(), 1);
    EXPECT_EQ(dir.read("log"), "prepare\nevaluate\nprepare\nevaluate\n");
  }
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
}

TEST(WorkerClient, reaps_a_worker_that_announces_its_exit) {
  // A sticky CUDA error: the worker answers `crashed`, says it exits, and the client moves on.
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  dir.answer("evaluate", evaluated(TrialStatus::crashed, /*worker_exits=*/true));
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
  const TrialResult r = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(r.status, TrialStatus::crashed);
  EXPECT_EQ(r.error, "fault\nin the kernel");
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
  EXPECT_EQ(client.evaluate(some_config(), some_kernel()).status, TrialStatus::crashed);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, treats_an_unreadable_answer_as_a_crash) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  dir.write("evaluate.frame", "this is not a frame\n");
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
  const TrialResult r = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(r.status, TrialStatus::crashed);
  EXPECT_NE(r.error.find("unreadable"), std::string::npos) << r.error;
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());

  // Valid JSON, but the evaluate answer lacks its result.
  dir.write("evaluate.frame", encode_frame("{\"type\":\"evaluate\",\"worker_exits\":false}"));
  const TrialResult missing = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(missing.status, TrialStatus::crashed);
  EXPECT_NE(missing.error.find("'result' is missing"), std::string::npos) << missing.error;
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
}

TEST(WorkerClient, treats_an_answer_cut_short_as_a_crash) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  const std::string line = encode_frame(encode_response(evaluated(TrialStatus::ok)));
  dir.write("evaluate.frame", line.substr(0, line.size() / 2));
  dir.write("evaluate.then_exit", "0");  // EOF right after half a line
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
  const TrialResult r = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(r.status, TrialStatus::crashed);
  EXPECT_NE(r.error.find("cut short"), std::string::npos) << r.error;
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
}

TEST(WorkerClient, throws_when_the_worker_rejects_a_request) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  dir.answer("evaluate", WorkerResponse{ErrorResponse{"unknown request kind"}, false});
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
  EXPECT_THROW(client.evaluate(some_config(), some_kernel()), Error);
}

TEST(WorkerClient, records_compile_failures_without_asking_the_worker) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
  ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
  CompiledKernel failed;
  failed.error = "nvrtc: error";
  const TrialResult r = client.evaluate(some_config(), failed);
  EXPECT_EQ(r.status, TrialStatus::compile_failed);
  EXPECT_EQ(r.error, "nvrtc: error");
  EXPECT_EQ(dir.read("log"), "prepare\n");
}

TEST(WorkerClient, asks_the_worker_to_quit_and_reaps_it_on_destruction) {
  FakeWorkerDir dir;
  dir.answer("prepare", prepared_ok());
  {
    WorkerClient client(kFixtures + "fake_worker.sh", 0, milliseconds(5000));
    ASSERT_TRUE(client.prepare_problem(some_problem()).ok);
    EXPECT_EQ(child_processes().size(), 1u) << joined(child_processes());
  }
  EXPECT_EQ(dir.read("log"), "prepare\nquit\n");
  EXPECT_TRUE(child_processes().empty()) << joined(child_processes());
}

TEST(WorkerClient, real_worker_probes_and_says_why_without_a_gpu) {
  const std::string worker = std::string(TGEMM_TOOLS_DIR) + "/tgemm-worker";
  if (::access(worker.c_str(), X_OK) != 0) GTEST_SKIP() << "build tgemm-worker first: " << worker;
  WorkerClient client(worker, 0, milliseconds(5000));
  std::string why;
  const auto device = client.probe_device(&why);
  if (device) {  // a GPU machine
    EXPECT_FALSE(device->name.empty());
    EXPECT_EQ(device->arch.rfind("sm_", 0), 0u) << device->arch;
    EXPECT_TRUE(why.empty());
    return;
  }
  EXPECT_NE(why.find("no CUDA driver/device"), std::string::npos) << why;
  const CublasTiming prepared = client.prepare_problem(some_problem());
  EXPECT_FALSE(prepared.ok);
  EXPECT_NE(prepared.error.find("no CUDA driver/device"), std::string::npos) << prepared.error;
  // Without a prepared problem the worker refuses kernels, but stays up.
  const TrialResult r = client.evaluate(some_config(), some_kernel());
  EXPECT_EQ(r.status, TrialStatus::launch_failed);
  EXPECT_EQ(client.restarts(), 0);
}

}  // namespace
}  // namespace tgemm
