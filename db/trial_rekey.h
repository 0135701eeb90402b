// TrialRekey: moving recorded trials to the kernel row of a new template text whose config
// builds to the same machine code (tuner/compile/code_refresh.h), so times that still hold are
// kept rather than measured again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/db_connection.h"
#include "db/read_checks.h"
#include "src/core/current_build.h"
#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/tuning_records.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// A binary that recorded trials ran, with its kernel: what re-keying judges.
struct TrialBinary {
  KernelConfig config;
  std::string template_hash;
  BinaryRecord binary;  // its stored code hash, and its cubin where that passes its checks
  int64_t trials = 0;   // the trials that ran it
};

class TrialRekey {
 public:
  TrialRekey(DbConnection& db, ReadChecks& checks) : db_(db), checks_(checks) {}

  // Every binary that trials ran (vendor calls have none), in id order; a binary whose
  // kernel's config does not hold on its arch is skipped with a warning.
  std::vector<TrialBinary> trial_binaries();
  // Moves the trials that ran `stored` to the kernel of its config under `template_hash`, with
  // `current` as their binary (stored like store_binary, keeping `stored`'s status). A trial
  // whose problem and device already have one of that kernel stays where it is. The best of
  // each (problem, device) that gains an ok trial current by `current_for` its device is
  // recomputed as tgemm-tune does. Returns the trials moved.
  int64_t rekey_trials(int64_t run_id, const TrialBinary& stored, const std::string& template_hash,
                       const CompiledKernel& current,
                       const std::function<CurrentBuild(const DeviceInfo&)>& current_for);

 private:
  DbConnection& db_;
  ReadChecks& checks_;
};

}  // namespace tgemm
