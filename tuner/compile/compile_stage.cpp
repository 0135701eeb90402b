#include "tuner/compile/compile_stage.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "src/templates/kernel_build.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {

CompileStage::CompileStage(TuningDb& db, int64_t run_id, ArchLimits limits, int jobs)
    : db_(db), run_id_(run_id), limits_(std::move(limits)), jobs_(jobs < 1 ? 1 : jobs) {}

std::vector<CompileOutcome> CompileStage::run(const GemmTemplate& family,
                                              const std::vector<KernelConfig>& configs,
                                              const Problem& variant, const Progress& progress) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<CompileOutcome> outcomes(configs.size());
  std::vector<size_t> missing;  // indexes with no usable binary in the database yet
  for (size_t i = 0; i < configs.size(); ++i) {
    CompileOutcome& out = outcomes[i];
    out.config = configs[i];
    out.kernel_id = db_.upsert_kernel(configs[i], family.source().hash);
    auto key = kernel_cache_key(family, configs[i], variant, limits_.arch);
    auto cached = db_.find_binary(key);
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
      // A cubin that fails its checksum is compiled again; storing replaces its row.
      if (cached)
        spdlog::warn("the stored cubin of {} in '{}' fails its checksum; compiling it again",
                     configs[i].canonical_name(), db_.path());
      missing.push_back(i);
    }
  }

  // NVRTC is thread-safe; each thread takes the next missing index until none are left and
  // hands it to this thread, which stores it at once: a kill loses only what is in flight.
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable ready;
  std::vector<size_t> finished;  // compiled, not yet stored
  auto work = [&] {
    for (size_t j = next++; j < missing.size(); j = next++) {
      CompileOutcome& out = outcomes[missing[j]];
      out.compiled = build_kernel(family, out.config, variant, limits_.arch);
      {
        std::lock_guard lock(mutex);
        finished.push_back(missing[j]);
      }
      ready.notify_one();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs_ && size_t(t) < missing.size(); ++t) threads.emplace_back(work);
  try {
    size_t stored = 0;
    while (stored < missing.size()) {
      std::vector<size_t> batch;
      {
        std::unique_lock lock(mutex);
        ready.wait_for(lock, std::chrono::milliseconds(200), [&] { return !finished.empty(); });
        batch.swap(finished);
      }
      store(family, batch, outcomes);
      stored += batch.size();
      // This run's count, never over its total (stats_ add up over every run).
      if (progress) progress(configs.size() - missing.size() + stored, configs.size());
    }
  } catch (...) {
    next = missing.size();  // the threads stop after the compile in hand
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  if (progress) progress(configs.size(), configs.size());
  stats_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcomes;
}

// Prunes by resources and stores what the threads compiled since the last batch, in one
// transaction (a few cubins at most: whatever finished within 200 ms).
void CompileStage::store(const GemmTemplate& family, const std::vector<size_t>& batch,
                         std::vector<CompileOutcome>& outcomes) {
  if (batch.empty()) return;
  db_.begin_transaction();
  try {
    for (size_t i : batch) {
      CompileOutcome& out = outcomes[i];
      if (!out.compiled.ok) {
        out.status = BinaryStatus::compile_failed;
        out.reason = out.compiled.error;
        ++stats_.failed;
      } else if (auto why = resource_violation(out.compiled, family.block_resources(out.config),
                                               limits_)) {
        out.status = BinaryStatus::resource_exceeded;
        out.reason = *why;
        ++stats_.pruned;
      } else {
        ++stats_.compiled;
      }
      out.binary_id =
          db_.store_binary(run_id_, out.kernel_id, out.compiled, out.status, out.reason);
    }
    db_.commit();
  } catch (...) {
    db_.rollback();
    throw;
  }
}

}  // namespace tgemm
