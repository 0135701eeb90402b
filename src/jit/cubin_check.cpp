#include "src/jit/cubin_check.h"

#include <fmt/format.h>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/jit/elf_view.h"

namespace tgemm {

namespace {

// The SM a cubin is built for, from its ELF header: e_flags bits 8-15 from ELF ABI version 8
// (CUDA 12.8 on), bits 0-7 before.
int cubin_sm(const Elf64_Ehdr& header) {
  const unsigned abi = header.e_ident[EI_ABIVERSION];
  return int(abi >= 8 ? (header.e_flags >> 8) & 0xff : header.e_flags & 0xff);
}

}  // namespace

std::string cubin_problem(const std::vector<char>& cubin, const std::string& arch,
                          const std::vector<std::string>& entries) {
  if (cubin.empty()) return "it is empty";
  const ElfView elf(cubin);
  if (!elf.valid())
    return fmt::format("its {} bytes are not a whole 64-bit ELF file", cubin.size());
  const Elf64_Ehdr header = elf.header();
  // A truncated file loses its last bytes: program headers, section headers or section data.
  const bool program_headers_in_bounds =
      header.e_phentsize == sizeof(Elf64_Phdr) && header.e_phoff <= cubin.size() &&
      header.e_phnum <= (cubin.size() - header.e_phoff) / sizeof(Elf64_Phdr);
  bool sections_in_bounds = true;
  for (int i = 0; i < elf.sections(); ++i) sections_in_bounds &= elf.in_bounds(elf.section(i));
  if (!program_headers_in_bounds || !sections_in_bounds)
    return fmt::format("its {} bytes are not a whole 64-bit ELF file", cubin.size());
  if (header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_machine != EM_CUDA)
    return fmt::format("it is an ELF file for machine {}, not NVIDIA CUDA ({})", header.e_machine,
                       EM_CUDA);
  int sm = 0;
  try {
    sm = arch_number(arch);
  } catch (const Error& e) {
    return e.what();
  }
  if (cubin_sm(header) != sm)
    return fmt::format("it is built for sm_{}, not {}", cubin_sm(header), arch);
  for (const std::string& entry : entries) {
    const auto symbol = elf.symbol(entry);
    if (!symbol || ELF64_ST_TYPE(symbol->entry.st_info) != STT_FUNC ||
        symbol->entry.st_shndx == SHN_UNDEF || symbol->entry.st_shndx >= elf.sections())
      return fmt::format("it defines no kernel '{}'", entry);
  }
  return "";
}

}  // namespace tgemm
