// Library calls captured into CUDA graphs: after prepare, a call of every family (and the cuBLAS
// fallback) captures in every capture mode without allocating, and each replay gives the eager
// call's result, both checked against an FP64 reference; a call not prepared returns
// TGEMM_STATUS_NOT_PREPARED and leaves the capture valid; a lent workspace is the one used.
// Skips cleanly without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "src/core/device_info.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/templates/template_registry.h"
#include "tests/common/graph_capture.h"
#include "tests/common/graph_cases.h"
#include "tgemm/tgemm_c.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {
namespace {

using testing::CapturedGraph;

// The byte alignment of a pointer `offset` elements of `type` past a 256-byte boundary.
size_t pointer_alignment(int offset, DType type) {
  const size_t bytes = size_t(offset) * size_t(element_bytes(type));
  return bytes == 0 ? 256 : bytes & (~bytes + 1);
}

// A device copy of `values` (f32, rounded to `type`) `offset` elements past cudaMalloc's start.
struct Placed {
  DeviceBuffer buffer;
  void* ptr = nullptr;
  Placed(DType type, const std::vector<float>& values, int offset)
      : buffer((values.size() + size_t(offset)) * size_t(element_bytes(type))) {
    ptr = buffer.get<char>() + size_t(offset) * size_t(element_bytes(type));
    upload(type, values, nullptr);
  }
  void upload(DType type, const std::vector<float>& values, cudaStream_t stream) const {
    const std::vector<unsigned char> bytes = to_bytes(type, values);
    TGEMM_CUDA_CHECK(
        cudaMemcpyAsync(ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream));
    TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<float> download(DType type, size_t count) const {
    std::vector<unsigned char> bytes(count * size_t(element_bytes(type)));
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), ptr, bytes.size(), cudaMemcpyDeviceToHost));
    return from_bytes(type, bytes);
  }
};

// One problem's inputs (rounded to their types), C for the captured and the eager call, and
// the FP64 reference of alpha op(A) op(B) + beta C0.
struct Operands {
  Problem p;
  float alpha, beta;
  std::vector<float> a, b, c0;
  std::vector<double> ref;
  std::unique_ptr<Placed> da, db, captured_c, eager_c;

  Operands(const Problem& problem, int offset, float alpha_, float beta_, uint32_t seed)
      : p(problem), alpha(alpha_), beta(beta_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    const auto values = [&](DType type, int64_t count) {
      std::vector<float> v(static_cast<size_t>(count));
      for (float& x : v) x = round_to(type, dist(rng));
      return v;
    };
    a = values(p.types.a, p.a_rows() * p.lda);
    b = values(p.types.b, p.b_rows() * p.ldb);
    c0 = values(p.types.c, p.m * p.ldc);
    da = std::make_unique<Placed>(p.types.a, a, offset);
    db = std::make_unique<Placed>(p.types.b, b, offset);
    captured_c = std::make_unique<Placed>(p.types.c, c0, offset);
    eager_c = std::make_unique<Placed>(p.types.c, c0, offset);
    ref.assign(c0.size(), 0.0);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < p.k; ++l)
          sum += double(a[size_t(p.op_a == Op::N ? i * p.lda + l : l * p.lda + i)]) *
                 double(b[size_t(p.op_b == Op::N ? l * p.ldb + j : j * p.ldb + l)]);
        const size_t at = size_t(i * p.ldc + j);
        ref[at] = alpha * sum + beta * double(c0[at]);
      }
  }

  GemmCall call(const Placed& c) const {
    return {p.op_a,  p.op_b,     int(p.m), int(p.n),   int(p.k), alpha,      beta,
            da->ptr, int(p.lda), db->ptr,  int(p.ldb), c.ptr,    int(p.ldc), p.types};
  }
  PrepareRequest request(int offset) const {
    PrepareRequest r;
    r.call = call(*captured_c);
    r.align_a = pointer_alignment(offset, p.types.a);
    r.align_b = pointer_alignment(offset, p.types.b);
    r.align_c = pointer_alignment(offset, p.types.c);
    return r;
  }
  std::vector<float> result(const Placed& c) const {
    return c.download(p.types.c, size_t(p.m * p.ldc));
  }
  // Checks `c` against the reference, and against `other` (another run's C) where given.
  void expect_correct(const std::vector<float>& c, const char* what,
                      const std::vector<float>* other = nullptr) const {
    const double bound = relative_error_bound(p.types, p.k);
    const ResultCheck check = check_result(c.data(), ref.data(), p.m, p.n, p.ldc, bound);
    EXPECT_TRUE(check.ok) << what << ": " << check.error;
    if (!other) return;
    const ResultCheck same = check_result(c.data(), other->data(), p.m, p.n, p.ldc, bound);
    EXPECT_TRUE(same.ok) << what << " against the eager call: " << same.error;
  }
};

