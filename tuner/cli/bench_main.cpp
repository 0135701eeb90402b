// tgemm-bench: libtgemm's dispatcher against cuBLAS, shape by shape, in one process.
// For each shape: check the dispatcher's result against cuBLAS FP32, then time both
// interleaved with CUDA events (L2 flushed for problems that fit in it) and print µs,
// TFLOP/s, the ratio and the selection path. --compare-db times a second database's
// dispatcher in the same loop (e.g. a database tuned on exactly these shapes), which gives
// "untuned shapes against their own best tuned kernel". --untuned does that with one
// database: each shape is also served from a scratch copy of --db with that shape forgotten
// (leave one out), so the dispatcher picks what it would pick had nobody tuned it. A shape
// with a fused epilogue is timed against cuBLASLt's fused call where cuBLASLt has the epilogue
// (else against cuBLAS's GEMM followed by the epilogue as a kernel of its own), and that
// unfused pair is timed beside them too (tuner/evaluate/epilogue_peers.h). An FP8 shape is timed
// against cuBLASLt's FP8 call with the same scales, or, where cuBLASLt has none for it, against
// cuBLAS's 16-bit GEMM of the same shape (tuner/evaluate/fp8_peers.h). A grouped shape is checked
// on every problem and timed against cuBLAS's grouped call (cublasGemmGroupedBatchedEx), by the
// main database's dispatcher alone: grouped GEMMs are not tuned, so no other column applies.
#include <cublas_v2.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "tuner/cli/checked_exit.h"
#include "tuner/cli/option_checks.h"
#include "tuner/evaluate/epilogue_peers.h"
#include "tuner/evaluate/fp8_peers.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/grouped_operands.h"
#include "tuner/evaluate/interleaved_timer.h"
#include "tuner/input/problem_set.h"
#include "tuner/output/output_file.h"

namespace tgemm {
namespace {

struct BenchOptions {
  std::string db_path = "tgemm.db";
  std::string compare_db;
  std::string shapes_path;
  std::string csv_path;
  bool untuned = false;
  int device = 0;
  TimingOptions timing;
};

// `elements` random values in [-1, 1) of `type` on the GPU; `values` gets them as f32.
DeviceBuffer random_matrix(DType type, int64_t elements, std::mt19937_64& rng,
                           std::vector<float>* values) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  values->resize(static_cast<size_t>(elements));
  for (float& x : *values) x = round_to(type, dist(rng));
  const std::vector<unsigned char> host = to_bytes(type, *values);
  DeviceBuffer buffer(host.size());
  TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

// A buffer of `type` elements back on the host as f32 (poison stays poison).
std::vector<float> to_host(const DeviceBuffer& buffer, DType type) {
  std::vector<unsigned char> bytes(buffer.bytes());
  TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return from_bytes(type, bytes);
}

// cuBLAS as a contender: the matching call for the problem's types (SGEMM for f32 and
// f32x3), or the pedantic FP32 reference into an f32 C.
class Cublas {
 public:
  explicit Cublas(cudaStream_t stream) {
    if (cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) fail("cublasCreate failed");
    cublasSetStream(handle_, stream);
  }
  ~Cublas() { cublasDestroy(handle_); }
  std::string run(const GemmCall& c, CublasMath math) {
    const DType c_type = math == CublasMath::reference ? DType::f32 : c.types.c;
    cublasStatus_t st = row_major_gemm(handle_, c, math, c_type);
    return st == CUBLAS_STATUS_SUCCESS ? "" : cublasGetStatusString(st);
  }
  // cuBLAS's grouped call (cublasGemmGroupedBatchedEx) in the matching math.
  std::string run(const GroupedGemmCall& c) {
    cublasStatus_t st = row_major_grouped_gemm(handle_, c);
    return st == CUBLAS_STATUS_SUCCESS ? "" : cublasGetStatusString(st);
  }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// A scratch copy of a database with something forgotten (`forget` edits it): one shape for
// --untuned, or the vendor calls, so that its dispatcher serves our own best kernel. Deleted
// with this object.
class DatabaseWithout {
 public:
  DatabaseWithout(const std::string& source, const std::string& what,
                  const std::function<void(TuningDb&)>& forget)
      : dir_(std::filesystem::temp_directory_path().string(), "the " + what + " copy of " + source),
        path_(dir_.file(what + ".db")) {
    TuningDb(source, TuningDb::Mode::read_only).copy_to(path_);
    TuningDb writable(path_, TuningDb::Mode::read_write);
    forget(writable);
  }
  const std::string& path() const { return path_; }

