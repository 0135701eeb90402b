// ProfileStore: what was measured of a device and of the kernels on it beyond their times:
// the device's ceilings (copy bandwidth, FLOP rates) and Nsight Compute kernel profiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/db_connection.h"
#include "src/core/device_ceiling.h"
#include "src/core/kernel_profile.h"

namespace tgemm {

class ProfileStore {
 public:
  explicit ProfileStore(DbConnection& db) : db_(db) {}

  // The measured roofs of a device (one row per kind; storing a kind again replaces it). The
  // reader lists them (TuningDbReader::ceilings).
  void store_ceilings(int64_t run_id, int64_t device_id,
                      const std::vector<DeviceCeiling>& ceilings);
  bool has_ceilings(int64_t device_id);

  // Nsight Compute profiles (tgemm-db profile). Storing replaces every profile of that
  // (problem, device) at once; profiles() lists them per device and problem, tgemm first.
  void store_profiles(int64_t problem_id, int64_t device_id,
                      const std::vector<KernelProfile>& profiles);
  std::vector<KernelProfile> profiles(const std::string& device_name = "",
                                      const std::string& arch = "");

 private:
  DbConnection& db_;
};

}  // namespace tgemm
