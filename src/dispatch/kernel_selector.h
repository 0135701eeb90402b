// KernelSelector: the dispatcher's choice of kernel for a problem on one GPU, from the
// tuned entries (exact key, then the nearest tuned shape that can run it) and the shipped
// per-arch defaults. Pure logic: no CUDA, no SQL, so it is tested on the CPU.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/tuning_records.h"
#include "src/dispatch/time_estimates.h"
#include "src/model/heuristic_parameters.h"
#include "tgemm/tgemm.h"

namespace tgemm {

struct DefaultKernel {
  std::string arch;  // "sm_90" or "*"
  GemmTypes types;
  KernelConfig config;
};

// Parses configs/default_kernels.txt; throws Error naming the line for a malformed one.
std::vector<DefaultKernel> parse_default_kernels(const std::string& text);
// The table embedded in the library.
const std::vector<DefaultKernel>& shipped_default_kernels();

// What a time measured on the tuned shape `there` pays when carried to `here`: 1 plus
// far_penalty per unit of their distance in log M, N, K (alignments that differ count as
// farther), so a near neighbour's config wins unless a far one's is predicted clearly faster.
double carried_distance_factor(const Problem& there, const Problem& here,
                               const SelectorParameters& params = {});

struct KernelChoice {
  Selection path = Selection::cublas;
  KernelConfig config;        // empty for cublas
  std::string template_hash;  // of the tuned kernel; empty for defaults
  std::string tuned_key;      // the tuned problem it came from (exact / nearest)
  std::string rule;           // which rule chose, in words (tgemm-db explain prints it)
};

class KernelSelector {
 public:
  // `tuned`: best entries of this GPU (the dispatcher filters by device name and arch).
  // `sm_count`: the GPU's multiprocessors, for wave counts and sizing defaults (0: unknown).
  // `measured`: every trial recorded on this GPU; without them each best is its problem's
  // only measurement. `ceilings`: the GPU's measured roofs for the performance model (empty:
  // the arch's datasheet-like figures). `params`: the selector's and its model's factors.
  KernelSelector(std::vector<BestEntry> tuned, std::vector<DefaultKernel> defaults,
                 std::string arch, int sm_count = 0, const std::vector<TrialRecord>& measured = {},
                 std::vector<DeviceCeiling> ceilings = {}, SelectorParameters params = {});

  // Exact key (unless the untuned choice below is of a family the problem never tried and is
  // predicted faster than its measured best: choose_exact) -> the fastest predicted here of
  // the configs measured on the nearest tuned shapes (log M, N, K; other alignments count as
  // farther) and of the defaults that can run it (see choose_untuned) -> a default sized for
  // the problem -> cublas.
  KernelChoice choose(const Problem& problem) const;

  // The opt-in FP32-accurate tensor-core path (MathMode::f32_via_3xtf32) for a plain f32
  // problem: the tuned f32x3 kernel of the same key with types f32x3, when its median time
  // beat the tuned f32 kernel's of that key on this GPU. nullopt when either is missing, the
  // f32x3 one was not faster or cannot run, or the problem is not plain f32: then the f32
  // path, exactly as without the mode. `f32x3_problem` gets the problem the kernel computes.
  std::optional<KernelChoice> faster_3xtf32(const Problem& problem,
                                            Problem* f32x3_problem = nullptr) const;

 private:
  using Measurement = TimeEstimates::Measurement;
  struct Prediction {
    std::optional<KernelConfig> config;
    std::string template_hash, from;  // empty for a default never measured nearby
    double us = std::numeric_limits<double>::infinity();
  };
  // The tuned problems of the same types and layout nearest the problem (never the problem
  // itself), nearest first.
  std::vector<const BestEntry*> neighbours(const Problem& problem) const;
  Prediction choose_untuned(const Problem& problem) const;
  // The problem's exact entry `e` against its untuned prediction.
  KernelChoice choose_exact(const BestEntry& e, const Problem& problem) const;
  KernelChoice choice_of(const Prediction& p) const;
  const KernelConfig* choose_default(const Problem& problem) const;
  void note_split_depth(const KernelConfig& config);
  // The config with each other split-K depth above 1 its family was measured with here
  // (TimeEstimates::resplit_us); none for a config that does not split.
  std::vector<KernelConfig> split_siblings(const KernelConfig& config) const;
  using Candidate = TimeEstimates::Candidate;
  // What choose_untuned weighs for the problem, in its order (TimeEstimates::times).
  std::vector<Candidate> candidates_for(const Problem& problem) const;
  // The split siblings of the last candidate in `out` not in `seen`, appended after it. A
  // carried one's siblings split deeper only for a longer K here, less deep only for a shorter
  // one than its tuned shape's.
  void add_split_siblings(const Problem& problem, const std::set<std::string>& seen,
                          std::vector<Candidate>& out) const;

  std::vector<BestEntry> tuned_;
  std::vector<DefaultKernel> defaults_;
  std::string arch_;
  int sm_count_;
  SelectorParameters params_;
  TimeEstimates estimates_;  // fitted to measured_ once it is filled
  std::map<std::string, std::vector<Measurement>> measured_;  // by problem key
  // Per problem key, the families of every trial recorded on it, failures included.
  std::map<std::string, std::set<std::string>> tried_families_;
  // Whether the config's build for the problem's variant (layout and types: one cubin serves
  // every size) spilled or failed to compile on a tuned problem here: never served untuned.
  bool failed_build(const KernelConfig& config, const Problem& problem) const;
  std::set<std::string> failed_builds_;  // config_id and variant key
  // Per family, the SPLIT_K depths of its configs measured here or shipped as defaults.
  std::map<std::string, std::set<int64_t>> split_depths_;
};

// Whether `config` can run `problem` on `arch` and is a sensible choice for it: its family is
// registered and accepts the problem, and no split-K slice is left without a full K tile.
bool can_run(const KernelConfig& config, const Problem& problem, const std::string& arch);

}  // namespace tgemm
