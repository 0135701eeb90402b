#include "tuner/report/selection_replay.h"

#include <map>

#include "src/dispatch/kernel_selector.h"
#include "tuner/report/database_selector.h"

namespace tgemm {

std::vector<ReplayRow> replay_selection(TuningDb& source, TuningDb& truth, bool leave_one_out) {
  std::vector<ReplayRow> rows;
  for (const DeviceInfo& device : truth.devices()) {
    const DatabaseSelector from_source(source, device);
    const KernelSelector all = from_source.selector();
    // Times in the truth database: problem key -> canonical name -> median µs.
    std::map<std::string, std::map<std::string, double>> times;
    for (const TrialRecord& r : truth.trials("", device.name))
      if (r.arch == device.arch && r.trial.status == TrialStatus::ok)
        times[r.problem.key()][r.trial.config.canonical_name()] = r.trial.time_median_us;
    for (const BestEntry& best : truth.best_entries("", device.name, device.arch)) {
      const KernelChoice choice =
          leave_one_out ? from_source.selector(best.problem.key()).choose(best.problem)
                        : all.choose(best.problem);
      ReplayRow row{best.problem.key(), device.name, choice.path, "", best.trial.time_median_us, 0};
      if (choice.path != Selection::cublas) {
        row.chosen = choice.config.canonical_name();
        const auto& measured_here = times[row.problem_key];
        if (auto it = measured_here.find(row.chosen); it != measured_here.end())
          row.chosen_us = it->second;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace tgemm
