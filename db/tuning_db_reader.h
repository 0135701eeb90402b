// TuningDbReader: the queries that serve a tuning database (devices, bests, trials, ceilings,
// cubins), with every row checked before it is handed out (ReadChecks). The dispatcher reads
// through it (db/tuning_records_reader.cpp); the tools' listings share it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/db_connection.h"
#include "db/read_checks.h"
#include "db/sqlite_statement.h"
#include "src/core/device_ceiling.h"
#include "src/core/device_info.h"
#include "src/core/tuning_records.h"

namespace tgemm {

class TuningDbReader {
 public:
  explicit TuningDbReader(DbConnection& db) : db_(db), checks_(db) {}

  // Every device with trials recorded (name, arch, SM count, L2 and clocks).
  std::vector<DeviceInfo> devices();
  // Best entries, filtered; empty strings match everything.
  std::vector<BestEntry> best_entries(const std::string& problem_key = "",
                                      const std::string& device_name = "",
                                      const std::string& arch = "");
  // Every trial, optionally of one problem and/or device: per problem and device, ok trials
  // first by median time, then failures.
  std::vector<TrialRecord> trials(const std::string& problem_key = "",
                                  const std::string& device_name = "");
  // Every stored ceiling, filtered by device name and arch (empty: all), with both filled in.
  std::vector<DeviceCeiling> ceilings(const std::string& device_name = "",
                                      const std::string& arch = "");
  // The cubin stored for the kernel with this layout, types, arch and NVRTC version (an empty
  // nvrtc_version matches any version, newest binary first); checksum_ok false and no bytes
  // when that cubin fails its checksum.
  std::optional<BinaryRecord> find_binary_for(const KernelConfig& config,
                                              const std::string& template_hash,
                                              const Problem& variant, const std::string& arch,
                                              const std::string& nvrtc_version);

  ReadChecks& checks() { return checks_; }

 private:
  // Our own fastest usable kernel's trial beside a vendor best, into `e`.
  void add_own_best(Statement& own, int64_t problem_id, int64_t device_id, BestEntry& e,
                    SkippedRows& skipped);

  DbConnection& db_;
  ReadChecks checks_;
};

}  // namespace tgemm
