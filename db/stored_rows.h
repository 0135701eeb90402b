// The row structs as stored: the SELECT lists that read problems, trials and binaries, and the
// decoders that build Problem, TrialResult and BinaryRecord from them by column name. A value
// a decoder cannot use makes its row a BadRow (db/sqlite_statement.h), never a trusted value.
#pragma once

#include <optional>
#include <string>

#include "db/sqlite_statement.h"
#include "src/core/measured_with.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/core/tuning_records.h"

namespace tgemm {

// A problems row p, as problem_at reads it.
extern const char* const kProblemColumns;
// A trials row t with its kernels row kr, as trial_at and measured_with_at read it.
extern const char* const kTrialColumns;
// A binaries row b, as binary_at reads it.
extern const char* const kBinaryColumns;

// SQL for "a finite number" after a value: SQLite stores infinities (never a NaN).
inline constexpr const char* kFiniteReal =
    "BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308";
// The trials (columns unqualified) whose time is a measurement: ok, positive and finite.
std::string measured_trials();

Problem problem_at(const Statement& s);
TrialResult trial_at(const Statement& s);
MeasuredWith measured_with_at(const Statement& s);
// A cubin that does not match its checksum or is no cubin for its arch with its entry comes
// back with checksum_ok false and no bytes.
BinaryRecord binary_at(const Statement& s);
// The binary of the row `s` is on, or nullopt (and a warning) when the row is bad: for the
// tuner and the dispatcher, a binary they do not have.
std::optional<BinaryRecord> checked_binary_at(const Statement& s);

}  // namespace tgemm
