// Grouped GEMM on a GPU: gemm_mma's grouped build, forced through the dispatcher, computes
// ragged groups (one row, odd N and K, K = 0, groups without work, padded rows, each group its
// own alpha and beta, more groups than one launch holds) as an FP64 host reference of each
// problem says, and writes nothing else; cuBLAS's grouped call serves what no kernel does
// (groups of different layouts among them); a captured grouped call replays its eager result;
// the C and C++ APIs run end to end and refuse bad input on a GPU too. Skips without a GPU.
#include <gtest/gtest.h>
#include <tgemm/tgemm.h>
#include <tgemm/tgemm_c.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "tests/common/gpu_family_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/grouped_operands.h"

namespace tgemm {
namespace {

// gemm_mma for each input type it runs grouped: 16-byte shifted copies for 16-bit inputs (any
// element alignment), 4-byte cp.async copies for f32 (tf32 and f32x3).
struct Family {
  const char* types;
  KernelConfig config;
  int min_arch;
};

KernelConfig mma_f32_config() {
  return KernelConfig::from_params_text(
      "gemm_mma",
      "BM=64,BN=64,BK_BYTES=64,WM=32,WN=32,STAGES=4,VEC_BYTES=4,SMEM_XOR=1,SPLIT_K=1,SWIZZLE=1,"
      "SHIFT_COPY=0,PACK=0");
}

std::vector<Family> families() {
  return {{"f16", testing::mma_gpu_config(), 75},
          {"bf16", testing::mma_gpu_config(), 80},
          {"f16_out_f32", testing::mma_gpu_config(), 75},
          {"tf32", mma_f32_config(), 80},
          {"f32x3", mma_f32_config(), 80}};
}

// Ragged groups: several tiles with odd edges, one row, groups without work (m 0, size 0, and
// n 0, whose padded C must stay as it was), K = 0 (C = beta C, beta -0.5 at an odd index), a
// deep K. Most share K = 33: in layout NT (A and B K-contiguous) they share lda and ldb, so one
// launch's table holds several of them; in layout TT (A stored k x m) lda follows m, so each
// group opens a launch of its own.
std::vector<ProblemGroup> ragged_groups() {
  return {{130, 65, 33, 3}, {1, 7, 33, 2},   {0, 64, 33, 2},   {5, 5, 33, 0}, {4, 0, 33, 1},
          {64, 128, 0, 1},  {257, 3, 33, 1}, {17, 200, 33, 2}, {9, 9, 129, 1}};
}

// Group g's scalars: alpha 1 + g / 2, beta 0 for even g and -0.5 for odd.
void vary_scalars(GroupedGemmCall* call) {
  for (size_t g = 0; g < call->groups.size(); ++g) {
    call->groups[g].alpha = 1.0f + 0.5f * float(g);
    call->groups[g].beta = g % 2 ? -0.5f : 0.0f;
  }
}

// "" when every problem's C is its FP64 reference (alpha A B + beta C as first given) within its
// types' bound and every element past a row's end (and of a C without columns) is untouched.
std::string check_grouped(const GroupedOperands& x, const GroupedGemmCall& call, const Problem& p) {
  const std::vector<float> got = x.c_on_host();
  const std::vector<float>&a = x.a_values(), &b = x.b_values(), &c0 = x.c_values();
  for (size_t i = 0; i < x.members().size(); ++i) {
    const GroupedOperands::Member& e = x.members()[i];
    const CallGroup& g = call.groups[e.group];
    std::vector<double> ref(size_t(e.m) * size_t(e.ldc), 0.0);
    for (int r = 0; r < e.m; ++r)
      for (int j = 0; j < e.n; ++j) {
        double sum = 0;
        for (int l = 0; l < e.k; ++l) {
          const double av = p.op_a == Op::N ? a[size_t(e.a + int64_t(r) * e.lda + l)]
                                            : a[size_t(e.a + int64_t(l) * e.lda + r)];
          const double bv = p.op_b == Op::N ? b[size_t(e.b + int64_t(l) * e.ldb + j)]
                                            : b[size_t(e.b + int64_t(j) * e.ldb + l)];
          sum += av * bv;
        }
        ref[size_t(r) * size_t(e.ldc) + size_t(j)] =
            g.alpha * sum + g.beta * double(c0[size_t(e.c + int64_t(r) * e.ldc + j)]);
      }
    if (e.n > 0) {
      const ResultCheck check = check_result(got.data() + e.c, ref.data(), e.m, e.n, e.ldc,
                                             relative_error_bound(p.types, e.k));
      if (!check.ok) return "problem " + std::to_string(i) + ": " + check.error;
    }
    for (int r = 0; r < e.m; ++r)
      for (int j = e.n; j < e.ldc; ++j) {
        const size_t at = size_t(e.c + int64_t(r) * e.ldc + j);
        if (got[at] != c0[at])
          return "problem " + std::to_string(i) + " wrote past its row " + std::to_string(r);
      }
  }
  return "";
}

class GroupedGemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    // Our grouped kernels serve only where asked for (Dispatcher: grouped_kernels_on), read
    // once per process: before the suite's first grouped call.
    setenv("TGEMM_GROUPED_KERNELS", "1", 1);
    arch_ = arch_number(query_device(0).arch);
  }
  int arch_ = 0;
};

