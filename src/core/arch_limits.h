// ArchLimits: per-architecture resource limits, from a table when there is no GPU.
#pragma once

#include <string>
#include <vector>

namespace tgemm {

struct ArchLimits {
  std::string arch;  // "sm_90"
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_regs_per_thread = 255;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int smem_per_block_optin = 0;  // bytes a block may get after opting in
  int smem_per_sm = 0;
  int max_blocks_per_sm = 32;
  int reserved_smem_per_block = 1024;  // what the system takes of each block's share (sm_80+)
};

// Table entry for "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"; throws Error for
// anything else, naming the known architectures.
ArchLimits arch_limits(const std::string& arch);
std::vector<std::string> known_archs();
// "sm_90" -> 90; throws on text that is not sm_<digits>.
int arch_number(const std::string& arch);
// The target when no GPU is present (compile-only work).
inline constexpr const char* kDefaultArch = "sm_75";

}  // namespace tgemm
