// Nsight Compute's raw CSV (`ncu --csv --page raw --metrics ...`) read into rows, and the
// metrics tgemm-db asks for turned into a KernelProfile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/kernel_profile.h"

namespace tgemm {

// One profiled kernel: every column of its row with the unit of the units row.
struct NcuKernelRow {
  std::string kernel_name;
  std::map<std::string, std::string> values;  // column -> cell as printed
  std::map<std::string, std::string> units;   // column -> unit ("byte", "nsecond", "%", "")
  // The cell as a number in base units (bytes, nanoseconds), thousands separators dropped;
  // nullopt when the column is absent, empty, "n/a" or not a number.
  std::optional<double> number(const std::string& column) const;
};

// Lines before the header (ncu's ==PROF== messages, the application's output) are skipped:
// the header is the first line whose first cell is "ID"; the next line holds the units, then
// one row per kernel. Throws Error naming the line for a row with the wrong cell count, an
// unterminated quote, or a header without a "Kernel Name" column.
std::vector<NcuKernelRow> parse_ncu_raw_csv(const std::string& text);

// What tgemm-db profile passes to --metrics; stall reasons through one regex.
std::vector<std::string> profile_metrics();
// The stall metrics by name, for an ncu that does not take the regex.
std::vector<std::string> stall_metric_names();

// The metric fields and the largest `top_stalls` stall reasons of a row ("selected" is the
// issue itself, not a stall, and is left out).
KernelProfile profile_from_row(const NcuKernelRow& row, size_t top_stalls = 6);

// The metrics an ncu log says it does not know ("Failed to find metric X"), in order.
std::vector<std::string> missing_metrics(const std::string& log);

// "2025.1.0.0" from `ncu --version` ("... Version 2025.1.0.0 (build 35237751) ..."); the
// last non-empty line when there is no "Version" word.
std::string ncu_version_of(const std::string& version_output);

}  // namespace tgemm
