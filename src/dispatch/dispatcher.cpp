#include "src/dispatch/dispatcher.h"

#include <cstdlib>
#include <string_view>

#include "src/core/error.h"
#include "src/core/library_log.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublas_handles.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/dispatch/grouped_problem.h"
#include "src/dispatch/library_calls.h"
#include "src/dispatch/problem_recorder.h"
#include "src/dispatch/shared_launch_order.h"
#include "src/dispatch/stream_capture.h"
#include "src/dispatch/tuned_device.h"
#include "src/jit/cubin_check.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/launch/grouped_launches.h"
#include "src/templates/build_versions.h"
#include "src/templates/epilogue_pass.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"

namespace tgemm {

namespace {
// What a problem no tgemm kernel serves is with the cuBLAS fallback off.
NotSupportedError fallback_off(const Problem& problem) {
  return NotSupportedError(
      fmt::format("no tgemm kernel can run {} and the cuBLAS fallback is off", problem.key()));
}

void check_launch(const KernelConfig& config, cudaError_t err) {
  if (err != cudaSuccess)
    throw ExecutionError(
        fmt::format("launching {} failed: {}", config.canonical_name(), cudaGetErrorString(err)));
}

// Our grouped kernels serve a grouped call only where TGEMM_GROUPED_KERNELS=1: they are correct
// (GroupedGemmGpu, which sets it), but tgemm-tune does not tune grouped shapes and the shipped
// defaults run at about a third of cuBLAS's grouped call (configs/shapes/moe_grouped.yaml), so
// by default that call serves every grouped call.
bool grouped_kernels_on() {
  static const bool on = [] {
    const char* env = std::getenv("TGEMM_GROUPED_KERNELS");
    return env && std::string_view(env) == "1";
  }();
  return on;
}

// Whether cuBLAS's grouped call serves `grouped` whatever is tuned: groups of several layouts
// (one launch holds one), or our grouped kernels off.
bool cublas_serves(const GroupedProblem& grouped) {
  return !grouped.one_layout || !grouped_kernels_on();
}

}  // namespace

struct Dispatcher::DeviceState {
  DeviceState(const DeviceInfo& device, const WorkspaceAllocator& allocator)
      : info(device), workspace(allocator), library(device.arch, workspace) {}
  DeviceInfo info;
  std::unique_ptr<KernelSelector> selector;
  std::mutex kernels_mutex;  // guards `kernels`; a first-time compile holds it
  std::map<std::string, std::unique_ptr<GemmKernel>> kernels;  // by template hash, layout, params
  SharedWorkspace workspace;  // scratch of the plans (and cuBLASLt algorithms) that need one
  LibraryCalls library;       // cuBLAS and cuBLASLt
};

size_t Dispatcher::CallKeyHash::operator()(const CallKey& key) const {
  size_t h = std::hash<int>()(key.device);
  auto mix = [&h](uint64_t v) {
    h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(uint64_t(key.m));
  mix(uint64_t(key.n));
  mix(uint64_t(key.k));
  mix(uint64_t(uint32_t(key.lda)) | uint64_t(uint32_t(key.ldb)) << 32);
  mix(uint64_t(key.ldc));
  mix(uint64_t(key.op_a) | uint64_t(key.op_b) << 8 | uint64_t(key.align_a) << 16 |
      uint64_t(key.align_b) << 24 | uint64_t(key.align_c) << 32 | uint64_t(key.beta_zero) << 40);
  mix(uint64_t(key.type_a) | uint64_t(key.type_b) << 8 | uint64_t(key.type_c) << 16 |
      uint64_t(key.compute) << 24 | uint64_t(key.via_3xtf32) << 32 |
      uint64_t(key.batch_form) << 40);
  mix(uint64_t(uint32_t(key.batch)) | uint64_t(key.activation) << 32 |
      uint64_t(key.bias_along) << 40 | uint64_t(key.epilogue_flags) << 48);
  return h;
}

Dispatcher::Dispatcher(DispatcherOptions options)
    : options_(std::move(options)), cublas_fallback_(options_.cublas_fallback) {
  db_path_ = options_.db_path;
  if (db_path_.empty()) {
    const char* env = std::getenv("TGEMM_DB");
    db_path_ = env && *env ? env : "tgemm.db";
  }
  problem_recorder();  // starts $TGEMM_RECORD now, so an unusable file is reported at creation
  const char* write_back = std::getenv("TGEMM_DB_WRITE_BACK");
  const bool writes_back =
      options_.write_back_cubins || (write_back && std::string(write_back) == "1");
  try {
    db_ = open_tuning_records(db_path_, writes_back ? CubinWriteBack::on : CubinWriteBack::off);
  } catch (const std::exception& e) {
    db_problem_ = e.what();
    library_log().warn("tgemm: tuning database unavailable ({}); using default kernels", e.what());
  }
}

Dispatcher::~Dispatcher() = default;

int Dispatcher::current_device() {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw NoDeviceError(
        fmt::format("no CUDA driver/device available ({})", cudaGetErrorString(err)));
  }
  return device;
}

Dispatcher::CallKey Dispatcher::make_key(int device, const Problem& p) const {
  return {device,
          int(p.m),
          int(p.n),
          int(p.k),
          int(p.lda),
          int(p.ldb),
          int(p.ldc),
          uint8_t(p.op_a),
          uint8_t(p.op_b),
          uint8_t(p.align_a),
          uint8_t(p.align_b),
          uint8_t(p.align_c),
          uint8_t(p.beta_zero),
          int(p.batch),
          uint8_t(p.batch_form()),
          uint8_t(p.types.a),
          uint8_t(p.types.b),
          uint8_t(p.types.c),
          uint8_t(p.types.compute),
          uint8_t(p.types == GemmTypes{} &&
                  math_mode_.load(std::memory_order_relaxed) == MathMode::f32_via_3xtf32),
          uint8_t(p.epilogue.activation),
          uint8_t(p.epilogue.bias),
          uint8_t(int(p.epilogue.bias_f32) | int(p.epilogue.aux) << 1 |
                  int(p.epilogue.separate_d) << 2 | int(p.epilogue.rowwise_scales) << 3)};
}

// Tuned times that no longer hold (another template source, NVRTC or driver) are not served:
// a shape keeps its fastest current trial, else takes the untuned path until tgemm-tune
// measures it again.
void Dispatcher::skip_stale(const DeviceInfo& info, std::vector<BestEntry>* tuned,
                            std::vector<TrialRecord>* measured) const {
  const StaleDropped dropped = drop_stale(this_build(info.driver_version), tuned, measured);
  if (dropped.entries + dropped.replaced + dropped.trials > 0)
    library_log().warn(
        "tgemm: {} tuned shape(s) and {} trial(s) in {} are stale and not served (e.g. {}); "
        "{} more shape(s) are served their fastest current trial instead of a stale best; "
        "run tgemm-tune again to re-measure them",
        dropped.entries, dropped.trials, db_path_, dropped.example, dropped.replaced);
}

// The tuning of the first candidate GPU that has best entries (tuned_device.h): this GPU's,
// else another's of its arch, said once in the log.
void Dispatcher::read_tuning(const DeviceInfo& info, std::vector<BestEntry>* tuned,
                             std::vector<TrialRecord>* measured,
                             std::vector<DeviceCeiling>* ceilings) const {
  for (const TunedDevice& source : tuned_device_candidates(info, db_->devices())) {
    const DeviceInfo& d = source.device;
    *tuned = db_->best_entries(d.name, d.arch);
    if (tuned->empty()) continue;
    *measured = db_->trials(d.name, d.arch);
    skip_stale(info, tuned, measured);
    *ceilings = db_->ceilings(d.name, d.arch);
    if (source.match != TunedDeviceMatch::same_gpu)
      library_log().info(
          "tgemm: {} holds no tuning of {} ({}, {} SMs); serving that of {} ({} SMs), {}", db_path_,
          info.name, info.arch, info.sm_count, d.name, d.sm_count, describe(source.match));
    return;
  }
}

Dispatcher::DeviceState& Dispatcher::device_state(int device) {
  std::lock_guard lock(devices_mutex_);
  auto& slot = devices_[device];
  if (!slot) {
    auto state = std::make_unique<DeviceState>(query_device(device), workspace_allocator_);
    std::vector<BestEntry> tuned;
    std::vector<TrialRecord> measured;
    std::vector<DeviceCeiling> ceilings;
    if (db_) {
      try {
        read_tuning(state->info, &tuned, &measured, &ceilings);
      } catch (const std::exception& e) {
        library_log().warn("tgemm: cannot read tuned kernels from {}: {}", db_path_, e.what());
      }
    }
    library_log().debug("tgemm: {} tuned problem(s), {} trial(s) for {} ({})", tuned.size(),
                        measured.size(), state->info.name, state->info.arch);
    state->selector = std::make_unique<KernelSelector>(
        std::move(tuned), options_.defaults ? *options_.defaults : shipped_default_kernels(),
        state->info.arch, state->info.sm_count, measured, std::move(ceilings));
    slot = std::move(state);
  }
  return *slot;
}

// The cubin comes from the database when it holds one for this kernel, layout, types, arch
// and NVRTC version; otherwise NVRTC compiles it once, and, with write-back on and a writable
// file, it is written back so the next process finds it.
const GemmKernel* Dispatcher::load_kernel(DeviceState& state, const KernelChoice& choice,
                                          const Problem& problem) {
  const GemmTemplate& family = template_named(choice.config.template_name);
  const std::string template_hash =
      choice.template_hash.empty() ? family.source().hash : choice.template_hash;
  const std::string arch = state.info.arch;
  const Problem variant = build_variant(problem);
  const std::string key =
      template_hash + "|" + variant.functional_key() + "|" + choice.config.params_text();
  std::lock_guard lock(state.kernels_mutex);
  if (auto it = state.kernels.find(key); it != state.kernels.end()) return it->second.get();

  std::optional<BinaryRecord> stored;
  if (db_) {
    try {
      stored =
          db_->find_binary(choice.config, template_hash, variant, arch, NvrtcCompiler::version());
    } catch (const std::exception& e) {
      library_log().warn("tgemm: reading a cubin from {} failed: {}", db_path_, e.what());
    }
  }
  std::vector<char> cubin;
  // A cubin that fails its checksum or is no cubin of this arch with every entry the family
  // launches (damaged or planted) is never loaded: compile instead.
  std::string rejected = stored ? stored->cubin_rejected : "";
  if (stored && rejected.empty() && !stored->compiled.cubin.empty())
    rejected =
        cubin_problem(stored->compiled.cubin, arch, family.entries(choice.config, problem.types));
  if (!rejected.empty())
    library_log().warn(
        "tgemm: the stored cubin of {} in {} is not loaded: {}; compiling it instead",
        choice.config.canonical_name(), db_path_, rejected);
  if (stored && rejected.empty() && stored->status == BinaryStatus::ok &&
      !stored->compiled.cubin.empty()) {
    cubin = std::move(stored->compiled.cubin);
  } else {
    CompiledKernel compiled = build_kernel(family, choice.config, variant, arch);
    if (!compiled.ok) fail("{}", compiled.error);
    library_log().info("tgemm: compiled {} for {} ({:.0f} ms)", choice.config.canonical_name(),
                       arch, compiled.compile_ms);
    // Best effort, and only into a database that opened with write-back on.
    if (db_) {
      try {
        db_->write_back(choice.config, family.source().hash, compiled);
      } catch (const std::exception& e) {
        library_log().debug("tgemm: cubin not written back to {}: {}", db_path_, e.what());
      }
    }
    cubin = std::move(compiled.cubin);
  }
  auto kernel = std::make_unique<GemmKernel>(choice.config, cubin,
                                             family.entries(choice.config, problem.types),
                                             main_smem_opt_in(family, choice.config, problem));
  const GemmKernel* raw = kernel.get();
  state.kernels.emplace(key, std::move(kernel));
  return raw;
}

Dispatcher::Resolved Dispatcher::load_choice(DeviceState& state, const KernelChoice& choice,
                                             const Problem& problem) {
  Resolved out;
  out.path = choice.path;
  out.types = problem.types;
  if (choice.path == Selection::cublas) return out;
  if (is_vendor_call(choice.config)) {
    try {
      out.vendor = state.library.vendor_call(choice, problem);
    } catch (const std::exception& e) {
      // The library the database named cannot take it (another cuBLASLt): its default call.
      library_log().warn("tgemm: {} unavailable for {}: {}; serving cuBLAS",
                         describe_vendor_call(choice.config), problem.key(), e.what());
      out = Resolved{};
    }
    return out;
  }
  try {
    out.kernel = load_kernel(state, choice, problem);
    out.plan = template_named(choice.config.template_name)
                   .plan_launch(choice.config, problem, state.info.sm_count);
    out.kernel->prepare(out.plan);  // a cached plan's launches need nothing else first
  } catch (const std::exception& e) {
    // A kernel that cannot be built or loaded must not fail the call when cuBLAS can serve.
    library_log().warn("tgemm: {} unavailable for {}: {}", choice.config.canonical_name(),
                       problem.key(), e.what());
    out = Resolved{};
  }
  return out;
}

Dispatcher::Resolved Dispatcher::resolve(const CallKey& key, const Problem& problem) {
  DeviceState& state = device_state(key.device);
  // Opted in: the f32x3 kernel where it was measured faster; otherwise (or when it cannot be
  // loaded) the f32 path, as without the mode.
  Problem accurate;
  if (key.via_3xtf32) {
    if (auto fast = state.selector->faster_3xtf32(problem, &accurate)) {
      library_log().debug("tgemm: {} on device {}: 3xTF32 {} (faster than FFMA on {})",
                          problem.key(), key.device, fast->config.canonical_name(),
                          fast->tuned_key);
      Resolved out = load_choice(state, *fast, accurate);
      if (out.kernel) return out;
    }
  }
  KernelChoice choice = state.selector->choose(problem);
  library_log().debug("tgemm: {} on device {}: {} {}{}", problem.key(), key.device,
                      to_string(choice.path), choice.config.canonical_name(),
                      choice.tuned_key.empty() ? "" : " (tuned on " + choice.tuned_key + ")");
  return load_choice(state, choice, problem);
}

Dispatcher::Resolved Dispatcher::lookup(int device, const Problem& problem,
                                        std::optional<cudaStream_t> capture_check) {
  const CallKey key = make_key(device, problem);
  {
    std::shared_lock lock(cache_mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  if (capture_check && stream_capturing(*capture_check))
    throw NotPreparedError(fmt::format(
        "{} (lda {}, ldb {}, ldc {}) on device {} is not prepared, and a call on a capturing "
        "stream cannot choose, compile or load its kernel: call tgemmPrepare with this "
        "problem (its types, sizes, leading dimensions and pointer alignment) before the "
        "capture",
        problem.key(), problem.lda, problem.ldb, problem.ldc, device));
  // Resolving may compile (hundreds of ms): done outside the cache lock so that other
  // threads' cached calls never wait on it. Two threads racing on a new key both resolve it
  // (the kernel itself is loaded once) and the first insert wins.
  Resolved resolved = resolve(key, problem);
  std::unique_lock lock(cache_mutex_);
  return cache_.emplace(key, resolved).first->second;
}

Selection Dispatcher::selection(const GemmCall& call) {
  bool empty = false;
  Problem problem = call_problem(call, &empty);
  if (empty) return Selection::exact;  // nothing to compute; no kernel involved
  return lookup(current_device(), problem).path;
}

ServedBy Dispatcher::served_by(const GroupedGemmCall& call) {
  const GroupedProblem grouped = grouped_problem(call);
  if (grouped.empty) return {Selection::exact, std::nullopt, call.types};  // nothing is launched
  if (cublas_serves(grouped)) return {Selection::cublas, std::nullopt, call.types};
  const Resolved r = lookup(current_device(), grouped.problem);
  ServedBy out{r.path, std::nullopt, call.types};
  if (r.kernel) out.kernel = r.kernel->config();
  return out;
}

ServedBy Dispatcher::served_by(const GemmCall& call) {
  bool empty = false;
  Problem problem = call_problem(call, &empty);
  if (empty) return {Selection::exact, std::nullopt, call.types};  // nothing is launched
  const Resolved r = lookup(current_device(), problem);
  ServedBy out{r.path, std::nullopt, r.kernel ? r.types : call.types};
  if (r.kernel) out.kernel = r.kernel->config();
  if (r.vendor) out.kernel = r.vendor->config;
  return out;
}

void Dispatcher::cublas_grouped(int device, const GroupedGemmCall& call, cudaStream_t stream) {
  if (!cublas_fallback_)
    throw NotSupportedError(fmt::format(
        "no tgemm kernel serves this grouped call of {} groups ({}) and the cuBLAS fallback is off",
        call.groups.size(), call.types.name()));
  device_state(device).library.grouped(call, stream);
}

// Grouped kernels are plans of one plain launch (GemmTemplate::unsupported_reason): no workspace
// and no module state, so launches need no turn in the device's shared order.
void Dispatcher::gemm_grouped(const GroupedGemmCall& call, cudaStream_t stream) {
  const GroupedProblem grouped = grouped_problem(call);
  if (grouped.empty) return;
  const int device = current_device();
  if (cublas_serves(grouped)) {
    library_log().debug("tgemm: a grouped call of {} groups runs cuBLAS ({})", call.groups.size(),
                        grouped.one_layout ? "grouped kernels are off" : "several layouts");
    cublas_grouped(device, call, stream);
    return;
  }
  const Resolved r = lookup(device, grouped.problem, stream);
  if (!r.kernel) {  // cuBLAS, or a vendor best (grouped problems are never tuned)
    cublas_grouped(device, call, stream);
    return;
  }
  GroupedLaunches launches(call, r.plan.group_tile_m, r.plan.group_tile_n);
  GroupedGemmParams params;
  unsigned tiles = 0;
  while (launches.next(&params, &tiles))
    check_launch(r.kernel->config(), r.kernel->launch_grouped(r.plan, params, tiles, stream));
}

void Dispatcher::gemm(const GemmCall& call, cudaStream_t stream) {
  bool empty = false;
  const Problem problem = call_problem(call, &empty);
  if (empty) return;
  const int device = current_device();
  const Resolved r = lookup(device, problem, stream);
  if (r.path != Selection::exact) problem_recorder().note(problem);
  if (r.vendor) {
    device_state(device).library.run_vendor_call(*r.vendor, problem, call, stream);
    return;
  }
  if (r.path == Selection::cublas) {
    if (!cublas_fallback_) throw fallback_off(problem);
    device_state(device).library.gemm(problem, call, stream);
    return;
  }
  const GemmParams params = make_params(problem, call.a, call.b, call.c, call.alpha, call.beta);
  const EpilogueParams epilogue = make_epilogue_params(call);
  if (r.plan.workspace_bytes == 0 && !r.plan.module_state) {
    check_launch(r.kernel->config(), r.kernel->launch(r.plan, params, epilogue, nullptr, stream));
    return;
  }
  // The workspace and a module's counters are the device's, not the call's: calls that use them
  // take turns across streams, and the workspace is reserved in turn (growing it frees the old).
  DeviceState& state = device_state(device);
  const bool captured = r.plan.workspace_bytes > 0 && stream_capturing(stream);
  cudaError_t err = cudaSuccess;
  const Reservation reserved = state.workspace.run(
      stream, r.plan.workspace_bytes, captured,
      [&](void* workspace) {
        return r.kernel->launch(r.plan, params, epilogue, workspace, stream);
      },
      &err);
  if (!reserved.ok()) {
    const std::string what = r.kernel->config().canonical_name() + " for " + problem.key();
    state.workspace.check(reserved, r.plan.workspace_bytes, captured, what);
    const std::string why = fmt::format("{} needs {} bytes of workspace: {}", what,
                                        r.plan.workspace_bytes, cudaGetErrorString(reserved.error));
    if (!cublas_fallback_) throw ExecutionError(why + " (and the cuBLAS fallback is off)");
    library_log().warn("tgemm: {}; this call runs cuBLAS", why);
    state.library.gemm(problem, call, stream);
    return;
  }
  check_launch(r.kernel->config(), err);
}

void Dispatcher::make_ready(DeviceState& state, const Resolved& r, const Problem& problem,
                            int64_t ldd, int64_t ldaux) {
  if (r.vendor && r.vendor->lt) {
    state.workspace.hold(r.vendor->algo.workspace_bytes,
                         describe_vendor_call(r.vendor->config) + " for " + problem.key());
  } else if (r.vendor || r.path == Selection::cublas) {
    if (!r.vendor && !cublas_fallback_) throw fallback_off(problem);
    state.library.prepare(problem, ldd, ldaux);
  } else {
    state.workspace.hold(r.plan.workspace_bytes,
                         r.kernel->config().canonical_name() + " for " + problem.key());
  }
}

void Dispatcher::prepare(const std::vector<PrepareRequest>& requests) {
  struct Ready {
    Problem problem;
    int64_t ldd, ldaux;
  };
  std::vector<Ready> problems;
  for (size_t i = 0; i < requests.size(); ++i) {
    bool empty = false;
    try {
      Problem p = prepared_problem(requests[i], &empty);
      const GemmCall& call = requests[i].call;
      if (!empty) problems.push_back({p, p.epilogue.separate_d ? call.ldd : call.ldc, call.ldaux});
    } catch (const InvalidValueError& e) {
      throw InvalidValueError(fmt::format("problems[{}]: {}", i, e.what()));
    } catch (const TypeNotSupportedError& e) {
      throw TypeNotSupportedError(fmt::format("problems[{}]: {}", i, e.what()));
    }
  }
  if (problems.empty()) return;
  const int device = current_device();
  DeviceState& state = device_state(device);
  // A call's beta is not part of its request: both cases are prepared.
  for (const Ready& ready : problems)
    for (const bool beta_zero : {true, false}) {
      Problem p = ready.problem;
      p.beta_zero = beta_zero;
      make_ready(state, lookup(device, p), p, ready.ldd, ready.ldaux);
    }
}

void Dispatcher::set_workspace(void* ptr, size_t bytes) {
  if (!ptr && bytes > 0) invalid("workspace is a null pointer but bytes is {}", bytes);
  if (ptr && bytes == 0) invalid("workspace is not null but bytes is 0");
  if (reinterpret_cast<uintptr_t>(ptr) % 256 != 0)
    invalid("workspace {} is not 256-byte aligned", ptr);
  const int device = current_device();
  if (ptr) {
    cudaPointerAttributes attributes{};
    const cudaError_t err = cudaPointerGetAttributes(&attributes, ptr);
    if (err != cudaSuccess) cudaGetLastError();
    if (err != cudaSuccess || attributes.type != cudaMemoryTypeDevice ||
        attributes.device != device)
      invalid("workspace {} is not device memory of device {} (the current one)", ptr, device);
  }
  DeviceState& state = device_state(device);
  state.workspace.lend(ptr, bytes);
}

void Dispatcher::set_workspace_allocator(WorkspaceAllocator allocator) {
  std::lock_guard lock(devices_mutex_);
  workspace_allocator_ = std::move(allocator);
  for (auto& [device, state] : devices_) state->workspace.use_allocator(workspace_allocator_);
}

size_t Dispatcher::workspace_bytes() { return device_state(current_device()).workspace.bytes(); }

size_t Dispatcher::needed_workspace_bytes() {
  return device_state(current_device()).workspace.needed();
}

}  // namespace tgemm
