#include "tuner/compile/compile_stage.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "src/templates/kernel_build.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {

CompileStage::CompileStage(TuningDb& db, int64_t run_id, ArchLimits limits, int jobs)
    : db_(db),
      run_id_(run_id),
      limits_(std::move(limits)),
      jobs_(jobs < 1 ? 1 : jobs) {}

std::vector<CompileOutcome> CompileStage::run(const GemmTemplate& family,
                                              const std::vector<KernelConfig>& configs,
                                              const Problem& variant, const Progress& progress) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<CompileOutcome> outcomes(configs.size());
  std::vector<size_t> missing;  // indexes with no binary in the database yet
  for (size_t i = 0; i < configs.size(); ++i) {
    CompileOutcome& out = outcomes[i];
    out.config = configs[i];
    out.kernel_id = db_.upsert_kernel(configs[i], family.source().hash);
    auto key = kernel_cache_key(family, configs[i], variant, limits_.arch);
    if (auto cached = db_.find_binary(key)) {
      out.binary_id = cached->id;
      out.status = cached->status;
      out.reason = cached->reason;
      out.compiled = std::move(cached->compiled);
      out.from_cache = true;
      ++stats_.cached;
      if (out.status == BinaryStatus::resource_exceeded) ++stats_.pruned;
      if (out.status == BinaryStatus::compile_failed) ++stats_.failed;
    } else {
      missing.push_back(i);
    }
  }

  // NVRTC is thread-safe; each thread takes the next missing index until none are left.
  std::atomic<size_t> next{0}, done{0};
  auto work = [&] {
    for (size_t j = next++; j < missing.size(); j = next++) {
      CompileOutcome& out = outcomes[missing[j]];
      out.compiled = build_kernel(family, out.config, variant, limits_.arch);
      ++done;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs_ && size_t(t) < missing.size(); ++t) threads.emplace_back(work);
  while (done < missing.size()) {
    if (progress) progress(done + stats_.cached, configs.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (auto& t : threads) t.join();
  if (progress) progress(configs.size(), configs.size());

  db_.begin_transaction();
  try {
    for (size_t i : missing) {
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
  stats_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcomes;
}

}  // namespace tgemm
