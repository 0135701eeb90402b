// What a cubin read from a tuning database must be before the driver loads it: a database is
// code, and a checksum stored beside the bytes proves only that they were not changed by
// accident.
#pragma once

#include <string>
#include <vector>

namespace tgemm {

// Why `cubin` is not an ELF for NVIDIA CUDA built for `arch` ("sm_90"; an sm_90a cubin is
// sm_90's) that defines every kernel in `entries`; "" when it is.
std::string cubin_problem(const std::vector<char>& cubin, const std::string& arch,
                          const std::vector<std::string>& entries);

}  // namespace tgemm
