#include "db/trial_rekey.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "db/cubin_store.h"
#include "db/sqlite_statement.h"
#include "db/stored_rows.h"
#include "db/trial_store.h"

namespace tgemm {

std::vector<TrialBinary> TrialRekey::trial_binaries() {
  Statement s(db_.handle(), db_.path(), "read the binaries trials ran",
              fmt::format("SELECT {}, kr.template AS template, kr.params AS params, "
                          "kr.template_hash AS template_hash, r.trials AS trials "
                          "FROM (SELECT binary_id, count(*) AS trials FROM trials "
                          "WHERE binary_id IS NOT NULL GROUP BY binary_id) r "
                          "JOIN binaries b ON b.id = r.binary_id "
                          "JOIN kernels kr ON kr.id = b.kernel_id ORDER BY b.id",
                          kBinaryColumns));
  std::vector<TrialBinary> out;
  SkippedRows skipped(db_.path(), "read the binaries trials ran");
  while (s.step()) {
    TrialBinary b;
    const int64_t kernel_id = s.integer("kernel_id");
    if (!skipped.keep([&] {
          b.binary = binary_at(s);
          b.config = decoded(s, "kernels", kernel_id, "params", [&] {
            return KernelConfig::from_params_text(s.text("template"), s.text("params"));
          });
        }))
      continue;
    const std::string& arch = b.binary.compiled.arch;
    if (!checks_.usable(fmt::format("kernels row {} (on {})", kernel_id, arch),
                        checks_.config_rejection(kernel_id, b.config, arch)))
      continue;
    b.template_hash = s.text("template_hash");
    b.trials = s.integer("trials");
    out.push_back(std::move(b));
  }
  return out;
}

int64_t TrialRekey::rekey_trials(
    int64_t run_id, const TrialBinary& stored, const std::string& template_hash,
    const CompiledKernel& current,
    const std::function<CurrentBuild(const DeviceInfo&)>& current_for) {
  CubinStore cubins(db_);
  const int64_t kernel = cubins.upsert_kernel(stored.config, template_hash);
  const int64_t binary =
      cubins.store_binary(run_id, kernel, current, stored.binary.status, stored.binary.reason);
  // The trials to move, with what judging them current takes: status, versions, device.
  Statement movable(
      db_.handle(), db_.path(), "find the trials to re-key",
      "SELECT t.id AS trial_id, t.problem_id AS problem_id, t.device_id AS device_id, "
      "t.status = 'ok' AND t.time_median_us > 0 AS measured_ok, "
      "t.nvrtc_version AS nvrtc_version, t.driver_version AS driver_version, d.name AS name, "
      "d.arch AS arch, d.sm_count AS sm_count, d.driver_version AS device_driver "
      "FROM trials t JOIN devices d ON d.id = t.device_id "
      "WHERE t.binary_id = ?1 AND t.kernel_id = ?2 AND NOT EXISTS (SELECT 1 FROM trials o "
      "WHERE o.problem_id = t.problem_id AND o.device_id = t.device_id AND o.kernel_id = ?3)");
  movable.bind(1, stored.binary.id).bind(2, stored.binary.kernel_id).bind(3, kernel);
  struct Movable {
    int64_t trial, problem, device;
    bool measured_ok;
    MeasuredWith with;
  };
  std::vector<Movable> trials;             // read whole before any is updated
  std::map<int64_t, CurrentBuild> builds;  // by device id
  while (movable.step()) {
    Movable m{movable.integer("trial_id"), movable.integer("problem_id"),
              movable.integer("device_id"), movable.integer("measured_ok") != 0,
              measured_with_at(movable)};
    if (!builds.count(m.device)) {
      DeviceInfo d;
      d.name = movable.text("name");
      d.arch = movable.text("arch");
      d.sm_count = int(movable.integer("sm_count"));
      d.driver_version = int(movable.integer("device_driver"));
      builds[m.device] = current_for(d);
    }
    trials.push_back(std::move(m));
  }
  Statement move(db_.handle(), db_.path(), "re-key a trial",
                 "UPDATE trials SET kernel_id = ?2, binary_id = ?3 WHERE id = ?1");
  std::set<std::pair<int64_t, int64_t>> gained;  // (problem, device) with a current ok trial
  for (const Movable& m : trials) {
    move.reset();
    move.bind(1, m.trial).bind(2, kernel).bind(3, binary).run();
    if (m.measured_ok &&
        !builds[m.device].stale_reason(stored.config.template_name, template_hash, m.with))
      gained.insert({m.problem, m.device});
  }
  // Only where a current ok trial now exists: there the best stays a row, never dropped.
  TrialStore store(db_);
  for (auto [problem, device] : gained) store.update_best(problem, device, &builds[device]);
  return int64_t(trials.size());
}

}  // namespace tgemm
