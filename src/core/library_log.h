// The library's log: what libtgemm and its database reader warn about goes to standard error,
// never to standard output (which belongs to the application), with the control characters
// of every message escaped (printable()). The logger is named "tgemm" in spdlog's registry, so
// a tool's spdlog::set_level sets its level too.
#pragma once

#include <spdlog/logger.h>

namespace tgemm {

spdlog::logger& library_log();

}  // namespace tgemm
