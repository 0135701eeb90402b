#include "tuner/compile/compile_stage.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "src/core/error.h"
#include "src/templates/kernel_build.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {

using Clock = std::chrono::steady_clock;

// One submitted batch. Workers write only outcomes[i].compiled of the index they took; the
// collecting thread reads it once the index is in `finished` (both under the mutex).
struct CompileStage::Batch {
  const GemmTemplate* family = nullptr;
  Problem variant;
  std::vector<CompileOutcome> outcomes;
  size_t missing = 0;            // outcomes queued for NVRTC
  size_t stored = 0;             // of those, stored in the database
  std::vector<size_t> finished;  // compiled, not yet stored
};

namespace {

// Multiply-adds one thread does per main-loop step: the code NVRTC unrolls and ptxas
// schedules. A config the family refuses counts as none (it fails fast).
double unrolled_work(const GemmTemplate& family, const KernelConfig& config,
                     const Problem& variant) {
  try {
    const TileShape t = family.describe(config, variant).tile;
    const int threads = family.block_resources(config).threads;
    return threads > 0 ? double(t.m) * double(t.n) * double(t.k) / threads : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

CompileStage::CompileStage(TuningDb& db, int64_t run_id, ArchLimits limits, int jobs)
    : db_(db), run_id_(run_id), limits_(std::move(limits)), jobs_(jobs < 1 ? 1 : jobs) {}

CompileStage::~CompileStage() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  queued_.notify_all();
  for (auto& t : threads_) t.join();
}

CompileStage::Ticket CompileStage::submit(const GemmTemplate& family,
                                          const std::vector<KernelConfig>& configs,
                                          const Problem& variant) {
  auto batch = std::make_unique<Batch>();
  batch->family = &family;
  batch->variant = variant;
  batch->outcomes.resize(configs.size());
  std::vector<size_t> missing;  // indexes with no usable binary in the database yet
  db_.begin_transaction();      // one transaction for the lookups: no sync per kernel row
  try {
    for (size_t i = 0; i < configs.size(); ++i) {
      CompileOutcome& out = batch->outcomes[i];
      out.config = configs[i];
      out.kernel_id = db_.upsert_kernel(configs[i], family.source().hash);
      auto cached = db_.find_binary(kernel_cache_key(family, configs[i], variant, limits_.arch));
      if (cached && cached->checksum_ok) {
        out.binary_id = cached->id;
        out.status = cached->status;
        out.reason = cached->reason;
        out.compiled = std::move(cached->compiled);
        out.from_cache = true;
        ++stats_.cached;
        if (out.status == BinaryStatus::resource_exceeded) ++stats_.pruned;
        if (out.status == BinaryStatus::compile_failed) ++stats_.failed;
      } else {
        // A cubin that fails its checksum or is no cubin (BinaryRecord::cubin_rejected) is
        // compiled again; storing replaces its row.
        if (cached)
          spdlog::warn("the stored cubin of {} in '{}' is not used: {}; compiling it again",
                       configs[i].canonical_name(), db_.path(), cached->cubin_rejected);
        missing.push_back(i);
      }
    }
    db_.commit();
  } catch (...) {
    db_.rollback();
    throw;
  }
  batch->missing = missing.size();
  // Longest first, so a batch does not end on one slow compile with the other threads idle:
  // compile time grows with the unrolled work of one thread (on the H200, ~0.8 log-log).
  std::vector<double> cost(configs.size());
  for (size_t i : missing) cost[i] = unrolled_work(family, configs[i], variant);
  std::stable_sort(missing.begin(), missing.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::lock_guard lock(mutex_);
  const Ticket ticket = next_ticket_++;
  if (!missing.empty() && active_ == 0) busy_since_ = Clock::now();
  active_ += missing.size();
  for (size_t i : missing) queue_.push_back({batch.get(), i});
  batches_.emplace(ticket, std::move(batch));
  while (!missing.empty() && threads_.size() < size_t(jobs_))
    threads_.emplace_back([this] { work(); });
  queued_.notify_all();
  return ticket;
}

// NVRTC is thread-safe: each thread takes the next queued compile, whichever batch it is of.
void CompileStage::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const Job job = queue_.front();
    queue_.pop_front();
    lock.unlock();
    CompileOutcome& out = job.batch->outcomes[job.index];
    CompiledKernel compiled =
        build_kernel(*job.batch->family, out.config, job.batch->variant, limits_.arch);
    lock.lock();
    out.compiled = std::move(compiled);
    job.batch->finished.push_back(job.index);
    ++finished_count_;
    if (--active_ == 0)
      busy_seconds_ += std::chrono::duration<double>(Clock::now() - busy_since_).count();
    finished_.notify_all();
  }
}

std::vector<CompileOutcome> CompileStage::collect(Ticket ticket, const Progress& progress) {
  std::unique_lock lock(mutex_);
  auto it = batches_.find(ticket);
  if (it == batches_.end())
    fail("CompileStage: batch {} was never submitted or is already collected", ticket);
  Batch& batch = *it->second;
  const auto any_finished = [&] {
    for (const auto& [t, b] : batches_)
      if (!b->finished.empty()) return true;
    return false;
  };
  while (true) {
    store_finished(lock);
    const size_t done = batch.outcomes.size() - batch.missing + batch.stored;
    if (progress) {
      lock.unlock();
      progress(done, batch.outcomes.size());
      lock.lock();
    }
    if (batch.stored == batch.missing) break;
    finished_.wait_for(lock, std::chrono::milliseconds(200), any_finished);
  }
  std::vector<CompileOutcome> outcomes = std::move(batch.outcomes);
  batches_.erase(it);
  return outcomes;
}

std::vector<CompileOutcome> CompileStage::run(const GemmTemplate& family,
                                              const std::vector<KernelConfig>& configs,
                                              const Problem& variant, const Progress& progress) {
  return collect(submit(family, configs, variant), progress);
}

// Stores what finished in every batch since the last call, the database work outside the lock
// so the threads keep compiling.
void CompileStage::store_finished(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<Batch*, std::vector<size_t>>> work;
  for (auto& [t, b] : batches_)
    if (!b->finished.empty()) work.emplace_back(b.get(), std::move(b->finished));
  for (auto& [b, done] : work) b->finished.clear();
  if (work.empty()) return;
  lock.unlock();
  db_.begin_transaction();
  try {
    for (auto& [b, done] : work) store(*b, done);
    db_.commit();
  } catch (...) {
    db_.rollback();
    lock.lock();
    throw;
  }
  lock.lock();
  for (auto& [b, done] : work) b->stored += done.size();
}

// Prunes by resources and stores the cubins of `done` (inside the caller's transaction).
void CompileStage::store(Batch& batch, const std::vector<size_t>& done) {
  for (size_t i : done) {
    CompileOutcome& out = batch.outcomes[i];
    ++stats_.built;
    stats_.compile_wall_seconds += out.compiled.compile_ms / 1e3;
    stats_.compile_cpu_seconds += out.compiled.compile_cpu_ms / 1e3;
    stats_.compile_wait_seconds += out.compiled.compile_wait_ms / 1e3;
    if (!out.compiled.ok) {
      out.status = BinaryStatus::compile_failed;
      out.reason = out.compiled.error;
      ++stats_.failed;
    } else if (auto why = resource_violation(out.compiled,
                                             batch.family->block_resources(out.config), limits_)) {
      out.status = BinaryStatus::resource_exceeded;
      out.reason = *why;
      ++stats_.pruned;
    } else {
      ++stats_.compiled;
    }
    out.binary_id = db_.store_binary(run_id_, out.kernel_id, out.compiled, out.status, out.reason);
  }
}

uint64_t CompileStage::compiles_finished() const {
  std::lock_guard lock(mutex_);
  return finished_count_;
}

CompileStats CompileStage::stats() const {
  std::lock_guard lock(mutex_);
  CompileStats out = stats_;
  out.seconds = busy_seconds_;
  if (active_ > 0) out.seconds += std::chrono::duration<double>(Clock::now() - busy_since_).count();
  return out;
}

}  // namespace tgemm
