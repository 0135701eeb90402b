// libtgemm on a GPU: every selection path computes the right answer, in all four layouts,
// with beta != 0, odd leading dimensions and a pointer one float off 16-byte alignment.
// Skips cleanly without a GPU.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <tgemm/tgemm_c.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/dispatch/problem_recorder.h"
#include "src/jit/nvrtc_compiler.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

KernelConfig simt(int64_t bm, int64_t bn, int64_t tm, int64_t tn, int64_t vec, int64_t split_k) {
  return {"sgemm_simt",
          {{"BM", bm},
           {"BN", bn},
           {"BK", 16},
           {"TM", tm},
           {"TN", tn},
           {"WARP_N", 8},
           {"VEC", vec},
           {"PAD_A", 4},
           {"PAD_B", 4},
           {"STAGES", 2},
           {"SPLIT_K", split_k},
           {"SWIZZLE", 1}}};
}

// Host matrices for one call, the device copies, and a double-precision reference.
struct Case {
  Op op_a, op_b;
  int m, n, k, lda, ldb, ldc;
  float alpha, beta;
  int offset;  // elements added to each device pointer
  std::vector<float> a, b, c0;

  static Case make(Op op_a, Op op_b, int m, int n, int k, int pad, float alpha, float beta,
                   int offset, uint32_t seed) {
    Case t{op_a, op_b, m, n, k, 0, 0, 0, alpha, beta, offset, {}, {}, {}};
    const int a_rows = op_a == Op::N ? m : k, a_cols = op_a == Op::N ? k : m;
    const int b_rows = op_b == Op::N ? k : n, b_cols = op_b == Op::N ? n : k;
    t.lda = a_cols + pad;
    t.ldb = b_cols + pad;
    t.ldc = n + pad;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    t.a.resize(size_t(a_rows) * t.lda);
    t.b.resize(size_t(b_rows) * t.ldb);
    t.c0.resize(size_t(m) * t.ldc);
    for (auto* v : {&t.a, &t.b, &t.c0})
      for (float& x : *v) x = dist(rng);
    return t;
  }
  double a_at(int i, int p) const {
    return op_a == Op::N ? a[size_t(i) * lda + p] : a[size_t(p) * lda + i];
  }
  double b_at(int p, int j) const {
    return op_b == Op::N ? b[size_t(p) * ldb + j] : b[size_t(j) * ldb + p];
  }

  // Runs `gemm` on device copies and returns ||C - Cref|| / ||Cref||.
  template <typename Gemm>
  double run(Gemm&& gemm) const {
    DeviceBuffer da((a.size() + offset) * 4), db((b.size() + offset) * 4),
        dc((c0.size() + offset) * 4);
    float* pa = da.get<float>() + offset;
    float* pb = db.get<float>() + offset;
    float* pc = dc.get<float>() + offset;
    TGEMM_CUDA_CHECK(cudaMemcpy(pa, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(pb, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(pc, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
    gemm(pa, pb, pc);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> c(c0.size());
    TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), pc, c.size() * 4, cudaMemcpyDeviceToHost));
    double err = 0, norm = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int p = 0; p < k; ++p) ref += a_at(i, p) * b_at(p, j);
        ref = alpha * ref + beta * double(c0[size_t(i) * ldc + j]);
        const double got = c[size_t(i) * ldc + j];
        if (!std::isfinite(got)) return INFINITY;
        err += (got - ref) * (got - ref);
        norm += ref * ref;
      }
    // Padding past n must be untouched.
    for (int i = 0; i < m; ++i)
      for (int j = n; j < ldc; ++j)
        if (c[size_t(i) * ldc + j] != c0[size_t(i) * ldc + j]) return INFINITY;
    return std::sqrt(err / norm);
  }
};

class DispatcherGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    info_ = query_device(0);
    dir_ = fs::temp_directory_path() / ("tgemm_dispatch_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    db_path_ = (dir_ / "tuned.db").string();
    // A fixture database: 256^3 NN tuned on this GPU, with its cubin.
    TuningDb db(db_path_, TuningDb::Mode::read_write);
    const int64_t run = db.begin_run("dispatcher test", "tgemm", info_.arch);
    const int64_t device = db.upsert_device(info_);
    const auto problem = Problem::packed(GemmTypes{}, Op::N, Op::N, 256, 256, 256);
    const int64_t problem_id = db.upsert_problem(problem);
    const auto source = kernel_source("sgemm_simt");
    const int64_t kernel_id = db.upsert_kernel(tuned_, source.hash);
    auto compiled = tgemm::testing::compile_f32(tuned_, Op::N, Op::N, info_.arch);
    ASSERT_TRUE(compiled.ok) << compiled.error;
    const int64_t binary = db.store_binary(run, kernel_id, compiled, BinaryStatus::ok, "");
    TrialResult t;
    t.config = tuned_;
    t.status = TrialStatus::ok;
    t.time_min_us = t.time_median_us = t.time_max_us = 10;
    t.runs = 10;
    db.record_trial(run, problem_id, kernel_id, device, binary, t);
    db.update_best(problem_id, device);
    db.finish_run(run, "fixture");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static void expect_correct(Dispatcher& d, const Case& t, Selection expected) {
    GemmCall call{t.op_a,  t.op_b, t.m,     t.n,   t.k,     t.alpha, t.beta,
                  nullptr, t.lda,  nullptr, t.ldb, nullptr, t.ldc,   {}};
    Selection seen{};
    double err = t.run([&](float* a, float* b, float* c) {
      call.a = a;
      call.b = b;
      call.c = c;
      seen = d.selection(call);
      d.gemm(call, nullptr);
    });
    EXPECT_EQ(seen, expected) << to_string(seen);
    EXPECT_LT(err, 1e-5) << t.m << "x" << t.n << "x" << t.k << " lda " << t.lda;
  }

  DeviceInfo info_;
  fs::path dir_;
  std::string db_path_;
  KernelConfig tuned_ = simt(64, 64, 4, 4, 4, 1);
};

TEST_F(DispatcherGpu, exact_match_runs_the_tuned_cubin) {
  Dispatcher d({db_path_, {}, true});
  ASSERT_TRUE(d.has_database()) << d.database_problem();
  expect_correct(d, Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 0, 1), Selection::exact);
}

TEST_F(DispatcherGpu, nearest_serves_untuned_shapes_and_beta) {
  Dispatcher d({db_path_, {}, true});
  expect_correct(d, Case::make(Op::N, Op::N, 300, 200, 100, 0, 1.5f, -0.5f, 0, 2),
                 Selection::nearest);
}

TEST_F(DispatcherGpu, default_serves_every_layout_odd_ld_and_offset_pointers) {
  Dispatcher d({db_path_, {}, true});
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      if (a == Op::N && b == Op::N) continue;  // NN is tuned in the fixture
      expect_correct(d, Case::make(a, b, 127, 65, 33, 0, 1, 0, 0, 3), Selection::fallback_default);
      expect_correct(d, Case::make(a, b, 130, 70, 129, 1, 0.5f, 2, 0, 4),
                     Selection::fallback_default);
      expect_correct(d, Case::make(a, b, 64, 64, 64, 0, 1, 1, 1, 5), Selection::fallback_default);
    }
  // NN with an odd lda: the tuned VEC=4 kernel cannot load it, the defaults' VEC=1 can.
  expect_correct(d, Case::make(Op::N, Op::N, 256, 256, 255, 0, 1, 0, 0, 6),
                 Selection::fallback_default);
  expect_correct(d, Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 1, 7),
                 Selection::fallback_default);
}

// Record mode end to end: the served calls without an exact entry are recorded (the exact
// one is not), tgemm-tune tunes the recorded file, and the same call is then served exactly.
TEST_F(DispatcherGpu, records_untuned_calls_then_serves_them_exactly_after_tuning) {
  const std::string shapes = (dir_ / "recorded.yaml").string();
  const Case untuned = Case::make(Op::N, Op::T, 127, 65, 33, 0, 1, 0, 0, 12);
  record_problems(shapes);
  {
    Dispatcher d({db_path_, {}, true});
    expect_correct(d, Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 0, 1), Selection::exact);
    expect_correct(d, untuned, Selection::fallback_default);
    expect_correct(d, untuned, Selection::fallback_default);
  }
  record_problems("");
  const auto recorded = load_problem_set(shapes);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].problem.key(),
            Problem::packed(GemmTypes{}, Op::N, Op::T, 127, 65, 33).key());
  EXPECT_EQ(recorded[0].calls, 2);

  auto tune = testing::run_tool("tgemm-tune",
                                testing::exhaustive_tune_args(shapes, "tiny_sgemm_simt", db_path_));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  Dispatcher tuned({db_path_, {}, true});
  expect_correct(tuned, untuned, Selection::exact);
}

