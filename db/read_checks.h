// ReadChecks: what TuningDb verifies of the rows it hands out, before any caller uses them. A
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

namespace tgemm {

class ReadChecks {
 public:
  explicit ReadChecks(std::string path) : path_(std::move(path)) {}

  // Whether the row named `row` ("trials row 12") may be used, i.e. `why` is empty; else
  // warns, once per row for this object, and returns false.
  bool usable(const std::string& row, const std::optional<std::string>& why);
  // stored_config_rejection of kernels row `kernel_id`'s config on `arch`, asked once per pair.
  std::optional<std::string> config_rejection(int64_t kernel_id, const KernelConfig& config,
                                              const std::string& arch);

  // Devices rows no reader may use, by id, with why: a name or arch holding control
  // characters, or repeating an earlier row's (the dispatcher and the tools know a GPU by those
  // two); nullopt until TuningDb has looked.
  std::optional<std::map<int64_t, std::string>> unusable_devices;

 private:
  std::string path_;
  std::set<std::string> warned_;
  std::map<std::pair<int64_t, std::string>, std::optional<std::string>> configs_;
};

}  // namespace tgemm
