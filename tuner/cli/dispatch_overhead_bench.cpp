// tgemm-dispatch-bench: host-side cost of one libtgemm call on a cached hit (Google
// Benchmark). `selection` is the dispatcher's own work (validate, key, cached lookup);
// `gemm` adds the kernel launch; `raw_launch` is cudaLaunchKernel of the same kernel alone,
// so gemm - raw_launch is what the dispatcher adds to a launch. `tensor_gemm` is a cached bf16
// call (on Hopper a family that reads tensor maps: the maps of the last pointers reused), and
// `tensor_gemm_new_pointers` the same with B's pointer changed every call (the maps encoded
// again). `c_api_gemm` is `gemm` through the C API (tgemmGemmEx on a handle): the direct C
// call a binding is measured against (`c_api_gemm_default_stream` on the legacy default
// stream). Also counts heap allocations per cached call, which must be zero.
//   tgemm-dispatch-bench [--db tgemm.db] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tgemm/tgemm_c.h"

namespace {

std::atomic<uint64_t> g_allocations{0};
std::string g_db_path = "tgemm.db";

constexpr int kM = 64, kN = 64, kK = 64;

// One problem's buffers and call, resolved once (the benchmarks see cached hits only). B has a
// twin buffer, so a benchmark can alternate the pointer a launch reads.
struct Fixture {
  Fixture(tgemm::GemmTypes types, tgemm::Op op_b, int m, int n, int k) {
    const size_t e = size_t(tgemm::element_bytes(types.a));
    a = tgemm::DeviceBuffer(size_t(m) * size_t(k) * e);
    b = tgemm::DeviceBuffer(size_t(k) * size_t(n) * e);
    b_twin = tgemm::DeviceBuffer(size_t(k) * size_t(n) * e);
    c = tgemm::DeviceBuffer(size_t(m) * size_t(n) * size_t(tgemm::element_bytes(types.c)));
    call.types = types;
    call.op_b = op_b;
    call.m = m;
    call.n = n;
    call.k = k;
    call.a = a.get();
    call.lda = k;
    call.b = b.get();
    call.ldb = op_b == tgemm::Op::N ? n : k;
    call.c = c.get();
    call.ldc = n;
    dispatcher.gemm(call, stream.get());
    stream.synchronize();
  }
  tgemm::DeviceBuffer a, b, b_twin, c;
  tgemm::CudaStream stream;
  tgemm::Dispatcher dispatcher{{g_db_path, {}, true}};
  tgemm::GemmCall call;
};

Fixture& fixture() {
  static Fixture f(tgemm::GemmTypes{}, tgemm::Op::N, kM, kN, kK);
  return f;
}

// A tensor-core problem (bf16 NT), served on Hopper by a family whose launches read tensor
// maps: its cached calls reuse the maps, a call with a new B pointer encodes them again.
Fixture& tensor_fixture() {
  static Fixture f(tgemm::gemm_types("bf16"), tgemm::Op::T, 256, 256, 256);
  return f;
}

void selection(benchmark::State& state) {
  Fixture& f = fixture();
  const uint64_t before = g_allocations;
  for (auto _ : state) benchmark::DoNotOptimize(f.dispatcher.selection(f.call));
  state.counters["allocs_per_call"] =
      double(g_allocations - before) / double(std::max<int64_t>(1, state.iterations()));
  state.SetLabel(tgemm::to_string(f.dispatcher.selection(f.call)));
}

// Cached calls of the fixture's problem; the launch queue is drained every 512 calls so that
// the host never waits on a full queue.
void cached_calls(benchmark::State& state, Fixture& f) {
  const uint64_t before = g_allocations;
  int64_t n = 0;
  for (auto _ : state) {
    f.dispatcher.gemm(f.call, f.stream.get());
    if (++n % 512 == 0) f.stream.synchronize();
  }
  f.stream.synchronize();
  state.counters["allocs_per_call"] =
      double(g_allocations - before) / double(std::max<int64_t>(1, state.iterations()));
}

void gemm(benchmark::State& state) { cached_calls(state, fixture()); }

// The fixture's call through tgemmGemmEx, on a handle of the same database, on `stream`.
void c_api_calls(benchmark::State& state, cudaStream_t stream) {
  Fixture& f = fixture();
  static tgemmHandle_t handle = [] {
    tgemmHandle_t h = nullptr;
    return tgemmCreate(&h, g_db_path.c_str()) == TGEMM_STATUS_SUCCESS ? h : nullptr;
  }();
  if (handle == nullptr) return state.SkipWithError("tgemmCreate failed");
  const float alpha = 1.0f, beta = 0.0f;
  const uint64_t before = g_allocations;
  int64_t n = 0;
  for (auto _ : state) {
    const tgemmStatus_t status = tgemmGemmEx(
        handle, TGEMM_OP_N, TGEMM_OP_N, kM, kN, kK, &alpha, f.call.a, TGEMM_R_32F, kK, f.call.b,
        TGEMM_R_32F, kN, &beta, f.call.c, TGEMM_R_32F, kN, TGEMM_COMPUTE_32F, stream);
    if (status != TGEMM_STATUS_SUCCESS) return state.SkipWithError(tgemmGetStatusString(status));
    if (++n % 512 == 0) cudaStreamSynchronize(stream);
  }
  cudaStreamSynchronize(stream);
  state.counters["allocs_per_call"] =
      double(g_allocations - before) / double(std::max<int64_t>(1, state.iterations()));
}

void c_api_gemm(benchmark::State& state) { c_api_calls(state, fixture().stream.get()); }

// The same on the legacy default stream (0), where PyTorch's current stream is unless a
// program picks another: the C call a Python call on that stream compares with.
void c_api_gemm_default_stream(benchmark::State& state) { c_api_calls(state, nullptr); }

void tensor_gemm(benchmark::State& state) {
  cached_calls(state, tensor_fixture());
  state.SetLabel(tgemm::to_string(tensor_fixture().dispatcher.selection(tensor_fixture().call)));
}

// Every call with the other B buffer: what a call costs when its operands moved.
void tensor_gemm_new_pointers(benchmark::State& state) {
  Fixture& f = tensor_fixture();
  int64_t n = 0;
  for (auto _ : state) {
    f.call.b = n % 2 ? f.b.get() : f.b_twin.get();
    f.dispatcher.gemm(f.call, f.stream.get());
    if (++n % 512 == 0) f.stream.synchronize();
  }
  f.stream.synchronize();
  f.call.b = f.b.get();
}

void raw_launch(benchmark::State& state) {
  Fixture& f = fixture();
  // The same kernel the dispatcher picked, launched directly.
  const tgemm::Problem problem =
      tgemm::Problem::packed(tgemm::GemmTypes{}, tgemm::Op::N, tgemm::Op::N, kM, kN, kK);
  static const auto& config = tgemm::shipped_default_kernels().front().config;
  static const tgemm::GemmTemplate& family = tgemm::template_named(config.template_name);
  static tgemm::CompiledKernel compiled =
      tgemm::build_kernel(family, config, problem, tgemm::query_device(0).arch);
  static tgemm::GemmKernel kernel(config, compiled.cubin, family.entries(config, problem.types),
                                  tgemm::main_smem_opt_in(family, config, problem));
  const tgemm::LaunchPlan plan =
      family.plan_launch(config, problem, tgemm::query_device(0).sm_count);
  const tgemm::GemmParams params =
      tgemm::make_params(problem, f.call.a, f.call.b, f.call.c, 1.0f, 0.0f);
  int64_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernel.launch(plan, params, f.stream.get()));
    if (++n % 512 == 0) f.stream.synchronize();
  }
  f.stream.synchronize();
}

BENCHMARK(selection);
BENCHMARK(gemm);
BENCHMARK(c_api_gemm);
BENCHMARK(c_api_gemm_default_stream);
BENCHMARK(raw_launch);
BENCHMARK(tensor_gemm);
BENCHMARK(tensor_gemm_new_pointers);

}  // namespace

void* operator new(size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--db") == 0) {
      g_db_path = argv[i + 1];
      for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  // Google Benchmark takes its own --benchmark_* flags; anything else is named before the
  // device is looked at.
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    std::fprintf(stderr, "tgemm-dispatch-bench: options are --db FILE and --benchmark_*\n");
    return 2;
  }
  if (tgemm::cuda_device_count() == 0) {
    std::fprintf(stderr, "tgemm-dispatch-bench: no CUDA driver/device available\n");
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
