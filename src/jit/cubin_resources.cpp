#include "src/jit/cubin_resources.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "src/core/arch_limits.h"
#include "src/jit/elf_view.h"

namespace tgemm {

namespace {

// .nv.info entries: {format, attribute, 16-bit size or value}, then `size` bytes for
// EIFMT_SVAL. Attribute codes as cuobjdump -elf names them.
constexpr uint8_t kFormatSval = 0x04;
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
    const uint8_t* p = reinterpret_cast<const uint8_t*>(elf.data(s));
    for (uint64_t at = 0; at + 4 <= s.sh_size;) {
      const uint8_t format = p[at], attribute = p[at + 1];
      const uint16_t size = uint16_t(p[at + 2] | p[at + 3] << 8);
      at += 4;
      if (format != kFormatSval) continue;  // value lives in the size field: nothing follows
      if (at + size > s.sh_size) break;
      if (size == 8 && (attribute == kAttrRegCount || attribute == kAttrFrameSize)) {
        uint32_t fields[2];
        std::memcpy(fields, p + at, sizeof fields);
        if (fields[0] == symbol->index) {
          if (attribute == kAttrRegCount) {
            r.registers = int(fields[1]);
            r.found = true;
          } else {
            r.stack_frame_bytes = int(fields[1]);
          }
        }
      }
      at += size;
    }
  }
  r.spill_store_bytes = r.stack_frame_bytes;
  if (arch_number(arch) >= 90) r.smem_bytes = std::max(0, r.smem_bytes - kHopperReservedSmem);
  return r;
}

}  // namespace tgemm
