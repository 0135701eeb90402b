// KernelFit: what a measured kernel needs of an SM (registers, shared memory, threads), the
// blocks per SM that allows and how many waves its grid takes, read from its stored cubin.
// Shared by explain and the HTML report.
#pragma once

#include <cstddef>
#include <optional>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/core/occupancy.h"

namespace tgemm {

struct KernelFit {
  int registers = 0;
  size_t smem_bytes = 0;  // static + dynamic
  int threads = 0;
  Occupancy occupancy;
  double waves = 0;  // blocks of the main launch over the resident blocks of the whole GPU
};

// nullopt when the trial's family is unknown, its cubin is not stored or the arch has no
// limits table in this build.
std::optional<KernelFit> fit_of(TuningDb& db, const TrialRecord& trial, const DeviceInfo& device);

}  // namespace tgemm