// A database tuned on another GPU of this arch serves this one (an H200's tuning on an H100,
// both sm_90 with 132 SMs): its exact entry, not the defaults. A GPU of another arch serves
// nothing here.
TEST_F(DispatcherGpu, another_gpu_of_the_same_arch_serves_its_tuning) {
  const auto change = [&](const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  };
  const Case tuned_shape = Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 0, 1);
  change("UPDATE devices SET name = 'Another GPU'");
  {
    Dispatcher d({db_path_, {}, true});
    expect_correct(d, tuned_shape, Selection::exact);
  }
  change("UPDATE devices SET sm_count = sm_count + 2");
  {
    Dispatcher d({db_path_, {}, true});
    expect_correct(d, tuned_shape, Selection::exact);
  }
  change(info_.arch == "sm_80" ? "UPDATE devices SET arch = 'sm_86'"
                               : "UPDATE devices SET arch = 'sm_80'");
  Dispatcher d({db_path_, {}, true});
  expect_correct(d, tuned_shape, Selection::fallback_default);
}

TEST_F(DispatcherGpu, cublas_is_the_last_resort_and_can_be_switched_off) {
  Dispatcher d({(dir_ / "missing.db").string(), std::vector<DefaultKernel>{}, true});
  EXPECT_FALSE(d.has_database());
  expect_correct(d, Case::make(Op::T, Op::N, 100, 90, 80, 1, 1, 0.25f, 0, 8), Selection::cublas);
  d.set_cublas_fallback(false);
  auto t = Case::make(Op::N, Op::N, 8, 8, 8, 0, 1, 0, 0, 9);
  EXPECT_THROW(t.run([&](float* a, float* b, float* c) {
    d.gemm({Op::N, Op::N, 8, 8, 8, 1, 0, a, 8, b, 8, c, 8, {}}, nullptr);
  }),
               NotSupportedError);
}

TEST_F(DispatcherGpu, k_zero_scales_c_by_beta) {
  Dispatcher d({db_path_, {}, true});
  auto t = Case::make(Op::N, Op::N, 33, 17, 0, 0, 1, 0.5f, 0, 10);
  t.lda = 1;  // k = 0: A has empty rows
  t.a.assign(size_t(33), 0.0f);
  t.b.assign(17, 0.0f);
  double err = t.run([&](float* a, float* b, float* c) {
    d.gemm({Op::N, Op::N, 33, 17, 0, 1, 0.5f, a, 1, b, 17, c, 17, {}}, nullptr);
  });
  EXPECT_LT(err, 1e-6);
}

// A database is code the library loads: it writes compiled cubins back only when asked.
TEST_F(DispatcherGpu, a_default_cubin_is_written_back_only_when_write_back_is_on) {
  const KernelConfig chosen =
      KernelSelector({}, shipped_default_kernels(), info_.arch, info_.sm_count)
          .choose(Problem::packed(GemmTypes{}, Op::T, Op::T, 96, 96, 96))
          .config;
  auto stored = [&] {
    return TuningDb(db_path_, TuningDb::Mode::read_only)
        .find_binary_for(chosen, kernel_source("sgemm_simt").hash,
                         Problem::packed(GemmTypes{}, Op::T, Op::T, 1, 1, 1), info_.arch,
                         NvrtcCompiler::version());
  };
  {
    Dispatcher off({db_path_, {}, true});
    expect_correct(off, Case::make(Op::T, Op::T, 96, 96, 96, 0, 1, 0, 0, 11),
                   Selection::fallback_default);
  }
  EXPECT_FALSE(stored());
  Dispatcher on({db_path_, {}, true, /*write_back_cubins=*/true});
  expect_correct(on, Case::make(Op::T, Op::T, 96, 96, 96, 0, 1, 0, 0, 11),
                 Selection::fallback_default);
  const auto written = stored();
  ASSERT_TRUE(written);
  EXPECT_FALSE(written->compiled.cubin.empty());
}