TEST_F(GroupedGemmGpu, gemm_mma_computes_ragged_groups_as_the_fp64_reference_of_each_problem) {
  for (const Family& f : families()) {
    if (arch_ < f.min_arch) continue;
    SCOPED_TRACE(f.config.canonical_name() + " " + f.types);
    auto d = testing::forced_dispatcher(f.types, f.config);
    for (Op op_a : {Op::N, Op::T})
      for (int padding : {0, 3}) {
        SCOPED_TRACE(std::string(op_a == Op::N ? "NT" : "TT") + " padding " +
                     std::to_string(padding));
        const Problem p = Problem::grouped(parse_gemm_types(f.types), op_a, Op::T, ragged_groups());
        GroupedOperands x(p, 7 + uint64_t(padding), padding);
        GroupedGemmCall call = x.call(1.0f, 0.0f);
        vary_scalars(&call);
        const ServedBy served = d->served_by(call);
        ASSERT_TRUE(served.kernel) << to_string(served.path);
        EXPECT_EQ(served.kernel->template_name, "gemm_mma");
        d->gemm_grouped(call, nullptr);
        TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
        const std::string wrong = check_grouped(x, call, p);
        EXPECT_EQ(wrong, "");
      }
  }
}

// 70 NT groups of one K, so of one lda and ldb (two launches: 64 groups, then 6), and of K
// changing every 10 groups (a launch per run): every problem is computed once, by the table
// entry its tile finds.
TEST_F(GroupedGemmGpu, more_groups_than_one_launch_holds_are_all_computed) {
  const Family f = families()[0];
  auto d = testing::forced_dispatcher(f.types, f.config);
  for (bool runs_of_k : {false, true}) {
    std::vector<ProblemGroup> groups;
    for (int g = 0; g < kMaxLaunchGroups + 6; ++g)
      groups.push_back({1 + 3 * g, 24 + g % 5, runs_of_k && g / 10 % 2 ? 40 : 24, 1 + g % 3});
    const Problem p = Problem::grouped(parse_gemm_types(f.types), Op::N, Op::T, groups);
    GroupedOperands x(p, 11);
    GroupedGemmCall call = x.call(1.0f, 0.0f);
    vary_scalars(&call);
    d->gemm_grouped(call, nullptr);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(check_grouped(x, call, p), "") << (runs_of_k ? "runs of K" : "one K");
  }
}

