// KernelProfile: one kernel's Nsight Compute metrics on one problem and device, tgemm's best
// kernel or cuBLAS's (tgemm-db profile), as the kernel_profiles table stores it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tgemm {

// Warps stalled for one reason per issued instruction (ncu's warp state statistics).
struct StallReason {
  std::string name;  // "long_scoreboard", "barrier", ...
  double value = 0;
};

struct KernelProfile {
  std::string problem_key;
  std::string device_name, arch;
  std::string contender;    // "tgemm" or "cublas"
  std::string config;       // tgemm: the best kernel's canonical name; cuBLAS: empty
  std::string kernel_name;  // the profiled kernel as ncu names it
  std::string ncu_version;  // "2025.1.0.0"
  // Metrics ncu could not collect stay empty (an older ncu, another arch).
  std::optional<double> duration_us;            // gpu__time_duration.sum
  std::optional<double> sm_throughput_pct;      // sm__throughput, % of peak
  std::optional<double> memory_throughput_pct;  // gpu__compute_memory_throughput, % of peak
  std::optional<double> dram_read_bytes, dram_write_bytes;
  std::optional<double> global_load_sectors, global_load_requests, global_store_sectors;
  std::optional<double> global_excess_sectors;  // sectors beyond a coalesced access
  std::optional<double> shared_load_bank_conflicts, shared_store_bank_conflicts;
  std::optional<double> achieved_occupancy_pct;  // sm__warps_active, % of peak
  std::optional<double> fma_pipe_pct, tensor_pipe_pct;
  std::optional<double> registers;  // per thread
  std::vector<StallReason> stalls;  // the largest first
  std::string profiled_at;          // filled by the database
};

// The contender names of KernelProfile::contender.
inline constexpr const char* kTgemmContender = "tgemm";
inline constexpr const char* kCublasContender = "cublas";

}  // namespace tgemm