// Counts the workspace allocations a dispatcher makes.
struct CountingAllocator {
  std::shared_ptr<int> count = std::make_shared<int>(0);
  WorkspaceAllocator make() const {
    return {[count = count](void** p, size_t bytes) {
              ++*count;
              return cudaMalloc(p, bytes);
            },
            [](void* p) { cudaFree(p); }};
  }
};

const cudaStreamCaptureMode kModes[] = {
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed};

class GraphCaptureGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    TGEMM_CUDA_CHECK(cudaSetDevice(0));
    arch_ = query_device(0).arch;
  }

  // Prepares the operands' problem on `d`, captures its call in `mode` (checking that nothing
  // is allocated meanwhile), replays the graph twice, and runs the call eagerly: every result
  // against the reference, the replays against the eager one.
  static void capture_replay_and_compare(Dispatcher& d, const CountingAllocator& allocations,
                                         const Operands& ops, int offset,
                                         cudaStreamCaptureMode mode) {
    d.prepare({ops.request(offset)});
    const int allocated = *allocations.count;
    CudaStream stream;
    std::unique_ptr<CapturedGraph> graph;
    ASSERT_NO_THROW(graph = std::make_unique<CapturedGraph>(stream.get(), mode, [&] {
                      d.gemm(ops.call(*ops.captured_c), stream.get());
                    }));
    EXPECT_GE(graph->nodes(), 1u);
    EXPECT_EQ(*allocations.count, allocated) << "allocated during the capture";
    ops.eager_c->upload(ops.p.types.c, ops.c0, stream.get());  // C as before any call
    d.gemm(ops.call(*ops.eager_c), stream.get());
    stream.synchronize();
    const std::vector<float> eager = ops.result(*ops.eager_c);
    ops.expect_correct(eager, "eager");
    for (int replay = 0; replay < 2; ++replay) {
      ops.captured_c->upload(ops.p.types.c, ops.c0, stream.get());
      graph->launch(stream.get());
      stream.synchronize();
      ops.expect_correct(ops.result(*ops.captured_c), replay == 0 ? "replay 1" : "replay 2",
                         &eager);
    }
    EXPECT_EQ(*allocations.count, allocated) << "allocated by a replay or the eager call";
  }

  std::string arch_;
};

TEST_F(GraphCaptureGpu, every_family_replays_its_eager_result_after_prepare) {
  int ran = 0;
  std::vector<std::string> skipped;
  uint32_t seed = 1;
  for (const testing::GraphCase& c : testing::graph_cases()) {
    SCOPED_TRACE(c.line);
    const DefaultKernel kernel = c.kernel();
    const Problem problem = c.problem();
    if (const auto why = template_named(kernel.config.template_name)
                             .unsupported_reason(kernel.config, problem, arch_)) {
      skipped.push_back(c.line + ": " + *why);
      continue;
    }
    CountingAllocator allocations;
    Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{kernel}, false});
    d.set_workspace_allocator(allocations.make());
    const Operands ops(problem, c.offset, 1.5f, -0.5f, seed++);
    capture_replay_and_compare(d, allocations, ops, c.offset, cudaStreamCaptureModeGlobal);
    const ServedBy served = d.served_by(ops.call(*ops.captured_c));
    ASSERT_TRUE(served.kernel) << "not served by the forced config";
    EXPECT_EQ(*served.kernel, kernel.config);
    ++ran;
  }
  for (const std::string& why : skipped) std::cout << "skipped on " << arch_ << ": " << why << "\n";
  EXPECT_GE(ran, 3) << "the SIMT cases run on every GPU";
  if (arch_ == "sm_90") {
    EXPECT_TRUE(skipped.empty());
  }
}

// Every capture mode, with beta zero and not: prepare covers both.
TEST_F(GraphCaptureGpu, every_capture_mode_and_either_beta_replays_after_prepare) {
  const testing::GraphCase c = testing::graph_cases().at(1);  // split-K through a workspace
  for (cudaStreamCaptureMode mode : kModes)
    for (float beta : {0.0f, 0.75f}) {
      SCOPED_TRACE(fmt::format("mode {} beta {}", int(mode), beta));
      CountingAllocator allocations;
      Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{c.kernel()}, false});
      d.set_workspace_allocator(allocations.make());
      const Operands ops(c.problem(beta == 0.0f), c.offset, 1.0f, beta, 40);
      capture_replay_and_compare(d, allocations, ops, c.offset, mode);
    }
}

