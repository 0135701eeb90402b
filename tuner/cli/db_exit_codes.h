// tgemm-db's exit statuses beside 0, so every subcommand answers a script the same way.
#pragma once

namespace tgemm::cli::db_tool {

inline constexpr int kExitError = 1;
inline constexpr int kExitNotTuned = 3;  // a valid question with no answer in the database

}  // namespace tgemm::cli::db_tool
