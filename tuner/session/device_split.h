// DeviceSplit: which GPUs one tgemm-tune run measures on (--devices all|0,1,...) and how its
// problems are shared out between them, deterministically, so a rerun splits the same way.
#pragma once

#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "tuner/input/problem_set.h"

namespace tgemm {

// --devices as given: every visible GPU, or these ordinals in the order listed.
struct DeviceList {
  bool all = false;
  std::vector<int> ordinals;
};

// "all", or CUDA ordinals separated by commas ("0,1,3"); throws Error naming --devices for an
// empty entry, anything but decimal digits, an ordinal over 9999 or one listed twice.
DeviceList parse_device_list(const std::string& text);

// "2 GPU(s): 0 NVIDIA H200 (sm_90), 1 NVIDIA H200 (sm_90)", or "no GPU (why)" for none.
std::string describe_gpus(const std::vector<DeviceInfo>& gpus, const std::string& why_none);

// The GPUs of `list` among the visible ones (`gpus`, ordinal i at index i). `all` with none
// visible gives none (the run then compiles only, or says there is no GPU, as without
// --devices); an ordinal that is not there throws Error naming it and the GPUs there are.
std::vector<DeviceInfo> resolve_devices(const DeviceList& list, const std::vector<DeviceInfo>& gpus,
                                        const std::string& why_none);

// What one problem is estimated to cost to tune, in floating-point operations: its work plus
// a fixed share for what every trial costs whatever its size (launch, check, worker round trip).
double estimated_tuning_cost(const Problem& problem);

// The problems (indices into `problems`) each of `devices` GPUs tunes: every problem exactly
// once, the costliest first to the least-loaded GPU (LPT), over whole variants (layout and
// types: a variant on one GPU is compiled once) when that is within 10 % of the split of
// single problems, else over single problems (the loads then differ by at most one problem's
// cost). Each GPU's list is grouped by variant, its variants in an order rotated by the GPU's
// position, so GPUs sharing variants start on different ones and find more of each other's
// cubins in the database's cache.
std::vector<std::vector<size_t>> assign_problems(const std::vector<NamedProblem>& problems,
                                                 size_t devices);

}  // namespace tgemm