// Without a tgemm kernel, cuBLAS serves: prepare creates its handle, and its captured call
// replays right.
TEST_F(GraphCaptureGpu, the_cublas_fallback_replays_after_prepare) {
  CountingAllocator allocations;
  Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{}, true});
  d.set_workspace_allocator(allocations.make());
  const Operands ops(Problem::packed(gemm_types("bf16"), Op::N, Op::T, 96, 80, 64), 0, 1.0f, 0.5f,
                     50);
  EXPECT_EQ(d.selection(ops.call(*ops.captured_c)), Selection::cublas);
  for (cudaStreamCaptureMode mode : kModes)
    capture_replay_and_compare(d, allocations, ops, 0, mode);
}

// A captured call that needs what only an eager call or prepare does is refused before it
// launches anything: its capture still ends in a graph that instantiates (and runs nothing).
TEST_F(GraphCaptureGpu, a_call_not_prepared_returns_the_status_and_the_capture_stays_valid) {
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, "/nonexistent/tgemm.db"), TGEMM_STATUS_SUCCESS);
  const Operands ops(Problem::packed(GemmTypes{}, Op::N, Op::N, 128, 96, 64), 0, 1.0f, 0.0f, 60);
  const auto sgemm = [&](cudaStream_t stream) {
    return tgemmSgemm(handle, TGEMM_OP_N, TGEMM_OP_N, 128, 96, 64, &ops.alpha,
                      static_cast<const float*>(ops.da->ptr), 64,
                      static_cast<const float*>(ops.db->ptr), 96, &ops.beta,
                      static_cast<float*>(ops.captured_c->ptr), 96, stream);
  };
  CudaStream stream;
  for (cudaStreamCaptureMode mode : kModes) {
    SCOPED_TRACE(int(mode));
    tgemmStatus_t status = TGEMM_STATUS_SUCCESS;
    std::unique_ptr<CapturedGraph> graph;
    ASSERT_NO_THROW(graph = std::make_unique<CapturedGraph>(stream.get(), mode,
                                                            [&] { status = sgemm(stream.get()); }));
    EXPECT_EQ(status, TGEMM_STATUS_NOT_PREPARED);
    EXPECT_NE(std::string(tgemmGetLastError()).find("call tgemmPrepare"), std::string::npos)
        << tgemmGetLastError();
    EXPECT_EQ(graph->nodes(), 0u);
    graph->launch(stream.get());
    stream.synchronize();
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusActive;
    ASSERT_EQ(cudaStreamIsCapturing(stream.get(), &capture), cudaSuccess);
    EXPECT_EQ(capture, cudaStreamCaptureStatusNone);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // Prepared, the same call captures and replays right; prepared for other pointers'
  // alignment, it is not prepared.
  tgemmProblem_t problem = {};
  problem.m = 128;
  problem.n = 96;
  problem.k = 64;
  problem.lda = 64;
  problem.ldb = problem.ldc = 96;
  problem.Aalignment = 4;
  ASSERT_EQ(tgemmPrepare(handle, &problem, 1), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  tgemmStatus_t status = TGEMM_STATUS_SUCCESS;
  {
    CapturedGraph refused(stream.get(), cudaStreamCaptureModeGlobal,
                          [&] { status = sgemm(stream.get()); });
    EXPECT_EQ(status, TGEMM_STATUS_NOT_PREPARED);
  }
  problem.Aalignment = 0;
  ASSERT_EQ(tgemmPrepare(handle, &problem, 1), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  CapturedGraph graph(stream.get(), cudaStreamCaptureModeGlobal,
                      [&] { status = sgemm(stream.get()); });
  EXPECT_EQ(status, TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  graph.launch(stream.get());
  stream.synchronize();
  ops.expect_correct(ops.result(*ops.captured_c), "replay");
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

// A problem resolved without its workspace (selection() chooses but reserves nothing) is
// refused on a capturing stream, which cannot allocate it: NotPreparedError, nothing launched.
TEST_F(GraphCaptureGpu, a_workspace_not_reserved_is_not_allocated_inside_a_capture) {
  const testing::GraphCase c = testing::graph_cases().at(1);  // split-K through a workspace
  CountingAllocator allocations;
  Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{c.kernel()}, false});
  d.set_workspace_allocator(allocations.make());
  const Operands ops(c.problem(), c.offset, 1.0f, -1.0f, 70);
  EXPECT_EQ(d.selection(ops.call(*ops.captured_c)), Selection::fallback_default);
  CudaStream stream;
  EXPECT_THROW(CapturedGraph(stream.get(), cudaStreamCaptureModeGlobal,
                             [&] { d.gemm(ops.call(*ops.captured_c), stream.get()); }),
               NotPreparedError);
  EXPECT_EQ(*allocations.count, 0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  capture_replay_and_compare(d, allocations, ops, c.offset, cudaStreamCaptureModeGlobal);
  EXPECT_EQ(*allocations.count, 1);
}

// Calls of one shape with other leading dimensions are another problem: a plan's tensor maps
// hold the leading dimensions, so each has its own plan (a cached one of the first would read
// the second's operands with the first's row pitch) and its own preparation.
TEST_F(GraphCaptureGpu, other_leading_dimensions_are_another_prepared_problem) {
  std::optional<testing::GraphCase> tma;  // a copy: graph_cases() returns a temporary
  for (const testing::GraphCase& c : testing::graph_cases())
    if (c.kernel().config.template_name == "gemm_tma_wgmma" && !tma) tma = c;
  ASSERT_TRUE(tma);
  const DefaultKernel kernel = tma->kernel();
  const Problem packed = tma->problem();
  if (const auto why = template_named(kernel.config.template_name)
                           .unsupported_reason(kernel.config, packed, arch_))
    GTEST_SKIP() << *why;
  Problem padded = packed;
  padded.lda += 64;
  padded.ldb += 64;
  padded.ldc += 64;
  CountingAllocator allocations;
  Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{kernel}, false});
  d.set_workspace_allocator(allocations.make());
  const Operands first(packed, 0, 1.0f, 0.5f, 100), second(padded, 0, 1.0f, 0.5f, 101);
  capture_replay_and_compare(d, allocations, first, 0, cudaStreamCaptureModeGlobal);
  CudaStream stream;
  EXPECT_THROW(CapturedGraph(stream.get(), cudaStreamCaptureModeGlobal,
                             [&] { d.gemm(second.call(*second.captured_c), stream.get()); }),
               NotPreparedError);
  capture_replay_and_compare(d, allocations, second, 0, cudaStreamCaptureModeGlobal);
}

// A lent workspace is the one the kernels use, and the dispatcher never allocates one; a lent
// buffer too small is a status at prepare and at the call, never an allocation.
TEST_F(GraphCaptureGpu, a_lent_workspace_is_used_and_one_too_small_is_the_status) {
  const testing::GraphCase c = testing::graph_cases().at(1);  // split-K through a workspace
  CountingAllocator allocations;
  Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{c.kernel()}, false});
  d.set_workspace_allocator(allocations.make());
  const Operands ops(c.problem(), c.offset, 1.0f, 0.25f, 80);
  DeviceBuffer small(256);
  d.set_workspace(small.get(), small.bytes());
  EXPECT_THROW(d.prepare({ops.request(c.offset)}), WorkspaceTooSmallError);
  const size_t needed = d.needed_workspace_bytes();
  EXPECT_GE(needed, size_t(16) * 64 * 64 * 4);  // 16 slices of the 64 x 64 C
  CudaStream stream;
  EXPECT_THROW(d.gemm(ops.call(*ops.eager_c), stream.get()), WorkspaceTooSmallError);

  DeviceBuffer lent(needed);
  TGEMM_CUDA_CHECK(cudaMemset(lent.get(), 0xff, needed));  // NaN everywhere until written
  d.set_workspace(lent.get(), lent.bytes());
  EXPECT_EQ(d.workspace_bytes(), needed);
  capture_replay_and_compare(d, allocations, ops, c.offset, cudaStreamCaptureModeGlobal);
  EXPECT_EQ(*allocations.count, 0);
  std::vector<unsigned char> used(needed);
  TGEMM_CUDA_CHECK(cudaMemcpy(used.data(), lent.get(), needed, cudaMemcpyDeviceToHost));
  EXPECT_NE(std::count(used.begin(), used.end(), 0xff), std::ptrdiff_t(needed))
      << "the lent workspace was never written";

  // A buffer off 256-byte alignment, or host memory, is refused.
  EXPECT_THROW(d.set_workspace(static_cast<char*>(lent.get()) + 16, 256), InvalidValueError);
  std::vector<char> host(1024);
  EXPECT_THROW(d.set_workspace(host.data() + (256 - uintptr_t(host.data()) % 256), 256),
               InvalidValueError);
}

