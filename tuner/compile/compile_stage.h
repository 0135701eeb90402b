// CompileStage: turns the configs a strategy proposed into cubins of one family for one
// problem variant (layout and types) and arch: NVRTC in a thread pool, cubins cached in the
// database as they are built (a cached cubin is used only when it matches its checksum),
// static pruning by resources.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
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
struct CompileStats {
  uint64_t compiled = 0, cached = 0, pruned = 0, failed = 0;
  double seconds = 0;
};

class CompileStage {
 public:
  // Called about five times a second while compiling: (done, total).
  using Progress = std::function<void(size_t done, size_t total)>;

  CompileStage(TuningDb& db, int64_t run_id, ArchLimits limits, int jobs);

  // One outcome per config of `family`, in order, built for `variant` (see build_variant).
  // Only the calling thread touches the database; each cubin is stored as soon as it is
  // built, so a killed run keeps what it compiled.
  std::vector<CompileOutcome> run(const GemmTemplate& family,
                                  const std::vector<KernelConfig>& configs, const Problem& variant,
                                  const Progress& progress);
  const CompileStats& stats() const { return stats_; }

 private:
  void store(const GemmTemplate& family, const std::vector<size_t>& batch,
             std::vector<CompileOutcome>& outcomes);

  TuningDb& db_;
  int64_t run_id_;
  ArchLimits limits_;
  int jobs_;
  CompileStats stats_;
};

}  // namespace tgemm
