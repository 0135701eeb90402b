#include "src/jit/cubin_resources.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "src/core/arch_limits.h"

namespace tgemm {

namespace {

// .nv.info entries: {format, attribute, 16-bit size or value}, then `size` bytes for
// EIFMT_SVAL. Attribute codes as cuobjdump -elf names them.
constexpr uint8_t kFormatSval = 0x04;
constexpr uint8_t kAttrFrameSize = 0x11;  // EIATTR_FRAME_SIZE: {symbol, bytes}
constexpr uint8_t kAttrRegCount = 0x2f;   // EIATTR_REGCOUNT:   {symbol, registers}
constexpr int kHopperReservedSmem = 1024;

class ElfView {
 public:
  explicit ElfView(const std::vector<char>& bytes) : b_(bytes) {}

  bool valid() const {
    if (b_.size() < sizeof(Elf64_Ehdr) || std::memcmp(b_.data(), ELFMAG, SELFMAG) != 0)
      return false;
    const auto& h = header();
    return b_[EI_CLASS] == ELFCLASS64 && h.e_shentsize == sizeof(Elf64_Shdr) &&
           h.e_shoff + uint64_t(h.e_shnum) * sizeof(Elf64_Shdr) <= b_.size() &&
           h.e_shstrndx < h.e_shnum;
  }
  const Elf64_Ehdr& header() const { return *reinterpret_cast<const Elf64_Ehdr*>(b_.data()); }
  int sections() const { return header().e_shnum; }
  Elf64_Shdr section(int i) const {
    Elf64_Shdr s;
    std::memcpy(&s, b_.data() + header().e_shoff + size_t(i) * sizeof(Elf64_Shdr), sizeof s);
    return s;
  }
  bool in_bounds(const Elf64_Shdr& s) const {
    return s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size <= b_.size();
  }
  std::string section_name(const Elf64_Shdr& s) const {
    return string_at(section(header().e_shstrndx), s.sh_name);
  }
  std::string string_at(const Elf64_Shdr& table, uint64_t offset) const {
    if (!in_bounds(table) || offset >= table.sh_size) return "";
    const char* p = b_.data() + table.sh_offset + offset;
    return std::string(p, strnlen(p, table.sh_size - offset));
  }
  const char* data(const Elf64_Shdr& s) const { return b_.data() + s.sh_offset; }

 private:
  const std::vector<char>& b_;
};

// Index of `function` in the symbol table, or nullopt.
std::optional<uint32_t> symbol_index(const ElfView& elf, const std::string& function) {
  for (int i = 0; i < elf.sections(); ++i) {
    const Elf64_Shdr s = elf.section(i);
    if (s.sh_type != SHT_SYMTAB || !elf.in_bounds(s) || s.sh_link >= uint32_t(elf.sections()))
      continue;
    const Elf64_Shdr names = elf.section(int(s.sh_link));
    for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.data(s) + k * sizeof(Elf64_Sym), sizeof sym);
      if (elf.string_at(names, sym.st_name) == function) return uint32_t(k);
    }
  }
  return std::nullopt;
}

}  // namespace

PtxasResources read_cubin_resources(const std::vector<char>& cubin, const std::string& function,
                                    const std::string& arch) {
  PtxasResources r;
  ElfView elf(cubin);
  if (!elf.valid()) return r;
  const auto symbol = symbol_index(elf, function);
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
        if (fields[0] == *symbol) {
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
