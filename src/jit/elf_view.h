// ElfView: bounds-checked reads of a 64-bit ELF file held in memory (a cubin), for code that
// must survive any bytes: a cubin may come from a damaged or hostile tuning database.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tgemm {

class ElfView {
 public:
  explicit ElfView(const std::vector<char>& bytes) : b_(bytes) {}

  // A 64-bit ELF whose section table and section-name table lie inside the bytes. Offsets are
  // compared against what is left, never added, so no huge value can wrap around.
  bool valid() const {
    if (b_.size() < sizeof(Elf64_Ehdr) || std::memcmp(b_.data(), ELFMAG, SELFMAG) != 0)
      return false;
    const Elf64_Ehdr h = header();
    return b_[EI_CLASS] == ELFCLASS64 && h.e_shentsize == sizeof(Elf64_Shdr) &&
           h.e_shoff <= b_.size() && h.e_shnum <= (b_.size() - h.e_shoff) / sizeof(Elf64_Shdr) &&
           h.e_shstrndx < h.e_shnum;
  }
  Elf64_Ehdr header() const {
    Elf64_Ehdr h;
    std::memcpy(&h, b_.data(), sizeof h);
    return h;
  }
  int sections() const { return header().e_shnum; }
  Elf64_Shdr section(int i) const {
    Elf64_Shdr s;
    std::memcpy(&s, b_.data() + header().e_shoff + size_t(i) * sizeof(Elf64_Shdr), sizeof s);
    return s;
  }
  bool in_bounds(const Elf64_Shdr& s) const {
    return s.sh_type == SHT_NOBITS ||
           (s.sh_offset <= b_.size() && s.sh_size <= b_.size() - s.sh_offset);
  }
  std::string section_name(const Elf64_Shdr& s) const {
    return string_at(section(header().e_shstrndx), s.sh_name);
  }
  std::string string_at(const Elf64_Shdr& table, uint64_t offset) const {
    if (table.sh_type == SHT_NOBITS || !in_bounds(table) || offset >= table.sh_size) return "";
    const char* p = b_.data() + table.sh_offset + offset;
    return std::string(p, strnlen(p, table.sh_size - offset));
  }
  const char* data(const Elf64_Shdr& s) const { return b_.data() + s.sh_offset; }

  // The name of entry `index` of the symbol table `symtab`, a section symbol's being its
  // section's name; "" for an index outside the table or a symbol without a name.
  std::string symbol_name(const Elf64_Shdr& symtab, uint64_t index) const {
    if (symtab.sh_type != SHT_SYMTAB || !in_bounds(symtab) ||
        symtab.sh_link >= uint32_t(sections()) || index >= symtab.sh_size / sizeof(Elf64_Sym))
      return "";
    Elf64_Sym entry;
    std::memcpy(&entry, data(symtab) + index * sizeof(Elf64_Sym), sizeof entry);
    if (ELF64_ST_TYPE(entry.st_info) == STT_SECTION)
      return entry.st_shndx < sections() ? section_name(section(entry.st_shndx)) : "";
    return string_at(section(int(symtab.sh_link)), entry.st_name);
  }

  struct Symbol {
    uint32_t index;  // in its symbol table, as .nv.info attributes refer to it
    Elf64_Sym entry;
  };
  // The symbol named `name`, or nullopt.
  std::optional<Symbol> symbol(const std::string& name) const {
    for (int i = 0; i < sections(); ++i) {
      const Elf64_Shdr s = section(i);
      if (s.sh_type != SHT_SYMTAB || !in_bounds(s) || s.sh_link >= uint32_t(sections())) continue;
      const Elf64_Shdr names = section(int(s.sh_link));
      for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        Symbol found{uint32_t(k), {}};
        std::memcpy(&found.entry, data(s) + k * sizeof(Elf64_Sym), sizeof found.entry);
        if (string_at(names, found.entry.st_name) == name) return found;
      }
    }
    return std::nullopt;
  }

 private:
  const std::vector<char>& b_;
};

// One attribute of a .nv.info section: {format, attribute, 16-bit size or value}, then, for
// EIFMT_SVAL, `size` bytes of payload. Attribute codes as cuobjdump -elf names them.
struct NvInfoEntry {
  static constexpr uint8_t kFormatSval = 0x04;
  uint8_t format = 0, attribute = 0;
  uint16_t size_or_value = 0;
  const uint8_t* payload = nullptr;  // the SVAL payload, `size_or_value` bytes; else nullptr
};

// The entries of the .nv.info section `s` of `elf` (in bounds), up to the first one cut short.
inline std::vector<NvInfoEntry> nv_info_entries(const ElfView& elf, const Elf64_Shdr& s) {
  std::vector<NvInfoEntry> out;
  if (s.sh_type == SHT_NOBITS) return out;  // no bytes in the file, whatever its size says
  const uint8_t* p = reinterpret_cast<const uint8_t*>(elf.data(s));
  for (uint64_t at = 0; at + 4 <= s.sh_size;) {
    NvInfoEntry e;
    e.format = p[at];
    e.attribute = p[at + 1];
    e.size_or_value = uint16_t(p[at + 2] | p[at + 3] << 8);
    at += 4;
    if (e.format == NvInfoEntry::kFormatSval) {  // else the value lives in the size field
      if (at + e.size_or_value > s.sh_size) break;
      e.payload = p + at;
      at += e.size_or_value;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace tgemm