TEST_F(DispatcherGpu, many_threads_and_streams_share_one_handle) {
  Dispatcher d({db_path_, {}, true});
  std::vector<std::thread> threads;
  std::vector<double> errors(6, INFINITY);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      CudaStream stream;
      auto c =
          Case::make(t % 2 ? Op::T : Op::N, Op::N, 128 + t, 64 + 3 * t, 96, 0, 1, 0, 0, 20 + t);
      GemmCall call{c.op_a,  c.op_b, c.m,     c.n,   c.k,     1,     0,
                    nullptr, c.lda,  nullptr, c.ldb, nullptr, c.ldc, {}};
      errors[t] = c.run([&](float* a, float* b, float* out) {
        call.a = a;
        call.b = b;
        call.c = out;
        for (int rep = 0; rep < 20; ++rep) d.gemm(call, stream.get());
        stream.synchronize();
      });
    });
  for (auto& t : threads) t.join();
  for (double e : errors) EXPECT_LT(e, 1e-5);
}

// One handle serves every GPU of the process: each call runs on the calling thread's device
// with that device's own modules. Skips with fewer than two GPUs.
TEST_F(DispatcherGpu, one_handle_serves_several_gpus) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than two CUDA devices";
  Dispatcher d({db_path_, {}, true});
  for (int device = cuda_device_count() - 1; device >= 0; --device) {
    TGEMM_CUDA_CHECK(cudaSetDevice(device));
    expect_correct(d, Case::make(Op::N, Op::T, 200, 120, 72, 0, 1, 0.5f, 0, 40 + device),
                   Selection::fallback_default);
  }
  TGEMM_CUDA_CHECK(cudaSetDevice(0));
}

// A database is input: the fixture's tuned kernel with a parameter the host side divides by
// made zero (or negative, gone, or joined by one the family lacks) is skipped, and the library
// serves 256^3 from its defaults, through the C++ dispatcher and the C API alike, instead of
// dying of SIGFPE.
TEST_F(DispatcherGpu, a_kernel_row_with_a_bad_parameter_is_skipped_not_run) {
  const std::pair<const char*, const char*> damages[] = {
      {"VEC=4", "VEC=0"},  {"BM=64", "BM=0"}, {"TM=4", "TM=0"},
      {"BK=16", "BK=-16"}, {",VEC=4", ""},    {"SWIZZLE=1", "SWIZZLE=1,NO_SUCH=1"}};
  for (const auto& [from, to] : damages) {
    SCOPED_TRACE(std::string(from) + " -> " + to);
    const std::string path = (dir_ / "damaged.db").string();
    fs::copy_file(db_path_, path, fs::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string sql =
        std::string("UPDATE kernels SET params = replace(params, '") + from + "', '" + to + "')";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);

    Dispatcher d({path, {}, true});
    expect_correct(d, Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 0, 50),
                   Selection::fallback_default);

    tgemmHandle_t handle = nullptr;
    ASSERT_EQ(tgemmCreate(&handle, path.c_str()), TGEMM_STATUS_SUCCESS);
    const Case t = Case::make(Op::N, Op::N, 256, 256, 256, 0, 1, 0, 0, 51);
    tgemmSelection_t selection = TGEMM_SELECTION_EXACT;
    tgemmStatus_t status = TGEMM_STATUS_SUCCESS;
    const double err = t.run([&](float* a, float* b, float* c) {
      EXPECT_EQ(tgemmGetSelection(handle, TGEMM_OP_N, TGEMM_OP_N, 256, 256, 256, a, 256, b, 256, c,
                                  256, &selection),
                TGEMM_STATUS_SUCCESS);
      status = tgemmSgemm(handle, TGEMM_OP_N, TGEMM_OP_N, 256, 256, 256, &t.alpha, a, 256, b, 256,
                          &t.beta, c, 256, nullptr);
    });
    EXPECT_EQ(status, TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
    EXPECT_EQ(selection, TGEMM_SELECTION_DEFAULT);
    EXPECT_LT(err, 1e-5);
    EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
  }
}

}  // namespace
}  // namespace tgemm