// No kernel of ours (an empty default table): cuBLAS's grouped call serves it.
TEST_F(GroupedGemmGpu, cublas_serves_a_grouped_call_no_kernel_runs) {
  Dispatcher d(DispatcherOptions{"/nonexistent/tgemm.db", std::vector<DefaultKernel>{}, true});
  for (const char* types : {"f16", "f16_out_f32", "tf32"}) {
    SCOPED_TRACE(types);
    const Problem p = Problem::grouped(parse_gemm_types(types), Op::N, Op::T, ragged_groups());
    GroupedOperands x(p, 5, 2);
    GroupedGemmCall call = x.call(1.0f, 0.0f);
    vary_scalars(&call);
    EXPECT_EQ(d.served_by(call).path, Selection::cublas);
    d.gemm_grouped(call, nullptr);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(check_grouped(x, call, p), "");
  }
  Dispatcher off(DispatcherOptions{"/nonexistent/tgemm.db", std::vector<DefaultKernel>{}, false});
  const Problem p = Problem::grouped(parse_gemm_types("f16"), Op::N, Op::T, {{8, 8, 8, 1}});
  GroupedOperands x(p, 1);
  EXPECT_THROW(off.gemm_grouped(x.call(1.0f, 0.0f), nullptr), NotSupportedError);
}

// Two layouts in one call: one grouped build cannot read both, so cuBLAS runs it.
TEST_F(GroupedGemmGpu, groups_of_different_layouts_run_cublas_and_match_each_reference) {
  const Family f = families()[0];
  auto d = testing::forced_dispatcher(f.types, f.config);
  auto with_fallback = std::make_unique<Dispatcher>(DispatcherOptions{
      "/nonexistent/tgemm.db",
      std::vector<DefaultKernel>{{"*", parse_gemm_types(f.types), f.config}}, true});
  const GemmTypes types = parse_gemm_types(f.types);
  const Problem nt = Problem::grouped(types, Op::N, Op::T, {{40, 24, 16, 2}});
  const Problem tn = Problem::grouped(types, Op::T, Op::N, {{9, 33, 20, 1}});
  GroupedOperands x(nt, 3), y(tn, 4);
  const GroupedGemmCall cx = x.call(1.0f, 0.0f), cy = y.call(2.0f, 0.0f);
  // One call of both: x's groups then y's, and pointer arrays of x's problems then y's.
  const size_t nx = x.members().size(), ny = y.members().size();
  DeviceBuffer arrays(3 * (nx + ny) * sizeof(void*));
  void** all = arrays.get<void*>();
  for (int operand = 0; operand < 3; ++operand) {
    const void* const* from_x = operand == 0 ? cx.a : operand == 1 ? cx.b : cx.c;
    const void* const* from_y = operand == 0 ? cy.a : operand == 1 ? cy.b : cy.c;
    void** to = all + size_t(operand) * (nx + ny);
    TGEMM_CUDA_CHECK(cudaMemcpy(to, from_x, nx * sizeof(void*), cudaMemcpyDefault));
    TGEMM_CUDA_CHECK(cudaMemcpy(to + nx, from_y, ny * sizeof(void*), cudaMemcpyDefault));
  }
  GroupedGemmCall both = cx;
  both.groups.insert(both.groups.end(), cy.groups.begin(), cy.groups.end());
  both.a = all;
  both.b = all + (nx + ny);
  both.c = all + 2 * (nx + ny);
  EXPECT_EQ(with_fallback->served_by(both).path, Selection::cublas);
  EXPECT_THROW(d->gemm_grouped(both, nullptr), NotSupportedError);  // fallback off
  with_fallback->gemm_grouped(both, nullptr);
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(check_grouped(x, cx, nt), "");
  EXPECT_EQ(check_grouped(y, cy, tn), "");
}

