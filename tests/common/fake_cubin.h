// A minimal cubin as a tuning database must hold one: an ELF for NVIDIA CUDA built for `arch`
// that defines `entry`, with `payload` as its code, so tests can store distinct cubins without
// NVRTC and the database still hands them out (cubin_problem passes them).
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"

namespace tgemm::testing {

inline std::vector<char> fake_cubin(const std::string& arch = "sm_90",
                                    const std::string& entry = "sgemm_simt_kernel",
                                    const std::vector<char>& payload = {'c', 'o', 'd', 'e'}) {
  const std::string shstrtab = std::string("\0.shstrtab\0.strtab\0.symtab\0.text", 33);
  const std::string strtab = std::string(1, '\0') + entry + '\0';
  Elf64_Sym symbols[2] = {};
  symbols[1].st_name = 1;
  symbols[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  symbols[1].st_shndx = 4;
  symbols[1].st_size = payload.size();
  std::vector<char> out(sizeof(Elf64_Ehdr));
  auto place = [&out](const void* data, size_t size) {
    const size_t at = out.size();
    out.insert(out.end(), static_cast<const char*>(data), static_cast<const char*>(data) + size);
    return at;
  };
  const size_t shstrtab_at = place(shstrtab.data(), shstrtab.size());
  const size_t strtab_at = place(strtab.data(), strtab.size());
  const size_t symtab_at = place(symbols, sizeof symbols);
  const size_t text_at = place(payload.data(), payload.size());
  Elf64_Shdr sections[5] = {};
  sections[1] = {1, SHT_STRTAB, 0, 0, shstrtab_at, shstrtab.size(), 0, 0, 1, 0};
  sections[2] = {11, SHT_STRTAB, 0, 0, strtab_at, strtab.size(), 0, 0, 1, 0};
  sections[3] = {19, SHT_SYMTAB, 0, 0, symtab_at, sizeof symbols, 2, 1, 8, sizeof(Elf64_Sym)};
  sections[4] = {27, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, text_at, payload.size(), 0, 0, 128,
                 0};
  const size_t sections_at = place(sections, sizeof sections);
  Elf64_Ehdr header = {};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_ident[EI_OSABI] = 0x41;  // CUDA
  header.e_ident[EI_ABIVERSION] = 8;
  header.e_type = ET_EXEC;
  header.e_machine = EM_CUDA;
  header.e_version = EV_CURRENT;
  header.e_flags = uint32_t(arch_number(arch)) << 8;
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_shoff = sections_at;
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = 5;
  header.e_shstrndx = 1;
  std::memcpy(out.data(), &header, sizeof header);
  return out;
}

// `bytes` as an SQL blob literal, X'...'.
inline std::string sql_blob(const std::vector<char>& bytes) {
  std::string hex = "X'";
  for (char b : bytes) {
    static const char digits[] = "0123456789abcdef";
    hex += digits[(static_cast<unsigned char>(b) >> 4) & 0xf];
    hex += digits[static_cast<unsigned char>(b) & 0xf];
  }
  return hex + "'";
}

}  // namespace tgemm::testing
