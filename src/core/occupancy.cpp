#include "src/core/occupancy.h"

#include <algorithm>
#include <climits>

namespace tgemm {

namespace {
// Registers are allocated per warp in units of 256 (8 per thread).
constexpr int kRegisterUnitPerWarp = 256;
// Shared memory per block is allocated in 128-byte units (the occupancy calculator's
// figure for sm_75 to sm_90), each block also paying the system's reserved share.
constexpr size_t kSmemUnit = 128;

int round_up(int value, int unit) { return (value + unit - 1) / unit * unit; }
}  // namespace

Occupancy occupancy(const ArchLimits& limits, int threads, int registers, size_t smem_bytes) {
  Occupancy o;
  if (threads <= 0 || threads > limits.max_threads_per_block) {
    o.limited_by = "threads";
    return o;
  }
  const int warps = (threads + 31) / 32;
  struct Bound {
    int blocks;
    const char* name;
  };
  const int by_threads = limits.max_threads_per_sm / (warps * 32);
  const int regs_per_block = warps * round_up(std::max(registers, 1) * 32, kRegisterUnitPerWarp);
  const int by_registers =
      regs_per_block > limits.regs_per_block ? 0 : limits.regs_per_sm / regs_per_block;
  const size_t smem_per_block =
      (smem_bytes + size_t(limits.reserved_smem_per_block) + kSmemUnit - 1) / kSmemUnit * kSmemUnit;
  int by_smem = INT_MAX;  // no shared memory at all (sm_75 reserves none): no bound
  if (smem_bytes > size_t(limits.smem_per_block_optin))
    by_smem = 0;
  else if (smem_per_block > 0)
    by_smem = int(std::min<size_t>(INT_MAX, size_t(limits.smem_per_sm) / smem_per_block));
  const Bound bounds[] = {{limits.max_blocks_per_sm, "blocks per SM"},
                          {by_threads, "threads"},
                          {by_registers, "registers"},
                          {by_smem, "shared memory"}};
  const Bound* tightest = &bounds[0];
  for (const Bound& b : bounds)
    if (b.blocks < tightest->blocks) tightest = &b;
  o.blocks_per_sm = std::max(0, tightest->blocks);
  o.limited_by = tightest->name;
  o.warps_fraction = double(o.blocks_per_sm * warps) / double(limits.max_threads_per_sm / 32);
  return o;
}

}  // namespace tgemm