TEST_F(GroupedGemmGpu, a_captured_grouped_call_replays_its_eager_result) {
  const Family f = families()[0];
  auto d = testing::forced_dispatcher(f.types, f.config);
  const Problem p = Problem::grouped(parse_gemm_types(f.types), Op::N, Op::T, ragged_groups());
  GroupedOperands x(p, 21, 1);
  GroupedGemmCall call = x.call(1.0f, 0.0f);
  vary_scalars(&call);
  d->gemm_grouped(call, nullptr);  // chooses and loads the kernel: the capture only launches
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  ASSERT_EQ(check_grouped(x, call, p), "");
  cudaStream_t stream = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  d->gemm_grouped(call, stream);
  TGEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  TGEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  // The scalars and shapes live in the graph's launch: changing the call's copy changes nothing.
  call.groups[0].alpha = 100.0f;
  x.reset_c();
  TGEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  call.groups[0].alpha = 1.0f;
  EXPECT_EQ(check_grouped(x, call, p), "");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(GroupedGemmGpu, a_capture_of_a_bucket_never_called_is_not_prepared_and_stays_valid) {
  const Family f = families()[0];
  auto d = testing::forced_dispatcher(f.types, f.config);
  const Problem p = Problem::grouped(parse_gemm_types(f.types), Op::N, Op::T, {{300, 64, 64, 2}});
  GroupedOperands x(p, 2);
  cudaStream_t stream = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  EXPECT_THROW(d->gemm_grouped(x.call(1.0f, 0.0f), stream), NotPreparedError);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  if (graph) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The C API end to end with the shipped defaults (no database), and its checks with a GPU.
TEST_F(GroupedGemmGpu, the_c_api_grouped_call_matches_the_reference_and_refuses_bad_input) {
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, "/nonexistent/tgemm.db"), TGEMM_STATUS_SUCCESS);
  const Problem p = Problem::grouped(parse_gemm_types("f16"), Op::N, Op::T, ragged_groups());
  GroupedOperands x(p, 31, 2);
  GroupedGemmCall call = x.call(1.0f, 0.0f);
  vary_scalars(&call);
  std::vector<tgemmOperation_t> op_a, op_b;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  std::vector<float> alpha, beta;
  for (const CallGroup& g : call.groups) {
    op_a.push_back(g.op_a == Op::T ? TGEMM_OP_T : TGEMM_OP_N);
    op_b.push_back(g.op_b == Op::T ? TGEMM_OP_T : TGEMM_OP_N);
    m.push_back(g.m);
    n.push_back(g.n);
    k.push_back(g.k);
    lda.push_back(g.lda);
    ldb.push_back(g.ldb);
    ldc.push_back(g.ldc);
    size.push_back(g.size);
    alpha.push_back(g.alpha);
    beta.push_back(g.beta);
  }
  const auto run = [&](void* const* c) {
    return tgemmGemmGroupedBatchedEx(
        handle, op_a.data(), op_b.data(), m.data(), n.data(), k.data(), alpha.data(), call.a,
        TGEMM_R_16F, lda.data(), call.b, TGEMM_R_16F, ldb.data(), beta.data(), c, TGEMM_R_16F,
        ldc.data(), int(call.groups.size()), size.data(), TGEMM_COMPUTE_32F, nullptr);
  };
  ASSERT_EQ(run(call.c), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(check_grouped(x, call, p), "");
  // Refused before anything runs: C keeps what the good call wrote.
  const std::vector<float> before = x.c_on_host();
  EXPECT_EQ(run(nullptr), TGEMM_STATUS_INVALID_VALUE);
  ldc[0] = n[0] - 1;
  EXPECT_EQ(run(call.c), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("group 0: ldc"), std::string::npos);
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(x.c_on_host(), before);
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

TEST_F(GroupedGemmGpu, the_cpp_handle_runs_a_bf16_grouped_call) {
  if (arch_ < 80) GTEST_SKIP() << "bf16 needs sm_80";
  tgemm::Handle handle("/nonexistent/tgemm.db");
  const Problem p = Problem::grouped(parse_gemm_types("bf16"), Op::N, Op::N, ragged_groups());
  GroupedOperands x(p, 41);
  GroupedGemmCall call = x.call(1.0f, 0.0f);
  vary_scalars(&call);
  std::vector<GemmGroup> groups;
  for (const CallGroup& g : call.groups)
    groups.push_back({'N', 'N', g.m, g.n, g.k, g.alpha, g.beta, g.lda, g.ldb, g.ldc, g.size});
  handle.gemm_grouped_batched(groups.data(), int(groups.size()),
                              reinterpret_cast<const __nv_bfloat16* const*>(call.a),
                              reinterpret_cast<const __nv_bfloat16* const*>(call.b),
                              reinterpret_cast<__nv_bfloat16* const*>(call.c));
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(check_grouped(x, call, p), "");
}

}  // namespace
}  // namespace tgemm
