// TimeEstimates: the times the kernel selector compares, for a config on a problem on one GPU:
// the performance model's, scaled by how far it missed what the config measured here; a time
// measured on a tuned shape carried to another; a split-K sibling's. Pure logic: no CUDA, no
// SQL, so it is tested on the CPU with the selector.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/model/heuristic_parameters.h"

namespace tgemm {

struct BlockResources;
struct TileShape;

// A config's family and parameters, as one key.
std::string config_id(const KernelConfig& config);
// How many of the problem's operands a layout stores alike (0, 1 or 2): the nearer layout when
// the problem's own has no record.
int operands_alike(Op op_a, Op op_b, const Problem& problem);
TileShape tile_of(const KernelConfig& config, const Problem& problem);
// Blocks a config's main kernel launches for a problem (split-K slices included), from the
// family's own launch plan: a family may cut K by the problem's size (the GEMV family's
// slices). Call only for a config that can run the problem.
int64_t launched_blocks(const KernelConfig& config, const Problem& problem, int sm_count);

class TimeEstimates {
 public:
  // A config's median time on one tuned problem here.
  struct Measurement {
    KernelConfig config;
    std::string template_hash;
    double time_us;
  };

  // A config the kernel selector weighs for a problem, and the evidence its time rests on.
  struct Candidate {
    enum class Source {
      carried,  // measured on the tuned shape `there` (us_there) and carried here
      model,    // a default line: the model's time here, scaled by its records on this GPU
      resplit,  // the time of candidate `parent` carried to this config, its split sibling
    };
    Source source = Source::model;
    KernelConfig config;
    std::string template_hash;       // carried: the measured kernel's (for the chooser)
    const Problem* there = nullptr;  // carried: the tuned shape; resplit: its parent's, if any
    double us_there = 0;             // carried: the config's median there
    double factor = 1;               // what the estimate pays on top (distance, margins)
    int parent = -1;                 // resplit: the index of an earlier candidate
  };

  // `sm_count`: the GPU's multiprocessors (0: unknown). `ceilings`: its measured roofs for the
  // performance model (empty: the arch's datasheet-like figures).
  TimeEstimates(std::string arch, int sm_count, std::vector<DeviceCeiling> ceilings,
                SelectorParameters params);

  // `measured`: the times of every config on each tuned problem here, by problem key;
  // `problem_of`: the tuned problem of each key (keys without one are left out).
  void fit_model_scale(const std::map<std::string, std::vector<Measurement>>& measured,
                       const std::map<std::string, const Problem*>& problem_of);
  // Each candidate's time on `here`, in one pass, times its factor: a carried time by the
  // ratios of the two shapes' model times and padded work (carried_us); a default's model
  // time by its scale_for (infinity without one); a split sibling's from its parent's
  // (resplit_us; infinity where the parent has none).
  std::vector<double> times(const std::vector<Candidate>& candidates, const Problem& here) const;

 private:
  // The performance model's time for a config on a problem here (infinity: cannot run).
  double model_us(const KernelConfig& config, const Problem& problem) const;
  // Measured / predicted here for a config on the problem's layout (nullopt: no record of it
  // on the loop it runs there), by config (family and parameters).
  std::optional<double> scale_for(const KernelConfig& config, const Problem& problem) const;
  // A time measured on `there` carried to `here` by the ratios of the two shapes' model
  // times and padded work.
  double carried_us(const KernelConfig& config, double us_there, const Problem& there,
                    const Problem& here) const;
  // A time predicted here for `config` carried to its split sibling by the same two ratios.
  double resplit_us(const KernelConfig& config, double us, const KernelConfig& sibling,
                    const Problem& here) const;
  // Tile work a config does on a problem, in whole waves of resident blocks (K steps plus the
  // model's fixed steps per block).
  double padded_work(const KernelConfig& config, const Problem& problem) const;
  int64_t resident_capacity(int registers, const BlockResources& res) const;
  static double stream_tail_factor(int64_t blocks, int64_t resident);

  std::string arch_;
  int sm_count_;
  std::vector<DeviceCeiling> ceilings_;
  SelectorParameters params_;
  // A config's measured / predicted here on one tuned problem, with that problem's layout and
  // the family's loop for it (KernelDescription::code_path).
  struct LayoutRatio {
    Op op_a, op_b;
    std::string path;
    double ratio;
  };
  std::map<std::string, std::vector<LayoutRatio>> model_scale_;  // by config_id
};

}  // namespace tgemm
