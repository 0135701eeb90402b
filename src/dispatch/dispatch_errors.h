// The errors libtgemm's dispatcher throws, each a status of the C API (src/dispatch/c_api.cpp
// maps them), and invalid(): an InvalidValueError with a formatted message.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "src/core/error.h"

namespace tgemm {

// Error kinds the C API maps to its status codes; C++ callers see them as tgemm::Error.
struct InvalidValueError : Error {
  using Error::Error;
};
// A call on a handle that holds no dispatcher (a moved-from tgemm::Handle).
struct NotInitializedError : Error {
  using Error::Error;
};
struct NoDeviceError : Error {
  using Error::Error;
};
struct NotSupportedError : Error {
  using Error::Error;
};
struct ExecutionError : Error {
  using Error::Error;
};
// A type combination that neither a tgemm kernel nor the cuBLAS fallback computes.
struct TypeNotSupportedError : Error {
  using Error::Error;
};
// A call on a capturing stream that needs work the capture forbids; prepare() does it ahead.
struct NotPreparedError : Error {
  using Error::Error;
};
// The workspace the user lent (set_workspace) is smaller than a problem needs.
struct WorkspaceTooSmallError : Error {
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void invalid(fmt::format_string<Args...> format, Args&&... args) {
  throw InvalidValueError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tgemm
