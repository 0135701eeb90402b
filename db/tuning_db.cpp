#include "db/tuning_db.h"

#include "db/schema_migration.h"

namespace tgemm {

TuningDb::TuningDb(const std::string& path, Mode mode)
    : db_(path, mode, mode == Mode::read_write ? migrate_file : nullptr) {}

}  // namespace tgemm
