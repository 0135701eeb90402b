// The code hash of a cubin: a hash of what decides how it runs (its instructions and the
// launch resources the driver reads beside them), independent of the source text it came
// from. Two compiles whose code hashes match run the same machine code with the same
// resources, so a time measured with one holds for the other: a template edit that changes
// no instruction (a comment, a helper moved or renamed) changes no tuning.
#pragma once

#include <string>
#include <vector>

namespace tgemm {

// A stable hash (src/core/hash.h) over, in section-name order:
//  - the ELF header's e_flags (the SM and ABI the code is for);
//  - each code section (.text, .text.<kernel>): its bytes, flags and register count;
//  - the data the code reads or sizes: .nv.constant*, .nv.global*, .nv.shared.*, .nv.local.*
//    (sizes; bytes where the file holds them);
//  - the .nv.info sections: each kernel's launch attributes (parameter layout, launch
//    bounds, cluster shape, registers, stack), which the driver applies at launch;
//  - the relocations of those sections.
// Symbols in .nv.info and relocations are named, not numbered: their indices follow the
// order kernels are defined in, which a refactor may change. Left out: debug sections, notes
// (tool versions, options), symbol and string tables, the call graph. "" when `cubin` is not
// a 64-bit ELF.
std::string cubin_code_hash(const std::vector<char>& cubin);

}  // namespace tgemm
