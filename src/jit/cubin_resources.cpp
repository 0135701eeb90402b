#include "src/jit/cubin_resources.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "src/core/arch_limits.h"
#include "src/jit/elf_view.h"

namespace tgemm {

namespace {

// .nv.info attributes (NvInfoEntry) of the global section, {symbol, value} each.
constexpr uint8_t kAttrFrameSize = 0x11;  // EIATTR_FRAME_SIZE: {symbol, bytes}
constexpr uint8_t kAttrRegCount = 0x2f;   // EIATTR_REGCOUNT:   {symbol, registers}
constexpr int kHopperReservedSmem = 1024;

}  // namespace

PtxasResources read_cubin_resources(const std::vector<char>& cubin, const std::string& function,
                                    const std::string& arch) {
  PtxasResources r;
  ElfView elf(cubin);
  if (!elf.valid()) return r;
  const auto symbol = elf.symbol(function);
  if (!symbol) return r;
  for (int i = 0; i < elf.sections(); ++i) {
    const Elf64_Shdr s = elf.section(i);
    if (!elf.in_bounds(s)) continue;
    const std::string name = elf.section_name(s);
    if (name == ".nv.shared." + function) r.smem_bytes = int(s.sh_size);
    if (name != ".nv.info" && name != ".nv.info." + function) continue;
    for (const NvInfoEntry& e : nv_info_entries(elf, s)) {
      if (!e.payload || e.size_or_value != 8) continue;
      if (e.attribute != kAttrRegCount && e.attribute != kAttrFrameSize) continue;
      uint32_t fields[2];
      std::memcpy(fields, e.payload, sizeof fields);
      if (fields[0] != symbol->index) continue;
      if (e.attribute == kAttrRegCount) {
        r.registers = int(fields[1]);
        r.found = true;
      } else {
        r.stack_frame_bytes = int(fields[1]);
      }
    }
  }
  r.spill_store_bytes = r.stack_frame_bytes;
  if (arch_number(arch) >= 90) r.smem_bytes = std::max(0, r.smem_bytes - kHopperReservedSmem);
  return r;
}

}  // namespace tgemm
