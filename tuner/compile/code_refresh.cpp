#include "tuner/compile/code_refresh.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "src/jit/code_hash.h"
#include "src/templates/kernel_build.h"

namespace tgemm {

bool text_changed(const TrialBinary& stored, const GemmTemplate* family) {
  return family && family->source().hash != stored.template_hash;
}

CodeCheck check_code(const TrialBinary& stored, const GemmTemplate& family) {
  CodeCheck out;
  const CompiledKernel& old = stored.binary.compiled;
  // The stored cubin is what was measured (its checksum verified); the hash recorded at compile
  // time stands in where the cubin was pruned.
  const std::string old_hash = !old.cubin.empty() ? cubin_code_hash(old.cubin) : old.code_hash;
  if (old_hash.empty()) {
    out.why = stored.binary.cubin_rejected.empty()
                  ? "no code hash or cubin is stored to compare with"
                  : "its stored cubin is not used: " + stored.binary.cubin_rejected;
    return out;
  }
  out.current = build_kernel(family, stored.config, built_variant(old), old.arch);
  if (!out.current.ok) {
    out.why = out.current.error.substr(0, out.current.error.find('\n'));
    return out;
  }
  out.verdict = out.current.code_hash == old_hash ? CodeVerdict::same : CodeVerdict::changed;
  return out;
}

namespace {

// check_code of each (binary, family) pair, `jobs` at once: NVRTC compiles are independent.
// Only a build of the same code is stored, so the others' cubins are not kept.
std::vector<CodeCheck> check_all(
    const std::vector<std::pair<const TrialBinary*, const GemmTemplate*>>& work, int jobs) {
  std::vector<CodeCheck> out(work.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < work.size();) {
      out[i] = check_code(*work[i].first, *work[i].second);
      if (out[i].verdict != CodeVerdict::same) out[i].current.cubin = {};
    }
  };
  std::vector<std::thread> threads;
  const size_t count =
      std::clamp<size_t>(size_t(std::max(jobs, 1)), 1, std::max<size_t>(work.size(), 1));
  for (size_t t = 1; t < count; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return out;
}

}  // namespace

RefreshCounts refresh_by_code(TuningDb& db, const RefreshOptions& options) {
  const std::vector<TrialBinary> binaries = db.trial_binaries();
  std::vector<std::pair<const TrialBinary*, const GemmTemplate*>> work;
  for (const TrialBinary& b : binaries) {
    const GemmTemplate* family = options.family(b.config.template_name);
    if (text_changed(b, family) && (options.arch.empty() || b.binary.compiled.arch == options.arch))
      work.emplace_back(&b, family);
  }
  const std::vector<CodeCheck> checks = check_all(work, options.jobs);
  RefreshCounts counts;
  db.begin_transaction();
  try {
    for (size_t i = 0; i < work.size(); ++i) {
      const TrialBinary& stored = *work[i].first;
      const CodeCheck& check = checks[i];
      if (check.verdict == CodeVerdict::changed) {
        counts.changed += stored.trials;
      } else if (check.verdict == CodeVerdict::not_built) {
        counts.not_built += stored.trials;
        if (counts.example_not_built.empty())
          counts.example_not_built = fmt::format("{} ({}): {}", stored.config.canonical_name(),
                                                 stored.binary.compiled.arch, check.why);
      } else {
        const int64_t moved = db.rekey_trials(options.run_id, stored, work[i].second->source().hash,
                                              check.current, options.current);
        counts.rekeyed += moved;
        counts.superseded += stored.trials - moved;
      }
    }
    db.commit();
  } catch (...) {
    db.rollback();
    throw;
  }
  return counts;
}

}  // namespace tgemm
