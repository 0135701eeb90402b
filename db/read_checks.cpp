#include "db/read_checks.h"

#include <fmt/format.h>

#include "db/db_connection.h"
#include "db/sqlite_statement.h"
#include "src/core/library_log.h"
#include "src/core/printable.h"
#include "src/templates/stored_config.h"

namespace tgemm {

bool ReadChecks::usable(const std::string& row, const std::optional<std::string>& why) {
  if (!why) return true;
  if (warned_.insert(row).second)
    library_log().warn("tgemm: tuning database '{}': {}: {}; skipped", db_.path(), row, *why);
  return false;
}

std::optional<std::string> ReadChecks::config_rejection(int64_t kernel_id,
                                                        const KernelConfig& config,
                                                        const std::string& arch) {
  auto [it, fresh] = configs_.try_emplace({kernel_id, arch});
  if (fresh) it->second = stored_config_rejection(config, arch);
  return it->second;
}

bool ReadChecks::device_usable(int64_t device_id) {
  if (!unusable_devices_) {
    unusable_devices_.emplace();
    // A GPU's name and arch hold no control characters: such a row is planted (escape
    // sequences for the terminal that prints it) or damaged.
    Statement names(db_.handle(), db_.path(), "read the devices",
                    "SELECT id, name, arch FROM devices");
    while (names.step())
      for (const std::string& text : {names.text("name"), names.text("arch")})
        if (printable(text) != text)
          (*unusable_devices_)[names.integer("id")] =
              fmt::format("'{}' holds control characters", printable(text));
    // A later row with an earlier row's name and arch is a second copy of every best (the
    // schema's key adds the SM count, which differs there).
    Statement s(db_.handle(), db_.path(), "read the devices",
                "SELECT d.id AS id, d.name AS name, d.arch AS arch, f.id AS first_id "
                "FROM devices d JOIN devices f ON f.name = d.name AND f.arch = d.arch "
                "AND f.id < d.id GROUP BY d.id");
    while (s.step())
      unusable_devices_->try_emplace(
          s.integer("id"),
          fmt::format("device '{}' ({}) repeats devices row {}", printable(s.text("name")),
                      printable(s.text("arch")), s.integer("first_id")));
  }
  auto it = unusable_devices_->find(device_id);
  return it == unusable_devices_->end() ||
         usable(fmt::format("devices row {}", device_id), it->second);
}

bool ReadChecks::trial_usable(int64_t trial_id, int64_t kernel_id, const TrialResult& trial,
                              int64_t device_id, const std::string& arch) {
  return device_usable(device_id) &&
         usable(fmt::format("kernels row {} (on {})", kernel_id, arch),
                config_rejection(kernel_id, trial.config, arch)) &&
         usable(fmt::format("trials row {}", trial_id), implausible_measurement(trial));
}

}  // namespace tgemm