// Many problems of the shipped defaults, f32, f16, bf16 and tf32, prepared in one call and
// captured into one graph through the C API: each replayed C equals its eager call's.
TEST_F(GraphCaptureGpu, one_graph_of_calls_of_every_type_through_the_c_api) {
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, "/nonexistent/tgemm.db"), TGEMM_STATUS_SUCCESS);
  struct Call {
    const char* types;
    tgemmComputeType_t compute;
    Op op_a, op_b;
    int m, n, k;
  };
  const Call calls[] = {{"f32", TGEMM_COMPUTE_32F, Op::N, Op::N, 256, 256, 256},
                        {"f32", TGEMM_COMPUTE_32F, Op::T, Op::N, 1, 1024, 2048},
                        {"f32", TGEMM_COMPUTE_32F, Op::N, Op::T, 64, 64, 8192},
                        {"tf32", TGEMM_COMPUTE_32F_FAST_TF32, Op::N, Op::T, 512, 256, 128},
                        {"f32x3", TGEMM_COMPUTE_32F_3XTF32, Op::N, Op::N, 128, 128, 512},
                        {"f16", TGEMM_COMPUTE_32F, Op::N, Op::T, 512, 512, 256},
                        {"bf16", TGEMM_COMPUTE_32F, Op::N, Op::N, 200, 120, 4096},
                        {"bf16_out_f32", TGEMM_COMPUTE_32F, Op::T, Op::T, 96, 300, 128}};
  const auto c_type = [](DType t) {
    return t == DType::f32 ? TGEMM_R_32F : t == DType::f16 ? TGEMM_R_16F : TGEMM_R_16BF;
  };
  std::vector<std::unique_ptr<Operands>> operands;
  std::vector<tgemmProblem_t> problems;
  for (const Call& call : calls) {
    const Problem p =
        Problem::packed(parse_gemm_types(call.types), call.op_a, call.op_b, call.m, call.n, call.k);
    operands.push_back(std::make_unique<Operands>(p, 0, 1.0f, 0.5f, uint32_t(90 + call.k)));
    tgemmProblem_t problem = {};
    problem.op_a = call.op_a == Op::T ? TGEMM_OP_T : TGEMM_OP_N;
    problem.op_b = call.op_b == Op::T ? TGEMM_OP_T : TGEMM_OP_N;
    problem.m = call.m;
    problem.n = call.n;
    problem.k = call.k;
    problem.Atype = c_type(p.types.a);
    problem.Btype = c_type(p.types.b);
    problem.Ctype = c_type(p.types.c);
    problem.lda = int(p.lda);
    problem.ldb = int(p.ldb);
    problem.ldc = int(p.ldc);
    problem.computeType = call.compute;
    problems.push_back(problem);
  }
  ASSERT_EQ(tgemmPrepare(handle, problems.data(), int(problems.size())), TGEMM_STATUS_SUCCESS)
      << tgemmGetLastError();
  size_t needed = 0;
  EXPECT_EQ(tgemmGetWorkspaceSize(handle, &needed), TGEMM_STATUS_SUCCESS);
  const auto run_all = [&](cudaStream_t stream, bool captured) {
    for (size_t i = 0; i < problems.size(); ++i) {
      const tgemmProblem_t& p = problems[i];
      const Operands& ops = *operands[i];
      const Placed& c = captured ? *ops.captured_c : *ops.eager_c;
      EXPECT_EQ(tgemmGemmEx(handle, p.op_a, p.op_b, p.m, p.n, p.k, &ops.alpha, ops.da->ptr, p.Atype,
                            p.lda, ops.db->ptr, p.Btype, p.ldb, &ops.beta, c.ptr, p.Ctype, p.ldc,
                            p.computeType, stream),
                TGEMM_STATUS_SUCCESS)
          << i << ": " << tgemmGetLastError();
    }
  };
  CudaStream stream;
  const CapturedGraph graph(stream.get(), cudaStreamCaptureModeGlobal,
                            [&] { run_all(stream.get(), true); });
  run_all(stream.get(), false);
  graph.launch(stream.get());
  stream.synchronize();
  for (size_t i = 0; i < problems.size(); ++i) {
    SCOPED_TRACE(operands[i]->p.key());
    const std::vector<float> eager = operands[i]->result(*operands[i]->eager_c);
    operands[i]->expect_correct(eager, "eager");
    operands[i]->expect_correct(operands[i]->result(*operands[i]->captured_c), "replay", &eager);
  }
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace tgemm
