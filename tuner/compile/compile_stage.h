// CompileStage: turns the configs a strategy proposed into cubins of one family for one
// problem variant (layout and types) and arch: NVRTC in a persistent thread pool that batches
// queue into (so the next batch compiles while one is measured), cubins cached in the
// database (a cached cubin is used only when it matches its checksum), static pruning by
// resources.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"
#include "src/jit/compiled_kernel.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

struct CompileOutcome {
  KernelConfig config;
  int64_t kernel_id = 0;
  int64_t binary_id = 0;
  BinaryStatus status = BinaryStatus::ok;
  std::string reason;  // why pruned or failed
  CompiledKernel compiled;
  bool from_cache = false;
};

// compiled: fresh cubins that fit; cached: outcomes found in the database (any status);
// pruned / failed: resource_exceeded / compile_failed outcomes, fresh or cached.
// built: fresh NVRTC compiles (whatever their outcome); seconds: wall time during which at
// least one compile was queued or running, so built / seconds is the pool's throughput.
// compile_wall / cpu / wait_seconds: the built compiles' own wall, compiling-thread CPU and
// waiting-for-a-core times, summed. CPU per compile rising with the jobs means the cores slow
// down (shared caches, SMT siblings); wall above CPU + wait means compiles block (a lock).
struct CompileStats {
  uint64_t compiled = 0, cached = 0, pruned = 0, failed = 0, built = 0;
  double seconds = 0;
  double compile_wall_seconds = 0, compile_cpu_seconds = 0, compile_wait_seconds = 0;
  double configs_per_second() const { return seconds > 0 ? double(built) / seconds : 0; }
  double wall_seconds_per_compile() const { return per_compile(compile_wall_seconds); }
  double cpu_seconds_per_compile() const { return per_compile(compile_cpu_seconds); }
  double wait_seconds_per_compile() const { return per_compile(compile_wait_seconds); }

 private:
  double per_compile(double total) const { return built > 0 ? total / double(built) : 0; }
};

class CompileStage {
 public:
  // Called about five times a second while a batch is collected: (done, total).
  using Progress = std::function<void(size_t done, size_t total)>;
  using Ticket = uint64_t;

  CompileStage(TuningDb& db, int64_t run_id, ArchLimits limits, int jobs);
  // Stops the pool after the compiles in hand; what was not collected is not stored.
  ~CompileStage();
  CompileStage(const CompileStage&) = delete;
  CompileStage& operator=(const CompileStage&) = delete;

  // Looks `configs` up in the database and queues the missing ones behind every batch
  // submitted before; returns at once. `family` must outlive the batch's collect().
  Ticket submit(const GemmTemplate& family, const std::vector<KernelConfig>& configs,
                const Problem& variant);
  // Waits for a submitted batch: one outcome per config, in order. Only the calling thread
  // touches the database; cubins of every batch are stored as they are found finished (one
  // transaction per wake-up), so a killed run keeps what it collected.
  std::vector<CompileOutcome> collect(Ticket ticket, const Progress& progress);
  // submit then collect.
  std::vector<CompileOutcome> run(const GemmTemplate& family,
                                  const std::vector<KernelConfig>& configs, const Problem& variant,
                                  const Progress& progress);
  // Fresh compiles finished so far, stored or not (tests watch the pool work ahead).
  uint64_t compiles_finished() const;
  CompileStats stats() const;

 private:
  struct Batch;
  struct Job {
    Batch* batch;
    size_t index;  // into batch->outcomes
  };
  void work();
  void store_finished(std::unique_lock<std::mutex>& lock);
  void store(Batch& batch, const std::vector<size_t>& done);

  TuningDb& db_;
  int64_t run_id_;
  ArchLimits limits_;
  int jobs_;
  CompileStats stats_;  // counts, kept by the calling thread

  mutable std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<Job> queue_;
  std::map<Ticket, std::unique_ptr<Batch>> batches_;  // submitted, not yet collected
  Ticket next_ticket_ = 1;
  size_t active_ = 0;  // jobs queued or running
  uint64_t finished_count_ = 0;
  std::chrono::steady_clock::time_point busy_since_;  // when active_ last left 0
  double busy_seconds_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // started by the first submit that queues a compile
};

}  // namespace tgemm
