// The search spaces' integer expression language (configs/spaces/*.yaml; the grammar is stated
// in search_space.h): C's integer semantics on muParser, a check of the documented grammar with
// readable violations, and undefined values that say why they are undefined.
#pragma once

#include <muParser.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace tgemm::detail {

// muParser computes in doubles; these operators give C's integer semantics instead, so
// "(BN / TN) % WARP_N" means what the kernel's static_assert means. Every value is an
// integer held exactly in a double; NaN marks "undefined" and spreads through every
// operator, so the caller can tell it apart from false. The NaN's payload says why
// (division or modulo by zero, or a result beyond 2^53): the operators pass a NaN operand
// on unchanged and never compute with it.
enum class Undefined : uint8_t { none, division_by_zero, overflow, host_refused };

constexpr uint64_t kQuietNan = 0x7ff8000000000000ULL;
constexpr double undefined(Undefined cause) {
  return std::bit_cast<double>(kQuietNan | uint64_t(cause));
}
Undefined cause_of(double v);

// From 2^53 on doubles stop holding every integer: values stay below it, and a sum or
// product that reaches it (even after rounding) is an overflow.
constexpr int64_t kExactLimit = int64_t{1} << 53;

// The integer `v` holds, false when it is undefined or beyond 2^53.
bool as_int(double v, int64_t* out);
// `v` as a rejection shows it: the integer, or "undefined".
std::string show_value(double v);

// Functions the expression language offers (see IntExprParser::InitFun).
inline constexpr const char* kFunctionNames[] = {"min", "max"};

// muParser with C's integer operators (and their precedence), min and max, and decimal integer
// literals only.
class IntExprParser final : public mu::ParserBase {
 public:
  IntExprParser();
  void InitCharSets() override;
  void InitFun() override;
  void InitConst() override {}
  void InitOprt() override;
};

// Letters, digits and _, not starting with a digit.
bool is_identifier(const std::string& name);

struct Identifier {
  std::string name;
  bool called;  // followed by '(': a function, not a variable
};

// Identifiers of `expression` in order of first appearance: the values a rejection shows.
std::vector<Identifier> identifiers_in(const std::string& expression);

// The first way `expression` leaves the documented grammar (search_space.h), or "" when it is
// inside: muParser alone would also take ',', "?:", assignments and strings.
std::string grammar_violation(const std::string& expression);

}  // namespace tgemm::detail
