// MultiDeviceRun: tgemm-tune --devices over several GPUs of one host. One TuningSession per
// GPU, each in its own thread with its own measuring worker and its share of the problems
// (assign_problems), all writing one database; then a line of what each GPU did.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "tuner/session/tuning_session.h"

namespace tgemm {

// The GPUs the worker sees, ordinal i at index i, probed one ordinal after another (each probe
// is a tgemm-worker start: this process never initialises CUDA). Empty, with `why` set, when
// there is none.
std::vector<DeviceInfo> visible_gpus(const std::string& worker_path,
                                     std::chrono::milliseconds timeout, std::string* why);

// Tunes the shape file (after options.shard) on `gpus`, a session per GPU given its share of
// the problems and of options.jobs. A GPU left without a problem starts no session. Throws
// Error naming each GPU whose session failed, after the others have finished.
void run_on_devices(const TuneOptions& options, const std::vector<DeviceInfo>& gpus);

}  // namespace tgemm
