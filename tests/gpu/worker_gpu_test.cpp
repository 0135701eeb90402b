// WorkerClient with the real tgemm-worker on a GPU: a faulting kernel is `crashed`, a hanging
// one `timeout`, and the same client then evaluates and compares a good kernel on a fresh
// worker. Skips cleanly without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "src/core/device_info.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/evaluate/worker_client.h"

namespace tgemm {
namespace {

using std::chrono::milliseconds;

// 64x64 tiles, 4x4 per thread: the shared sample with smaller tiles.
KernelConfig good_config() {
  return testing::sgemm_config({{"BM", 64}, {"BN", 64}, {"BK", 16}, {"TM", 4}, {"TN", 4}});
}

KernelConfig faulting_config(int fault) {
  KernelConfig c = good_config();
  c.set("FAULT", fault);  // 1: illegal address, 2: never finishes
  return c;
}

// sgemm_simt's host side over the test's faulting device code.
const GemmTemplate& fault_family() {
  static const auto family = [] {
    std::ifstream in(std::string(TGEMM_SOURCE_DIR) + "/tests/data/templates/fault_sgemm_simt.cuh");
    std::stringstream text;
    text << in.rdbuf();
    return make_template("sgemm_simt", kernel_source_from_text("sgemm_simt", text.str()));
  }();
  return *family;
}

TEST(WorkerGpu, fault_is_crashed_hang_is_timeout_and_the_client_recovers) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string worker = std::string(TGEMM_TOOLS_DIR) + "/tgemm-worker";
  ASSERT_EQ(::access(worker.c_str(), X_OK), 0) << "missing " << worker;

  // A short watchdog for the hang; timing kept well inside it.
  const TimingOptions timing{1, 5, 50, 200, 0.05};
  WorkerClient client(worker, 0, milliseconds(3000), timing);
  std::string why;
  const auto device = client.probe_device(&why);
  ASSERT_TRUE(device) << why;

  const KernelSource source = kernel_source("sgemm_simt");
  auto compile = [&](const KernelConfig& config) {
    CompiledKernel k = build_kernel(
        fault_family(), config, Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1), device->arch);
    EXPECT_TRUE(k.ok) << k.error;
    return k;
  };
  const CompiledKernel good = compile(good_config());
  const CompiledKernel fault = compile(faulting_config(1));
  const CompiledKernel hang = compile(faulting_config(2));
  ASSERT_TRUE(good.ok && fault.ok && hang.ok);

  const CublasTiming cublas =
      client.prepare_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 512, 512, 512));
  ASSERT_TRUE(cublas.ok) << cublas.error;
  EXPECT_GT(cublas.median_us, 0);

  const TrialResult crashed = client.evaluate(faulting_config(1), fault);
  EXPECT_EQ(crashed.status, TrialStatus::crashed) << crashed.error;
  EXPECT_FALSE(crashed.error.empty());
  std::printf("fault: %s\n", crashed.error.c_str());

  const auto start = std::chrono::steady_clock::now();
  const TrialResult timed_out = client.evaluate(faulting_config(2), hang);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(timed_out.status, TrialStatus::timeout) << timed_out.error;
  EXPECT_LT(waited, milliseconds(3000 + 15000));  // the watchdog, plus killing and reaping
  std::printf("hang: %s\n", timed_out.error.c_str());

  const TrialResult ok = client.evaluate(good_config(), good);
  EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
  EXPECT_GT(ok.time_median_us, 0);
  EXPECT_GT(ok.tflops, 0);
  EXPECT_EQ(client.restarts(), 2);  // after the fault and after the hang

  const Comparison c = client.compare(good_config(), good);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_GT(c.tgemm_median_us, 0);
  EXPECT_GT(c.cublas_median_us, 0);
  EXPECT_GT(c.runs, 0);
  EXPECT_EQ(client.restarts(), 2);
}

TEST(WorkerGpu, a_wrong_kernel_is_wrong_result_through_the_worker) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string worker = std::string(TGEMM_TOOLS_DIR) + "/tgemm-worker";
  WorkerClient client(worker, 0, milliseconds(10000), TimingOptions{1, 5, 50, 200, 0.05});
  std::string why;
  const auto device = client.probe_device(&why);
  ASSERT_TRUE(device) << why;
  // Compiled for TN but run on NN: reads A transposed.
  const CompiledKernel tn = tgemm::testing::compile_f32(good_config(), Op::T, Op::N, device->arch);
  ASSERT_TRUE(tn.ok) << tn.error;
  ASSERT_TRUE(client.prepare_problem(Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256)).ok);
  const TrialResult r = client.evaluate(good_config(), tn);
  EXPECT_EQ(r.status, TrialStatus::wrong_result) << r.error;
  EXPECT_EQ(client.restarts(), 0);
}

}  // namespace
}  // namespace tgemm
