// CurrentBuild: the versions of everything a tuned time depends on, as this build and GPU
// have them now: each family's device-code hash (its template and common headers), the NVRTC
// version and the CUDA driver. A recorded trial that differs in any of them is stale: the
// dispatcher does not serve it, tgemm-tune measures it again, `tgemm-db stale` lists it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "src/core/measured_with.h"
#include "src/core/tuning_records.h"

namespace tgemm {

struct CurrentBuild {
  std::map<std::string, std::string> template_hashes;  // family name -> hash of its code now
  std::string nvrtc_version;                           // "13.0"
  int driver_version = 0;  // of the GPU in question; 0: not known here (no GPU), not compared

  // Why a trial of `family` built from code with `template_hash` and measured with `with`
  // no longer holds, or nullopt. Versions a trial did not record (older files) are not held
  // against it: nothing says they differ.
  std::optional<std::string> stale_reason(const std::string& family,
                                          const std::string& template_hash,
                                          const MeasuredWith& with) const;
};

// The CurrentBuild of each device a database holds (by name and arch), for judging its
// recorded trials without a GPU: `make` gives a device's build from its stored driver.
class BuildsByDevice {
 public:
  BuildsByDevice(const std::vector<DeviceInfo>& devices,
                 const std::function<CurrentBuild(const DeviceInfo&)>& make);
  // CurrentBuild::stale_reason of the build of (device, arch); nullopt for a device not held.
  std::optional<std::string> stale_reason(const std::string& device, const std::string& arch,
                                          const std::string& family,
                                          const std::string& template_hash,
                                          const MeasuredWith& with) const;

 private:
  std::map<std::pair<std::string, std::string>, CurrentBuild> builds_;
};

// What drop_stale removed: counts and the first entry's reason, for one log line.
struct StaleDropped {
  size_t entries = 0, trials = 0;
  size_t replaced = 0;  // stale bests whose problem kept its fastest current trial instead
  std::string example;  // "<problem key>: <reason>" of the first stale best entry or trial
};

// Removes the trials that `current` finds stale, and the stale best entries; a stale best whose
// problem has a current ok trial on the same device takes the fastest of those instead.
StaleDropped drop_stale(const CurrentBuild& current, std::vector<BestEntry>* entries,
                        std::vector<TrialRecord>* trials);

}  // namespace tgemm