 private:
  ScratchDir dir_;
  std::string path_;
};

// One more dispatcher timed beside the main one: --compare-db or the --untuned copy.
struct Contender {
  std::string label;  // column heading
  Dispatcher* dispatcher;
};

// A launcher of `run`, whose failure (a dispatcher's throw) is its message.
Launcher caught(std::function<void()> run) {
  return [run = std::move(run)] {
    try {
      run();
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
}

Launcher dispatcher_launcher(Dispatcher& d, const GemmCall& call, cudaStream_t stream) {
  return caught([&d, call, stream] { d.gemm(call, stream); });
}

// What a shape's check and peer need beside its call: the epilogue's and FP8's inputs.
struct ShapePeers {
  std::unique_ptr<EpiloguePeers> epilogue;
  std::unique_ptr<Fp8Peers> fp8;
};

// Result of `d` on `call` against cuBLAS pedantic FP32 into `ref` (f32; FP8 on the decoded
// operands), with the epilogue's reference applied where the problem has one; "" when within
// the bound of the problem's types.
std::string check(Dispatcher& d, Cublas& cublas, GemmCall call, const DeviceBuffer& c,
                  const DeviceBuffer& ref, const Problem& problem, const ShapePeers& peers,
                  cudaStream_t stream, double* rel_error) {
  TGEMM_CUDA_CHECK(cudaMemsetAsync(c.get(), 0xFF, c.bytes(), stream));  // poison
  d.gemm(call, stream);
  GemmCall ref_call = call;
  ref_call.c = ref.get();
  const EpiloguePeers* epilogue = peers.epilogue.get();
  if (peers.fp8) {
    if (auto e = peers.fp8->run(cublas.get(), ref_call, CublasMath::reference, DType::f32, stream);
        !e.empty())
      return e;
  } else if (auto e = cublas.run(ref_call, CublasMath::reference); !e.empty()) {
    return "cuBLAS: " + e;
  }
  if (epilogue)
    if (auto e = epilogue->apply_reference(ref.get(), stream); !e.empty()) return e;
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto got = to_host(c, problem.types.c), want = to_host(ref, DType::f32);
  // A batch's members of C follow each other (run_bench): one tall C of batch x m rows.
  auto result = check_result(got.data(), want.data(), problem.m * problem.batch, problem.n,
                             problem.ldc, relative_error_bound(problem.types, problem.k));
  *rel_error = result.rel_error;
  return result.ok ? "" : result.error;
}

// cuBLAS's call of `call` (its matching call for the types), or FP8's peer: cuBLASLt's FP8
// call with the same scales, or, where cuBLASLt has none for the problem, cuBLAS's 16-bit GEMM
// of the same shape on the decoded operands.
Launcher fp8_peer(cublasLtHandle_t lt, Cublas& cublas, const GemmCall& call,
                  const ShapePeers& peers, const std::string& name, cudaStream_t stream) {
  if (!peers.fp8) return [&cublas, call] { return cublas.run(call, CublasMath::matching); };
  Fp8Peers* fp8 = peers.fp8.get();
  if (std::string why; !fp8->prepare_lt(lt, call, stream, &why))
    spdlog::warn(
        "{}: cuBLASLt has no FP8 call for it ({}); the peer is cuBLAS {} on the same shape", name,
        why, to_string(fp8->decoded_type()));
  return [&cublas, fp8, call, stream] {
    return fp8->run(cublas.get(), call, CublasMath::matching, call.types.c, stream);
  };
}

double tflops(const Problem& p, double us) { return p.flops() / (us * 1e6); }

// A contender's three CSV cells: its path, its time and a ratio.
std::string csv_cells(Selection path, double us, double ratio) {
  return fmt::format("{},{:.3f},{:.4f}", to_string(path), us, ratio);
}

// A shape's line of the table: its served time and cuBLAS's, TFLOP/s, the ratio, our own best
// kernel's ratio (`ours_us`) and the contenders' columns (`tail`).
void print_row(const NamedProblem& named, Selection path, double us, double cublas_us,
               double ours_us, const std::string& tail) {
  const Problem& p = named.problem;
  fmt::print(
      "{:<18} {:<6} {:<3} {:<8} {:>10.1f} {:>8.2f} {:>10.1f} {:>8.2f} {:>6.2f}x {:>6.2f}x{}\n",
      named.name, p.types.name(), p.layout(), to_string(path), us, tflops(p, us), cublas_us,
      tflops(p, cublas_us), cublas_us / us, cublas_us / ours_us, tail);
}

void print_wrong(const NamedProblem& named, Selection path, const std::string& what) {
  fmt::print("{:<18} {:<6} {:<3} {:<8} WRONG RESULT from the {}\n", named.name,
             named.problem.types.name(), named.problem.layout(), to_string(path), what);
}

// A shape's CSV line; the contenders' cells come formatted (three each, two commas when absent).
std::string csv_line(const NamedProblem& named, Selection path, double us, double cublas_us,
                     double rel_error, const std::string& compare, const std::string& untuned,
                     const std::string& ours, const std::string& unfused) {
  const Problem& p = named.problem;
  return fmt::format("{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.3g},{},{},{},{}\n",
                     named.name, p.types.name(), p.layout(), p.m, p.n, p.k, to_string(path), us,
                     tflops(p, us), cublas_us, tflops(p, cublas_us), cublas_us / us, rel_error,
                     compare, untuned, ours, unfused);
}

// A grouped shape's figures: the dispatcher's grouped call checked on every problem against
// cuBLAS's pedantic FP32 of that problem, then timed against cuBLAS's grouped call
// (cublasGemmGroupedBatchedEx) in the same loop. `wrong` says what failed the check.
struct GroupedTiming {
  Selection path = Selection::cublas;
  double us = 0, cublas_us = 0, rel_error = 0;
  std::string wrong;
};

GroupedTiming time_grouped(Dispatcher& dispatcher, Cublas& cublas, const Problem& p,
                           std::mt19937_64& rng, L2Flusher& flusher, int64_t l2_bytes,
                           const TimingOptions& timing, cudaStream_t stream) {
  GroupedOperands operands(p, rng());
  const GroupedGemmCall call = operands.call(1.0f, 0.0f);
  GroupedTiming out;
  out.path = dispatcher.served_by(call).path;
  TGEMM_CUDA_CHECK(cudaMemsetAsync(operands.c().get(), 0xFF, operands.c().bytes(), stream));
  dispatcher.gemm_grouped(call, stream);
  DeviceBuffer ref(operands.c().bytes() / size_t(element_bytes(p.types.c)) * sizeof(float));
  for (size_t i = 0; i < operands.members().size(); ++i)
    if (auto e = cublas.run(operands.member_call(i, ref.get(), DType::f32, 1.0f, 0.0f),
                            CublasMath::reference);
        !e.empty()) {
      out.wrong = "cuBLAS: " + e;
      return out;
    }
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> got = operands.c_on_host(), want = to_host(ref, DType::f32);
  for (size_t i = 0; i < operands.members().size(); ++i) {
    const GroupedOperands::Member& x = operands.members()[i];
    const ResultCheck check = check_result(got.data() + x.c, want.data() + x.c, x.m, x.n, x.ldc,
                                           relative_error_bound(p.types, x.k));
    out.rel_error = std::max(out.rel_error, check.rel_error);
    if (!check.ok) {
      out.wrong = fmt::format("problem {} ({}x{}x{}): {}", i, x.m, x.n, x.k, check.error);
      return out;
    }
  }
  const std::vector<Launcher> launchers = {
      caught([&dispatcher, &call, stream] { dispatcher.gemm_grouped(call, stream); }),
      [&cublas, &call] { return cublas.run(call); }};
  const bool flush = p.min_bytes() <= 4.0 * double(l2_bytes);
  InterleavedTimer timer(stream, [&] {
    if (flush) flusher.flush(stream);
  });
  std::vector<TimingStats> stats;
  if (auto error = timer.time(launchers, 1.0, timing, &stats); !error.empty())
    fail("timing failed: {}", error);
  out.us = stats[0].median_us;
  out.cublas_us = stats[1].median_us;
  return out;
}

int run_bench(const BenchOptions& opt) {
  auto problems = load_problem_set(opt.shapes_path);
  if (opt.untuned) {  // its copies are made from --db, so it must open (no GPU needed to know)
    try {
      TuningDb(opt.db_path, TuningDb::Mode::read_only);
    } catch (const Error& e) {
      fail("--untuned needs a tuning database: {}", e.what());
    }
  }
  if (cuda_device_count() == 0) fail("no CUDA driver/device available");
  TGEMM_CUDA_CHECK(cudaSetDevice(opt.device));
  const DeviceInfo info = query_device(opt.device);
  Dispatcher dispatcher({opt.db_path, {}, true});
  if (!dispatcher.has_database())
    spdlog::warn("{}: {}; every shape uses defaults", opt.db_path, dispatcher.database_problem());
  std::unique_ptr<Dispatcher> compare;
  if (!opt.compare_db.empty()) {
    compare = std::make_unique<Dispatcher>(DispatcherOptions{opt.compare_db, {}, true});
    if (!compare->has_database()) fail("--compare-db: {}", compare->database_problem());
  }
  // Our own best kernels, timed beside what is served where a vendor call won a problem.
  std::optional<DatabaseWithout> without_vendor;
  std::unique_ptr<Dispatcher> ours;
  if (dispatcher.has_database()) {
    int64_t vendor_trials = 0;
    without_vendor.emplace(opt.db_path, "ours",
                           [&](TuningDb& db) { vendor_trials = db.forget_vendor_calls(); });
    if (vendor_trials > 0)
      ours = std::make_unique<Dispatcher>(DispatcherOptions{without_vendor->path(), {}, true});
  }
  CudaStream stream;
  Cublas cublas(stream.get());
  CublasLtHandle lt;  // for an epilogue's fused peer and FP8's
  L2Flusher flusher(info.l2_bytes);
  std::mt19937_64 rng(std::random_device{}());

  std::optional<OutputFile> csv;
  if (!opt.csv_path.empty()) {
    csv.emplace(opt.csv_path, Overwrite::regular_file, "CSV file");
    csv->append(
        "name,dtype,layout,m,n,k,path,tgemm_us,tgemm_tflops,cublas_us,cublas_tflops,"
        "ratio_vs_cublas,rel_error,compare_path,compare_us,ratio_vs_compare,untuned_path,"
        "untuned_us,tuned_over_untuned,ours_path,ours_us,ours_ratio_vs_cublas,unfused_us\n");
  }
  fmt::print("{} ({}, {} SMs), database {}\n", info.name, info.arch, info.sm_count, opt.db_path);
  fmt::print(
      "{:<18} {:<6} {:<3} {:<8} {:>10} {:>8} {:>10} {:>8} {:>7} {:>7}{}{}\n", "shape", "type",
      "lay", "path", "served us", "TFLOP/s", "cuBLAS us", "TFLOP/s", "ratio", "ours",
      compare ? fmt::format(" {:<8} {:>10} {:>8}", "tuned", "tuned us", "vs tuned") : "",
      opt.untuned ? fmt::format(" {:<8} {:>10} {:>8}", "untuned", "untuned us", "tuned/un") : "");
  std::vector<double> ratios, ours_ratios, vs_compare, vs_untuned;
  int wrong_results = 0;
  for (const NamedProblem& named : problems) {
    const Problem& p = named.problem;
    if (p.batch_form() == BatchForm::grouped) {  // the main dispatcher and cuBLAS only
      const GroupedTiming t = time_grouped(dispatcher, cublas, p, rng, flusher, info.l2_bytes,
                                           opt.timing, stream.get());
      if (!t.wrong.empty()) {
        print_wrong(named, t.path, t.wrong);
        ++wrong_results;
        continue;
      }
      ratios.push_back(t.cublas_us / t.us);
      ours_ratios.push_back(t.cublas_us / t.us);
      print_row(named, t.path, t.us, t.cublas_us, t.us, "");
      if (csv)
        csv->append(csv_line(named, t.path, t.us, t.cublas_us, t.rel_error, ",,", ",,",
                             csv_cells(t.path, t.us, t.cublas_us / t.us), ""));
      continue;
    }
    if (p.batch > 1 && p.stride_c != p.m * p.ldc)
      fail(
          "{}: tgemm-bench measures batches whose members of C follow each other (stride_c = "
          "m x ldc = {}), not {}",
          named.name, p.m * p.ldc, p.stride_c);
    // Every member's matrix: (batch - 1) strides, then one matrix.
    const int64_t last = p.batch - 1;
    std::vector<float> a_values, b_values;
    DeviceBuffer a =
        random_matrix(p.types.a, last * p.stride_a + p.a_rows() * p.lda, rng, &a_values);
    DeviceBuffer b =
        random_matrix(p.types.b, last * p.stride_b + p.b_rows() * p.ldb, rng, &b_values);
    DeviceBuffer c(size_t(p.batch * p.m * p.ldc) * size_t(element_bytes(p.types.c)));
    DeviceBuffer ref(size_t(p.batch * p.m * p.ldc) * sizeof(float));
    GemmCall call;
    call.op_a = p.op_a;
    call.op_b = p.op_b;
    call.m = int(p.m);
    call.n = int(p.n);
    call.k = int(p.k);
    call.types = p.types;
    call.a = a.get();
    call.lda = int(p.lda);
    call.b = b.get();
    call.ldb = int(p.ldb);
    call.c = c.get();
    call.ldc = int(p.ldc);
    call.batch = int(p.batch);
    call.stride_a = p.stride_a;
    call.stride_b = p.stride_b;
    call.stride_c = p.stride_c;
    ShapePeers peers;
    if (p.epilogue.fused()) {
      peers.epilogue = std::make_unique<EpiloguePeers>(p, info.arch, rng);
      peers.epilogue->attach(&call);
    }
    if (p.types.fp8()) {  // scales in [1.5, 2), as the tuner's
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      auto [scale_a, scale_b] = Fp8Peers::random_scales(p, [&] { return uniform(rng); });
      peers.fp8 = std::make_unique<Fp8Peers>(p, a_values, b_values, std::move(scale_a),
                                             std::move(scale_b), stream.get());
      peers.fp8->attach(&call);
    }
    // The untuned dispatcher of this shape: --db with the shape forgotten.
    std::optional<DatabaseWithout> without;
    std::unique_ptr<Dispatcher> untuned;
    if (opt.untuned) {
      without.emplace(opt.db_path, "untuned", [&p](TuningDb& db) { db.forget_problem(p.key()); });
      untuned = std::make_unique<Dispatcher>(DispatcherOptions{without->path(), {}, true});
    }
    std::vector<Contender> contenders = {{"main", &dispatcher}};
    if (compare) contenders.push_back({"--compare-db", compare.get()});
    if (untuned) contenders.push_back({"--untuned", untuned.get()});
    if (ours) contenders.push_back({"ours", ours.get()});
    std::vector<Selection> paths;
    std::vector<Launcher> launchers;
    double rel_error = 0;
    std::string wrong;
    for (const Contender& who : contenders) {
      paths.push_back(who.dispatcher->selection(call));
      double error = 0;
      if (auto bad = check(*who.dispatcher, cublas, call, c, ref, p, peers, stream.get(), &error);
          !bad.empty()) {
        wrong = fmt::format("{} kernel ({}): {}", who.label, to_string(paths.back()), bad);
        break;
      }
      if (who.dispatcher == &dispatcher) rel_error = error;
      launchers.push_back(dispatcher_launcher(*who.dispatcher, call, stream.get()));
    }
    if (!wrong.empty()) {
      print_wrong(named, paths[0], wrong);
      ++wrong_results;
      continue;
    }
    Launcher peer = fp8_peer(lt.get(), cublas, call, peers, named.name, stream.get());
    bool unfused_timed = false;  // an epilogue's GEMM-then-pass, timed last beside the fused peer
    if (EpiloguePeers* epilogue = peers.epilogue.get()) {
      Launcher unfused = epilogue->unfused(peer, call, stream.get());
      std::string why;
      if (auto fused = epilogue->fused(lt.get(), call, stream.get(), &why)) {
        peer = *fused;
        launchers.push_back(unfused);
        unfused_timed = true;
      } else {
        spdlog::warn("{}: {}; the peer is cuBLAS's GEMM then the epilogue's pass", named.name, why);
        peer = unfused;
      }
    }
    launchers.insert(launchers.begin() + 1, peer);
    const bool flush = p.min_bytes() <= 4.0 * double(info.l2_bytes);
    InterleavedTimer timer(stream.get(), [&] {
      if (flush) flusher.flush(stream.get());
    });
    std::vector<TimingStats> stats;
    if (auto error = timer.time(launchers, 1.0, opt.timing, &stats); !error.empty())
      fail("{}: timing failed: {}", named.name, error);
    const double us = stats[0].median_us, cublas_us = stats[1].median_us;
    const double ratio = cublas_us / us;
    ratios.push_back(ratio);
    // Each contender's column: its path, its time, and tuned time / untuned time (<= 1 when
    // tuning helps: the kernel picked without tuning this shape is that much slower).
    // Timings are main, cuBLAS, then the contenders after main.
    auto us_of = [&](size_t contender) { return stats[contender + 1].median_us; };
    std::string tail, unfused_csv;
    if (unfused_timed) {
      const double unfused_us = stats.back().median_us;
      tail += fmt::format(" unfused {:>10.1f} {:>6.2f}x", unfused_us, unfused_us / us);
      unfused_csv = fmt::format("{:.3f}", unfused_us);
    }
    std::string compare_csv = ",,", untuned_csv = ",,";
    auto column = [&](size_t contender, double vs, std::string* cells) {
      tail += fmt::format(" {:<8} {:>10.1f} {:>7.2f}x", to_string(paths[contender]),
                          us_of(contender), vs);
      *cells = csv_cells(paths[contender], us_of(contender), vs);
    };
    if (compare) {
      const double vs = us_of(1) / us;  // the compared database is the tuned one
      vs_compare.push_back(vs);
      column(1, vs, &compare_csv);
    }
    // Our own best kernel's ratio: the served one's unless a vendor call serves the shape.
    double ours_us = us;
    std::string ours_csv = csv_cells(paths[0], us, ratio);
    if (ours) {
      const size_t last = contenders.size() - 1;
      ours_us = us_of(last);
      ours_csv = csv_cells(paths[last], ours_us, cublas_us / ours_us);
    }
    if (untuned) {
      const size_t last = contenders.size() - 1 - (ours ? 1 : 0);
      const double vs = us / us_of(last);
      vs_untuned.push_back(vs);
      column(last, vs, &untuned_csv);
    }
    print_row(named, paths[0], us, cublas_us, ours_us, tail);
    ours_ratios.push_back(cublas_us / ours_us);
    if (csv)
      csv->append(csv_line(named, paths[0], us, cublas_us, rel_error, compare_csv, untuned_csv,
                           ours_csv, unfused_csv));
  }
  if (csv) csv->commit();
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0.0 : std::exp(s / double(v.size()));
  };
  fmt::print(
      "geometric mean ratio vs cuBLAS (cuBLAS time / served time): {:.3f} over {} shape(s); our "
      "own best kernels' (ours: the database without its vendor calls): {:.3f}\n",
      geomean(ratios), ratios.size(), geomean(ours_ratios));
  if (compare)
    fmt::print("geometric mean vs --compare-db (its time / this time): {:.3f}\n",
               geomean(vs_compare));
  if (opt.untuned)
    fmt::print("geometric mean tuned / untuned time (each shape left out of --db): {:.3f}\n",
               geomean(vs_untuned));
  if (wrong_results > 0) {
    fmt::print("{} shape(s) gave a wrong result\n", wrong_results);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tgemm

static int run_main(int argc, char** argv) {
  tgemm::BenchOptions opt;
  std::string log_level = "warn";
  CLI::App app{"tgemm-bench: libtgemm's dispatcher against cuBLAS per shape"};
  app.add_option("--shapes", opt.shapes_path, "shape set (YAML)")->required();
  app.add_option("--db", opt.db_path, "tuning database the dispatcher reads")
      ->capture_default_str();
  app.add_option("--compare-db", opt.compare_db, "a second database, timed in the same loop");
  app.add_flag("--untuned", opt.untuned,
               "also time each shape as if untuned: from a copy of --db without it");
  app.add_option("--csv", opt.csv_path, "write the table as CSV");
  app.add_option("--device", opt.device, "CUDA device ordinal")
      ->transform(tgemm::cli::device_ordinal());
  app.add_option("--max-ms", opt.timing.max_ms, "GPU time budget per shape")
      ->capture_default_str()
      ->transform(tgemm::cli::number_from(0.01, 600000, "milliseconds"));
  app.add_option("--log-level", log_level, "libtgemm's log: debug, info, warn, error, off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;
  spdlog::set_pattern("[%H:%M:%S] %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level));
  try {
    return tgemm::run_bench(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-bench: error: %s\n", e.what());
    return 1;
  }
}

int main(int argc, char** argv) {
  return tgemm::cli::checked_exit("tgemm-bench", run_main(argc, argv));
}
