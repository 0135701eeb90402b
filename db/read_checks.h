// ReadChecks: what the reader verifies of the rows it hands out, before any caller uses them. A
// database is input (a hand edit, a foreign writer, a planted file): a row that fails a check
// is skipped, with one warning naming the file, the row and why, and never trusted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "src/core/kernel_config.h"
#include "src/core/trial_result.h"

namespace tgemm {

class DbConnection;

class ReadChecks {
 public:
  explicit ReadChecks(DbConnection& db) : db_(db) {}

  // Whether the row named `row` ("trials row 12") may be used, i.e. `why` is empty; else
  // warns, once per row for this object, and returns false.
  bool usable(const std::string& row, const std::optional<std::string>& why);
  // stored_config_rejection of kernels row `kernel_id`'s config on `arch`, asked once per pair.
  std::optional<std::string> config_rejection(int64_t kernel_id, const KernelConfig& config,
                                              const std::string& arch);
  // Whether devices row `device_id` may be used: its name and arch hold no control characters
  // and do not repeat an earlier row's (the dispatcher and the tools know a GPU by those two).
  bool device_usable(int64_t device_id);
  // Whether a trial read from the file may be handed out: its device row is usable, its
  // kernel's config holds on the device's arch, an ok trial's figures are a measurement.
  bool trial_usable(int64_t trial_id, int64_t kernel_id, const TrialResult& trial,
                    int64_t device_id, const std::string& arch);

 private:
  DbConnection& db_;
  std::set<std::string> warned_;
  std::map<std::pair<int64_t, std::string>, std::optional<std::string>> configs_;
  // Devices rows no reader may use, by id, with why; read on the first device_usable.
  std::optional<std::map<int64_t, std::string>> unusable_devices_;
};

}  // namespace tgemm
