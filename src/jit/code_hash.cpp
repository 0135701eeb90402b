#include "src/jit/code_hash.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "src/core/hash.h"
#include "src/jit/elf_view.h"

namespace tgemm {

namespace {

constexpr uint8_t kAttrParamCbank = 0x0a;  // EIATTR_PARAM_CBANK: {symbol, offset and size}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A section whose bytes or size decide how the code runs (see cubin_code_hash).
bool is_code_or_data(std::string_view name) {
  return name == ".text" || starts_with(name, ".text.") || starts_with(name, ".nv.constant") ||
         starts_with(name, ".nv.global") || starts_with(name, ".nv.shared.") ||
         starts_with(name, ".nv.local.") || name == ".nv.info" || starts_with(name, ".nv.info.");
}

// The relocations of a code or data section, or false.
bool is_relocation_of_code(std::string_view name) {
  if (starts_with(name, ".rela")) return is_code_or_data(name.substr(5));
  return starts_with(name, ".rel") && is_code_or_data(name.substr(4));
}

std::string symbol_text(const ElfView& elf, const Elf64_Shdr& symtab, uint64_t index) {
  const std::string name = elf.symbol_name(symtab, index);
  return name.empty() ? fmt::format("#{}", index) : "@" + name;
}

std::string hex(const uint8_t* bytes, size_t size) {
  std::string out;
  for (size_t i = 0; i < size; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

// A .nv.info section as text lines. In the kernel-independent .nv.info every attribute is
// {symbol, value}; in a kernel's .nv.info.<kernel> only the parameter bank names a symbol.
// The global section's lines are sorted: their order follows the symbol order.
std::string nv_info_text(const ElfView& elf, const Elf64_Shdr& s, bool global) {
  const Elf64_Shdr symtab =
      s.sh_link < uint32_t(elf.sections()) ? elf.section(int(s.sh_link)) : Elf64_Shdr{};
  std::vector<std::string> lines;
  for (const NvInfoEntry& e : nv_info_entries(elf, s)) {
    std::string line = fmt::format("{:02x} {:02x} {}", e.format, e.attribute, e.size_or_value);
    size_t from = 0;
    if (e.payload && e.size_or_value >= 4 && (global || e.attribute == kAttrParamCbank)) {
      uint32_t symbol;
      std::memcpy(&symbol, e.payload, sizeof symbol);
      line += " " + symbol_text(elf, symtab, symbol);
      from = sizeof symbol;
    }
    if (e.payload) line += " " + hex(e.payload + from, e.size_or_value - from);
    lines.push_back(std::move(line));
  }
  if (global) std::sort(lines.begin(), lines.end());
  return fmt::format("{}\n", fmt::join(lines, "\n"));
}

// A REL or RELA section as text lines: offset, type, symbol name and addend.
std::string relocations_text(const ElfView& elf, const Elf64_Shdr& s) {
  const Elf64_Shdr symtab =
      s.sh_link < uint32_t(elf.sections()) ? elf.section(int(s.sh_link)) : Elf64_Shdr{};
  const size_t size = s.sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
  std::string out;
  for (uint64_t at = 0; at + size <= s.sh_size; at += size) {
    Elf64_Rela r = {};
    std::memcpy(&r, elf.data(s) + at, size);
    out += fmt::format("{} {} {} {}\n", r.r_offset, ELF64_R_TYPE(r.r_info),
                       symbol_text(elf, symtab, ELF64_R_SYM(r.r_info)), r.r_addend);
  }
  return out;
}

// One section's part of the hash: its name, type and size, then what it holds.
std::string section_text(const ElfView& elf, const Elf64_Shdr& s, const std::string& name) {
  std::string out = fmt::format("{} type {} size {}", name, s.sh_type, s.sh_size);
  // A code section's flags hold its barrier count, the top byte of sh_info its registers
  // (the rest of sh_info is a symbol index).
  if (s.sh_flags & SHF_EXECINSTR)
    out += fmt::format(" flags {:x} registers {}", s.sh_flags, s.sh_info >> 24);
  out += "\n";
  if (s.sh_type == SHT_NOBITS) return out;
  if (name == ".nv.info" || starts_with(name, ".nv.info."))
    return out + nv_info_text(elf, s, name == ".nv.info");
  if (s.sh_type == SHT_REL || s.sh_type == SHT_RELA) return out + relocations_text(elf, s);
  return out.append(elf.data(s), s.sh_size);
}

}  // namespace

std::string cubin_code_hash(const std::vector<char>& cubin) {
  const ElfView elf(cubin);
  if (!elf.valid()) return "";
  std::vector<std::pair<std::string, std::string>> parts;  // section name, its text
  for (int i = 0; i < elf.sections(); ++i) {
    const Elf64_Shdr s = elf.section(i);
    const std::string name = elf.section_name(s);
    if (!is_code_or_data(name) && !is_relocation_of_code(name)) continue;
    parts.emplace_back(name, elf.in_bounds(s) ? section_text(elf, s, name) : name + " cut\n");
  }
  std::sort(parts.begin(), parts.end());
  std::string all = fmt::format("e_flags {:x}\n", elf.header().e_flags);
  for (const auto& [name, text] : parts) all += fmt::format("{}\n{}", text.size(), text);
  return stable_hash(all);
}

}  // namespace tgemm
