// A config that comes from outside this build (a tuning database, a file) is checked against
// its family before any host code reads its parameters: a database is input, and a zero where
// the host side divides would take the process down.
#pragma once

#include <optional>
#include <string>

#include "src/core/kernel_config.h"

namespace tgemm {

// Why `config` is not a config its family can run on `arch` ("sm_90"), or nullopt. It must
// name a registered family; each parameter once, a tunable the family's template declares,
// up to INT32_MAX and from 0 (from 1 where the space lists no value below 1); the family's
// shipped search space (embedded in the library) must hold it on the arch's limits, a
// parameter the config leaves out taking the template's default; and the host side must
// answer for it (tile, resources, entries, and launches for problems of every type, layout
// and alignment it computes). Thread-safe.
std::optional<std::string> stored_config_rejection(const KernelConfig& config,
                                                   const std::string& arch);

}  // namespace tgemm
