// A GPU as a database row knows it (name, arch, SM count), for tests that store or match
// devices without one.
#pragma once

#include <string>

#include "src/core/device_info.h"

namespace tgemm::testing {

inline DeviceInfo device(const std::string& name, const std::string& arch, int sm_count) {
  DeviceInfo d;
  d.name = name;
  d.arch = arch;
  d.sm_count = sm_count;
  return d;
}

}  // namespace tgemm::testing
