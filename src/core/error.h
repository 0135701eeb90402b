// tgemm::Error and a helper that formats and throws it.
#pragma once

#include <fmt/format.h>

#include "tgemm/tgemm.h"

namespace tgemm {

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tgemm
