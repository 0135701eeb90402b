#include "src/templates/search_space.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <muParser.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "src/core/error.h"
#include "src/core/yaml_input.h"
#include "src/jit/kernel_source.h"
#include "src/templates/template_registry.h"

namespace tgemm {

namespace {

// Names the expressions may use besides the space's own; filled from ArchLimits.
// ARCH is the compute capability as a number (sm_80 -> 80), for features an arch lacks.
constexpr const char* kArchLimitNames[] = {"MAX_THREADS_PER_BLOCK", "MAX_THREADS_PER_SM",
                                           "REGS_PER_SM",           "SMEM_PER_BLOCK_OPTIN",
                                           "SMEM_PER_SM",           "ARCH"};
constexpr size_t kArchLimitCount = std::size(kArchLimitNames);
// Names whose values the family's host side gives (GemmTemplate::block_resources), so that a
// block's threads and dynamic shared memory are computed in one place.
constexpr const char* kHostNames[] = {"THREADS", "DYNAMIC_SMEM"};
constexpr size_t kHostCount = std::size(kHostNames);
// Functions the expression language offers (see IntExprParser::InitFun).
constexpr const char* kFunctionNames[] = {"min", "max"};

void arch_limit_values(const ArchLimits& limits, double* out) {
  out[0] = limits.max_threads_per_block;
  out[1] = limits.max_threads_per_sm;
  out[2] = limits.regs_per_sm;
  out[3] = limits.smem_per_block_optin;
  out[4] = limits.smem_per_sm;
  out[5] = limits.arch.empty() ? 0 : arch_number(limits.arch);  // unnamed: no features
}

// ---- Integer expressions --------------------------------------------------------------
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
Undefined cause_of(double v) {
  if (!std::isnan(v)) return Undefined::none;
  const uint64_t payload = std::bit_cast<uint64_t>(v) & 0xf;
  if (payload == uint64_t(Undefined::overflow)) return Undefined::overflow;
  if (payload == uint64_t(Undefined::host_refused)) return Undefined::host_refused;
  return Undefined::division_by_zero;
}
// From 2^53 on doubles stop holding every integer: values stay below it, and a sum or
// product that reaches it (even after rounding) is an overflow.
constexpr int64_t kExactLimit = int64_t{1} << 53;
constexpr double kExactLimitDouble = double(kExactLimit);

bool as_int(double v, int64_t* out) {
  if (!(std::fabs(v) < kExactLimitDouble)) return false;  // also false for NaN
  *out = static_cast<int64_t>(v);
  return true;
}

// When either operand is undefined, the operators pass it on (the left one first).
bool either_nan(double a, double b) { return std::isnan(a) || std::isnan(b); }
double first_nan(double a, double b) { return std::isnan(a) ? a : b; }

double checked(double v) {
  return std::fabs(v) < kExactLimitDouble ? v : undefined(Undefined::overflow);
}
double add(double a, double b) { return either_nan(a, b) ? first_nan(a, b) : checked(a + b); }
double subtract(double a, double b) { return either_nan(a, b) ? first_nan(a, b) : checked(a - b); }
double multiply(double a, double b) { return either_nan(a, b) ? first_nan(a, b) : checked(a * b); }
double divide(double a, double b) {
  if (either_nan(a, b)) return first_nan(a, b);
  const auto x = int64_t(a), y = int64_t(b);  // exact: every value is below 2^53
  if (y == 0) return undefined(Undefined::division_by_zero);
  return double(x / y);  // NOLINT(bugprone-integer-division): C truncates toward zero
}
double modulo(double a, double b) {
  if (either_nan(a, b)) return first_nan(a, b);
  const auto x = int64_t(a), y = int64_t(b);
  if (y == 0) return undefined(Undefined::division_by_zero);
  return double(x % y);  // C: the sign follows the dividend
}
double compare(double a, double b, bool result) {
  return either_nan(a, b) ? first_nan(a, b) : double(result);
}
double less(double a, double b) { return compare(a, b, a < b); }
double less_equal(double a, double b) { return compare(a, b, a <= b); }
double greater(double a, double b) { return compare(a, b, a > b); }
double greater_equal(double a, double b) { return compare(a, b, a >= b); }
double equal(double a, double b) { return compare(a, b, a == b); }
double not_equal(double a, double b) { return compare(a, b, a != b); }
// muParser evaluates both sides; a decided left side wins as C's short circuit would, so
// "TM != 0 && BM % TM == 0" is false, not undefined, for TM = 0.
double logical_and(double a, double b) {
  if (a == 0) return 0;
  return either_nan(a, b) ? first_nan(a, b) : double(b != 0);
}
double logical_or(double a, double b) {
  if (!std::isnan(a) && a != 0) return 1;
  return either_nan(a, b) ? first_nan(a, b) : double(b != 0);
}
double logical_not(double a) { return std::isnan(a) ? a : double(a == 0); }
double negate(double a) { return std::isnan(a) ? a : -a; }
double minimum(double a, double b) { return either_nan(a, b) ? first_nan(a, b) : std::min(a, b); }
double maximum(double a, double b) { return either_nan(a, b) ? first_nan(a, b) : std::max(a, b); }

// Decimal integer literals only: "1.5" or "1e3" do not parse, so no value is ever fractional.
int read_integer_literal(const char* text, int* pos, double* value) {
  int64_t v = 0;
  const char* end = text + std::strspn(text, "0123456789");
  auto [ptr, ec] = std::from_chars(text, end, v);
  if (ptr == text || ec != std::errc() || v >= kExactLimit) return 0;
  if (*ptr == '.' || std::isalpha(static_cast<unsigned char>(*ptr)) || *ptr == '_') return 0;
  *pos += int(ptr - text);
  *value = double(v);
  return 1;
}

class IntExprParser final : public mu::ParserBase {
 public:
  IntExprParser() {
    AddValIdent(read_integer_literal);
    InitCharSets();
    InitFun();
    InitOprt();
  }

  void InitCharSets() override {
    DefineNameChars("0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    DefineOprtChars("+-*/%<>=!&|");
    DefineInfixOprtChars("-!");
  }
  void InitFun() override {
    DefineFun("min", minimum);
    DefineFun("max", maximum);
  }
  void InitConst() override {}
  void InitOprt() override {
    // The built-in operators compute in floating point; ours replace them. (A constant part
    // muParser folds when it parses is computed by these functions too, NaN payload and all.)
    EnableBuiltInOprt(false);
    DefineInfixOprt("-", negate);
    DefineInfixOprt("!", logical_not);
    // C precedence: || < && < == != < relational < + - < * / %.
    DefineOprt("||", logical_or, mu::prLOR, mu::oaLEFT, true);
    DefineOprt("&&", logical_and, mu::prLAND, mu::oaLEFT, true);
    DefineOprt("==", equal, mu::prLOGIC, mu::oaLEFT, true);
    DefineOprt("!=", not_equal, mu::prLOGIC, mu::oaLEFT, true);
    DefineOprt("<", less, mu::prCMP, mu::oaLEFT, true);
    DefineOprt("<=", less_equal, mu::prCMP, mu::oaLEFT, true);
    DefineOprt(">", greater, mu::prCMP, mu::oaLEFT, true);
    DefineOprt(">=", greater_equal, mu::prCMP, mu::oaLEFT, true);
    DefineOprt("+", add, mu::prADD_SUB, mu::oaLEFT, true);
    DefineOprt("-", subtract, mu::prADD_SUB, mu::oaLEFT, true);
    DefineOprt("*", multiply, mu::prMUL_DIV, mu::oaLEFT, true);
    DefineOprt("/", divide, mu::prMUL_DIV, mu::oaLEFT, true);
    DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
  }
};

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

struct Identifier {
  std::string name;
  bool called;  // followed by '(': a function, not a variable
};

// Identifiers of `expression` in order of first appearance: the values a rejection shows.
std::vector<Identifier> identifiers_in(const std::string& expression) {
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  std::vector<Identifier> found;
  for (size_t i = 0; i < expression.size();) {
    const unsigned char c = expression[i];
    if (std::isalpha(c) || c == '_') {
      size_t end = i;
      while (end < expression.size() && is_name_char(expression[end])) ++end;
      size_t next = expression.find_first_not_of(" \t", end);
      Identifier id{expression.substr(i, end - i),
                    next != std::string::npos && expression[next] == '('};
      if (std::none_of(found.begin(), found.end(),
                       [&](const Identifier& f) { return f.name == id.name; }))
        found.push_back(std::move(id));
      i = end;
    } else if (std::isdigit(c)) {
      while (i < expression.size() && is_name_char(expression[i])) ++i;
    } else {
      ++i;
    }
  }
  return found;
}

// ---- The documented grammar ----------------------------------------------------------
// muParser also knows ',' (several results, the last one wins), "?:", assignment and
// strings. Expressions are checked against the language of configs/spaces/*.yaml first:
//   expr    := unary (binary-op unary)*          binary-op: || && == != < <= > >= + - * / %
//   unary   := ('-' | '!')* primary
//   primary := integer | name | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
// (precedence does not change what is accepted; muParser applies C's when it parses).

constexpr const char* kAllowed =
    "allowed: + - * / % ( ) == != < <= > >= && || ! min() max(), integers and names";

struct Token {
  enum Kind { number, name, binary, unary_only, open, close, comma, end } kind;
  std::string text;
  size_t column;  // 1-based
};

class GrammarCheck {
 public:
  explicit GrammarCheck(const std::string& expression) : text_(expression) {}

  // The first way `expression` leaves the grammar, or "" when it is inside.
  std::string violation() {
    try {
      tokenize();
      if (tokens_.size() == 1) return "the expression is empty";
      expression();
      const Token& t = tokens_[next_];
      if (t.kind == Token::comma) return comma_outside(t);
      if (t.kind == Token::close)
        return fmt::format("')' at column {} has no matching '('", t.column);
      if (t.kind != Token::end) return unexpected(t, "where an operator or the end belongs");
    } catch (const Violation& v) {
      return v.why;
    }
    return "";
  }

 private:
  struct Violation {
    std::string why;
  };

  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  void tokenize() {
    static constexpr std::string_view kTwoChar[] = {"||", "&&", "==", "!=", "<=", ">="};
    for (size_t i = 0; i < text_.size();) {
      const char c = text_[i];
      const size_t column = i + 1;
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || is_name_char(c)) {
        size_t end = i;
        while (end < text_.size() && is_name_char(text_[end])) ++end;
        std::string word = text_.substr(i, end - i);
        const bool number = std::isdigit(static_cast<unsigned char>(c));
        if (number && word.find_first_not_of("0123456789") != std::string::npos)
          throw Violation{fmt::format("'{}' at column {} is not an integer", word, column)};
        tokens_.push_back({number ? Token::number : Token::name, std::move(word), column});
        i = end;
      } else if (std::find(std::begin(kTwoChar), std::end(kTwoChar),
                           std::string_view(text_).substr(i, 2)) != std::end(kTwoChar)) {
        tokens_.push_back({Token::binary, text_.substr(i, 2), column});
        i += 2;
      } else if (std::string_view("+-*/%<>!(),").find(c) != std::string_view::npos) {
        const Token::Kind kind = c == '('   ? Token::open
                                 : c == ')' ? Token::close
                                 : c == ',' ? Token::comma
                                 : c == '!' ? Token::unary_only
                                            : Token::binary;
        tokens_.push_back({kind, std::string(1, c), column});
        ++i;
      } else {
        throw Violation{fmt::format("'{}' at column {} is not part of it{} ({})", c, column,
                                    c == '=' ? ", compare with ==" : "", kAllowed)};
      }
    }
    tokens_.push_back({Token::end, "", text_.size() + 1});
  }

  const Token& take() { return tokens_[next_++]; }
  const Token& peek() const { return tokens_[next_]; }

  static std::string comma_outside(const Token& t) {
    return fmt::format(
        "',' at column {}: a comma only separates the arguments of min() and max() (join "
        "conditions with &&)",
        t.column);
  }
  static std::string unexpected(const Token& t, const char* where) {
    return fmt::format("'{}' at column {} {}", t.text, t.column, where);
  }

  void expression() {
    // Each nesting level recurses; a bound keeps a hostile file from overflowing the stack.
    if (++depth_ > kMaxDepth)
      throw Violation{
          fmt::format("nested deeper than {} levels at column {}", kMaxDepth, peek().column)};
    unary();
    while (peek().kind == Token::binary) {
      take();
      unary();
    }
    --depth_;
  }

  void unary() {
    while (peek().text == "-" || peek().kind == Token::unary_only) take();
    primary();
  }

  void primary() {
    const Token& t = take();
    switch (t.kind) {
      case Token::number:
        return;
      case Token::name:
        if (peek().kind == Token::open) return call(t);
        if (is_function(t.text))
          throw Violation{fmt::format("uses function '{}' without arguments", t.text)};
        return;
      case Token::open:
        expression();
        if (peek().kind == Token::comma) throw Violation{comma_outside(peek())};
        if (peek().kind != Token::close)
          throw Violation{peek().kind == Token::end
                              ? fmt::format("missing ')' for the '(' at column {}", t.column)
                              : unexpected(peek(), "where ')' belongs")};
        take();
        return;
      case Token::end:
        throw Violation{fmt::format(
            "the expression ends early: an operand is missing after column {}", text_.size())};
      default:
        throw Violation{unexpected(t, "where a number, a name or '(' belongs")};
    }
  }

  static bool is_function(const std::string& name) {
    return std::find(std::begin(kFunctionNames), std::end(kFunctionNames), name) !=
           std::end(kFunctionNames);
  }

  void call(const Token& function) {
    if (!is_function(function.text))
      throw Violation{fmt::format("uses unknown function '{}' (functions: {})", function.text,
                                  fmt::join(kFunctionNames, ", "))};
    const Token& open = take();
    size_t arguments = 0;
    if (peek().kind != Token::close) {
      do {
        if (arguments++ > 0) take();  // the comma
        expression();
      } while (peek().kind == Token::comma);
    }
    if (peek().kind != Token::close)
      throw Violation{peek().kind == Token::end
                          ? fmt::format("missing ')' for the '(' at column {}", open.column)
                          : unexpected(peek(), "where ',' or ')' belongs")};
    take();
    if (arguments != 2)
      throw Violation{fmt::format("{}() takes 2 arguments, not {} (column {})", function.text,
                                  arguments, function.column)};
  }

  static constexpr int kMaxDepth = 100;
  const std::string& text_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
  int depth_ = 0;
};

std::string show_value(double v) {
  int64_t i = 0;
  return as_int(v, &i) ? std::to_string(i) : std::string("undefined");
}

// An expression that failed to parse or to name known variables, located for load().
struct ExpressionError {
  bool in_derived;
  size_t index;
  std::string message;
};

}  // namespace

namespace detail {

// A space's family as its expressions see it: the host side that gives THREADS and
// DYNAMIC_SMEM (null for a name no family is registered under: then no expression may use
// them), and the template's defaults of the tunables the space does not list.
struct SpaceHost {
  const GemmTemplate* family = nullptr;
  std::string template_name;
  std::map<std::string, int64_t> defaults;
};

// The space's expressions parsed once, with the variable storage their parsers read:
// slots [0, P) parameters, then the arch limits, then the host side's values, then the derived
// values.
class SpaceEvaluator {
 public:
  struct Verdict {
    int constraint = -1;  // first failing constraint, -1 when all hold
    int derived = -1;     // first undefined derived value when all constraints hold
    // Why the failing constraint or the derived value is undefined; none when it is false.
    Undefined cause = Undefined::none;
  };

  SpaceEvaluator(const std::vector<SpaceParameter>& parameters,
                 const std::vector<std::pair<std::string, std::string>>& derived,
                 const std::vector<SpaceConstraint>& constraints, const SpaceHost& host)
      : param_count_(parameters.size()),
        host_offset_(parameters.size() + kArchLimitCount),
        derived_offset_(host_offset_ + (host.family ? kHostCount : 0)),
        slots_(derived_offset_ + derived.size()),
        values_(std::make_unique<double[]>(slots_)),
        family_(host.family) {
    for (const auto& p : parameters) names_.push_back(p.name);
    for (const char* name : kArchLimitNames) names_.push_back(name);
    if (family_)
      for (const char* name : kHostNames) names_.push_back(name);
    for (const auto& d : derived) names_.push_back(d.first);
    for (size_t i = 0; i < param_count_; ++i) values_[i] = double(parameters[i].values.at(0));
    arch_limit_values(arch_limits(kDefaultArch), &values_[param_count_]);
    host_config_.template_name = host.template_name;
    for (const auto& p : parameters) host_config_.params.emplace_back(p.name, 0);
    for (const auto& [name, value] : host.defaults)
      if (!host_config_.has(name)) host_config_.params.emplace_back(name, value);
    if (family_) set_host_values();

    // A derived value may use the parameters, the limits and the derived values above it.
    for (size_t d = 0; d < derived.size(); ++d)
      derived_.push_back(make_parser(derived[d].second, derived_offset_ + d, true, d));
    for (size_t c = 0; c < constraints.size(); ++c)
      constraints_.push_back(make_parser(constraints[c].expression, slots_, false, c));
  }

  double* values() { return values_.get(); }
  void set_limits(const ArchLimits& limits) { arch_limit_values(limits, &values_[param_count_]); }

  Verdict check() {
    if (family_) set_host_values();
    for (size_t d = 0; d < derived_.size(); ++d)
      values_[derived_offset_ + d] = derived_[d].parser->Eval();
    Verdict verdict;
    for (size_t c = 0; c < constraints_.size(); ++c) {
      const double result = constraints_[c].parser->Eval();
      if (result == 0 || std::isnan(result)) {
        verdict.constraint = int(c);
        verdict.cause = cause_of(result);
        return verdict;
      }
    }
    // A derived value that divides by zero would not compile even if no constraint uses it.
    for (size_t d = 0; d < derived_.size(); ++d)
      if (std::isnan(values_[derived_offset_ + d])) {
        verdict.derived = int(d);
        verdict.cause = cause_of(values_[derived_offset_ + d]);
        return verdict;
      }
    return verdict;
  }

  // "BM=64, BK=8, THREADS=256" for the variables a constraint or derived value reads.
  std::string shown_values(bool in_derived, size_t index) const {
    const Expression& e = in_derived ? derived_[index] : constraints_[index];
    std::string text;
    for (size_t slot : e.shown_slots) {
      if (!text.empty()) text += ", ";
      text += fmt::format("{}={}", names_[slot], show_value(values_[slot]));
    }
    return text;
  }

  size_t derived_offset() const { return derived_offset_; }
  size_t host_offset() const { return host_offset_; }
  size_t host_count() const { return derived_offset_ - host_offset_; }

 private:
  struct Expression {
    std::unique_ptr<IntExprParser> parser;
    std::vector<size_t> shown_slots;
  };

  // Defines only the first `visible` slots, so a name used before it is declared is unknown.
  // Evaluates once (muParser parses on the first Eval) and, for a derived value, stores it
  // for the expressions below.
  Expression make_parser(const std::string& expression, size_t visible, bool in_derived,
                         size_t index) {
    auto error = [&](std::string message) {
      return ExpressionError{in_derived, index, std::move(message)};
    };
    if (expression.find('.') != std::string::npos)
      throw error(fmt::format("'{}' is not an integer expression (no decimal points)", expression));
    if (std::string why = GrammarCheck(expression).violation(); !why.empty())
      throw error(fmt::format("'{}' is outside the expression language: {}", expression, why));
    Expression e{std::make_unique<IntExprParser>(), {}};
    for (const auto& [name, called] : identifiers_in(expression)) {
      if (called) continue;  // min or max: GrammarCheck refused any other call
      auto it = std::find(names_.begin(), names_.begin() + long(visible), name);
      if (it == names_.begin() + long(visible)) {
        std::vector<std::string> known(names_.begin(), names_.begin() + long(visible));
        throw error(fmt::format("'{}' uses unknown variable '{}' (known: {})", expression, name,
                                fmt::join(known, ", ")));
      }
      e.shown_slots.push_back(size_t(it - names_.begin()));
    }
    try {
      for (size_t slot = 0; slot < visible; ++slot)
        e.parser->DefineVar(names_[slot], &values_[slot]);
      e.parser->SetExpr(expression);
      const double value = e.parser->Eval();
      if (in_derived) values_[visible] = value;
    } catch (const mu::ParserError& pe) {
      throw error(fmt::format("'{}' does not parse: {}", expression, pe.GetMsg()));
    }
    return e;
  }

  // The host side's values of the current parameters; undefined (host_refused) where it
  // throws for them.
  void set_host_values() {
    for (size_t i = 0; i < param_count_; ++i) host_config_.params[i].second = int64_t(values_[i]);
    try {
      const BlockResources r = family_->block_resources(host_config_);
      values_[host_offset_] = double(r.threads);
      values_[host_offset_ + 1] = double(r.dynamic_smem_bytes);
    } catch (const std::exception&) {
      values_[host_offset_] = values_[host_offset_ + 1] = undefined(Undefined::host_refused);
    }
  }

  size_t param_count_;
  size_t host_offset_;
  size_t derived_offset_;
  size_t slots_;
  std::unique_ptr<double[]> values_;  // the parsers hold pointers into this array
  const GemmTemplate* family_;
  // The space's parameters (first, in its order), then the template's defaults of the
  // tunables the space leaves out: what block_resources reads.
  KernelConfig host_config_;
  std::vector<std::string> names_;
  std::vector<Expression> derived_;
  std::vector<Expression> constraints_;
};

}  // namespace detail

// ---- Loading ----------------------------------------------------------------------------

namespace {

class SpaceFileReader {
 public:
  // `path` names the file in messages; `text`, when given, is its content (else it is read).
  SpaceFileReader(const std::string& path, const std::string* text) : path_(path), text_(text) {}

  void read(std::string* template_name, std::vector<SpaceParameter>* parameters,
            std::vector<std::pair<std::string, std::string>>* derived,
            std::vector<SpaceConstraint>* constraints) {
    const YAML::Node root = text_ ? load_yaml_text(*text_, path_, "search-space file")
                                  : load_yaml_file(path_, "search-space file");
    if (root.IsNull()) fail("{}: the search-space file is empty", path_);
    if (!root.IsMap())
      fail("{}:{}: expected a map with template, parameters, derived and constraints", path_,
           line_of(root));
    check_keys(root, {"template", "source", "dtypes", "parameters", "derived", "constraints"},
               "top-level key");
    if (const YAML::Node node = root["source"]) {
      if (!node.IsScalar() || node.Scalar().empty())
        fail("{}:{}: `source:` must be the path of a .cuh file", path_, line_of(node));
      source_ = node.Scalar();
    }

    const YAML::Node tmpl = root["template"];
    if (!tmpl)
      fail("{}:{}: no `template:` (the kernel template this space tunes)", path_, line_of(root));
    if (!tmpl.IsScalar() || !is_identifier(tmpl.Scalar()))
      fail(
          "{}:{}: `template:` must name a template family (the stem of "
          "kernel_templates/<name>.cuh)",
          path_, line_of(tmpl));
    *template_name = tmpl.Scalar();
    read_dtypes(root["dtypes"]);
    template_line_ = line_of(tmpl);

    const YAML::Node params = root["parameters"];
    if (!params) fail("{}:{}: no `parameters:`", path_, line_of(root));
    if (!params.IsMap() || params.size() == 0)
      fail("{}:{}: `parameters:` must be a non-empty map of name -> [values]", path_,
           line_of(params));
    parameters_line_ = line_of(params);
    for (const auto& entry : params) {
      const std::string name = declare_name(entry.first, "parameter");
      parameter_lines_.push_back(line_of(entry.first));
      parameters->push_back({name, read_values(name, entry.second)});
    }

    if (const YAML::Node node = root["derived"]; node && !node.IsNull()) {
      if (!node.IsMap())
        fail("{}:{}: `derived:` must be a map of name -> expression", path_, line_of(node));
      for (const auto& entry : node) {
        const std::string name = declare_name(entry.first, "derived name");
        derived_lines_.push_back(line_of(entry.second));
        derived->emplace_back(name, expression(entry.second, name.c_str()));
      }
    }

    if (const YAML::Node node = root["constraints"]; node && !node.IsNull()) {
      if (!node.IsSequence())
        fail("{}:{}: `constraints:` must be a list of {{expr: .., reason: ..}}", path_,
             line_of(node));
      for (const auto& item : node) {
        if (!item.IsMap())
          fail("{}:{}: a constraint must be {{expr: .., reason: ..}}", path_, line_of(item));
        check_keys(item, {"expr", "reason"}, "key in a constraint");
        if (!item["expr"]) fail("{}:{}: constraint has no `expr`", path_, line_of(item));
        if (!item["reason"]) fail("{}:{}: constraint has no `reason`", path_, line_of(item));
        const YAML::Node reason = item["reason"];
        if (!reason.IsScalar() || reason.Scalar().empty())
          fail("{}:{}: `reason` must be a sentence saying why", path_, line_of(reason));
        constraint_lines_.push_back(line_of(item));
        constraints->push_back({expression(item["expr"], "expr"), reason.Scalar()});
      }
    }
  }

  // `dtypes:` narrows the types the space tunes to those it names, each from the lowest arch
  // given; a space without one tunes every type its family computes (the family's host side
  // says which: GemmTemplate::types_unsupported).
  void read_dtypes(const YAML::Node& node) {
    if (!node) return;
    if (!node.IsMap() || node.size() == 0)
      fail("{}:{}: `dtypes:` must be a map of type -> lowest arch, e.g. {{f16: sm_75}}", path_,
           line_of(node));
    for (const auto& entry : node) {
      const std::string type = entry.first.IsScalar() ? entry.first.Scalar() : "";
      const std::string arch = entry.second.IsScalar() ? entry.second.Scalar() : "";
      try {
        if (parse_gemm_types(type).name() != type) fail("'{}' is not a type's name", type);
        arch_number(arch);
      } catch (const Error& e) {
        fail("{}:{}: dtypes: {}", path_, line_of(entry.first), e.what());
      }
      dtypes_.emplace_back(type, arch);
    }
  }
  const std::vector<std::pair<std::string, std::string>>& dtypes() const { return dtypes_; }
  const std::string& source() const { return source_; }

  int line_of_expression(bool in_derived, size_t index) const {
    return in_derived ? derived_lines_.at(index) : constraint_lines_.at(index);
  }
  int template_line() const { return template_line_; }
  int parameters_line() const { return parameters_line_; }
  int parameter_line(size_t index) const { return parameter_lines_.at(index); }

 private:
  std::string declare_name(const YAML::Node& key, const char* what) {
    std::string name = key.IsScalar() ? key.Scalar() : "";
    if (!is_identifier(name))
      fail("{}:{}: {} '{}' is not an identifier (letters, digits, _)", path_, line_of(key), what,
           key.IsScalar() ? name : "(a list or map)");
    for (const char* reserved : kArchLimitNames)
      if (name == reserved)
        fail("{}:{}: {} '{}' is an arch limit's name", path_, line_of(key), what, name);
    for (const char* reserved : kFunctionNames)
      if (name == reserved)
        fail("{}:{}: {} '{}' is a function's name", path_, line_of(key), what, name);
    auto [it, fresh] = declared_.emplace(name, line_of(key));
    if (!fresh)
      fail("{}:{}: {} '{}' is already declared on line {}", path_, line_of(key), what, name,
           it->second);
    return name;
  }

  std::vector<int64_t> read_values(const std::string& name, const YAML::Node& list) {
    if (!list.IsSequence() || list.size() == 0)
      fail("{}:{}: parameter {} needs a non-empty list of integers, such as [32, 64]", path_,
           line_of(list), name);
    std::vector<int64_t> values;
    for (const auto& item : list) {
      const std::string text = item.IsScalar() ? item.Scalar() : "";
      int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (!item.IsScalar() || item.Tag() == "!" || text.empty() || ec != std::errc() || ptr != end)
        fail("{}:{}: parameter {}: '{}' is not an integer", path_, line_of(item), name,
             item.IsScalar() ? text : "(a list or map)");
      if (v < 0)
        fail(
            "{}:{}: parameter {}: {} is negative; a tunable is a count or size from 0 (the "
            "kernel's -D value)",
            path_, line_of(item), name, v);
      if (v >= kExactLimit)
        fail("{}:{}: parameter {}: {} is beyond 2^53 - 1, where the expressions lose exactness",
             path_, line_of(item), name, v);
      if (std::find(values.begin(), values.end(), v) != values.end())
        fail("{}:{}: parameter {} lists {} twice", path_, line_of(item), name, v);
      values.push_back(v);
    }
    return values;
  }

  std::string expression(const YAML::Node& node, const char* what) {
    if (!node.IsScalar() || node.Scalar().empty())
      fail("{}:{}: `{}` must be an expression such as \"BM % TM == 0\"", path_, line_of(node),
           what);
    return node.Scalar();
  }

  // Unknown and repeated keys are errors: a typo such as `constraint:` must not be ignored.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  const char* what) {
    check_yaml_keys(path_, map, allowed, what);
  }

  std::string path_;
  const std::string* text_;
  std::map<std::string, int> declared_;  // parameter and derived names -> line
  std::vector<std::pair<std::string, std::string>> dtypes_;
  std::string source_;
  std::vector<int> derived_lines_, constraint_lines_, parameter_lines_;
  int template_line_ = 0, parameters_line_ = 0;
};

}  // namespace

SearchSpace::EvaluatorCache::EvaluatorCache() = default;
SearchSpace::EvaluatorCache::~EvaluatorCache() = default;
SearchSpace::EvaluatorCache::EvaluatorCache(const EvaluatorCache&) {}
SearchSpace::EvaluatorCache& SearchSpace::EvaluatorCache::operator=(const EvaluatorCache&) {
  evaluator.reset();
  return *this;
}
SearchSpace::EvaluatorCache::EvaluatorCache(EvaluatorCache&&) noexcept = default;
SearchSpace::EvaluatorCache& SearchSpace::EvaluatorCache::operator=(EvaluatorCache&&) noexcept =
    default;

std::optional<std::string> SearchSpace::types_unsupported(const GemmTypes& types,
                                                          const std::string& arch) const {
  if (dtypes_.empty()) return std::nullopt;  // the family's own types
  for (const auto& [name, lowest] : dtypes_) {
    if (name != types.name()) continue;
    if (arch_number(arch) >= arch_number(lowest)) return std::nullopt;
    return fmt::format("space {} computes {} from {} on, not on {}", path_, name, lowest, arch);
  }
  return fmt::format("space {} declares no {} (its dtypes:{})", path_, types.name(), [&] {
    std::string list;
    for (const auto& d : dtypes_) list += " " + d.first;
    return list;
  }());
}

namespace {

// Set by the tuner for each layout (NvrtcCompiler): a space tuning them would compile one
// config under two sets of -D flags.
constexpr const char* kLayoutMacros[] = {"TGEMM_OP_A", "TGEMM_OP_B"};

// Every parameter must be a macro the template declares with a default: otherwise the
// template silently uses its own value and every config compiles the same kernel.
void check_declared(const std::string& path, const SpaceFileReader& reader,
                    const std::string& template_name, const std::vector<SpaceParameter>& params,
                    const std::string& template_text) {
  const std::vector<std::string> declared = declared_macros(template_text);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    if (std::find(std::begin(kLayoutMacros), std::end(kLayoutMacros), name) !=
        std::end(kLayoutMacros))
      fail(
          "{}:{}: parameter '{}' is set by the tuner from the problem's layout; a space cannot "
          "tune it",
          path, reader.parameter_line(i), name);
    if (std::find(declared.begin(), declared.end(), name) == declared.end())
      fail("{}:{}: parameter '{}' is not a tunable of template {} (its tunables: {})", path,
           reader.parameter_line(i), name, template_name,
           fmt::join(declared_tunables(template_text), ", "));
  }
}

// The walk visits every point of the cross product: refuse, before any work, a space that
// would take hours (at about a microsecond per point, the limit is about a minute).
void check_size(const std::string& path, const SpaceFileReader& reader,
                const std::vector<SpaceParameter>& params) {
  uint64_t size = 1;
  bool beyond_64_bits = false;
  std::vector<size_t> sizes;
  for (const auto& p : params) {
    sizes.push_back(p.values.size());
    if (size > std::numeric_limits<uint64_t>::max() / p.values.size()) beyond_64_bits = true;
    size *= p.values.size();
  }
  if (beyond_64_bits || size > SearchSpace::kMaxSpacePoints)
    fail(
        "{}:{}: the space has {} points ({} values); at most {} can be enumerated: shorten the "
        "value lists or split the space",
        path, reader.parameters_line(),
        beyond_64_bits ? fmt::format("more than {}", std::numeric_limits<uint64_t>::max())
                       : std::to_string(size),
        fmt::join(sizes, " x "), SearchSpace::kMaxSpacePoints);
}

}  // namespace

SearchSpace SearchSpace::load(const std::string& path) { return read(path, nullptr, nullptr); }

SearchSpace SearchSpace::load(const std::string& path, const std::string& template_text) {
  return read(path, nullptr, &template_text);
}

SearchSpace SearchSpace::parse(const std::string& text, const std::string& origin) {
  return read(origin, &text, nullptr);
}

SearchSpace SearchSpace::read(const std::string& path, const std::string* text,
                              const std::string* template_text) {
  SearchSpace space;
  space.path_ = path;
  SpaceFileReader reader(path, text);
  reader.read(&space.template_name_, &space.parameters_, &space.derived_, &space.constraints_);
  space.dtypes_ = reader.dtypes();
  // A relative `source:` is relative to the space file's folder; its text is what the
  // parameters must be declared in.
  std::string embedded;
  if (!reader.source().empty()) {
    std::filesystem::path source(reader.source());
    if (source.is_relative()) source = std::filesystem::path(path).parent_path() / source;
    space.source_path_ = source.lexically_normal().string();
    if (!template_text) {
      std::ifstream in(space.source_path_);
      if (!in) fail("{}: cannot read its source: {}", path, space.source_path_);
      std::ostringstream text;
      text << in.rdbuf();
      embedded = text.str();
      template_text = &embedded;
    }
  }
  if (!template_text) {
    try {
      embedded = kernel_source(space.template_name_).text;
    } catch (const Error& e) {
      fail("{}:{}: {}", path, reader.template_line(), e.what());
    }
  }
  const std::string& source_text = template_text ? *template_text : embedded;
  check_declared(path, reader, space.template_name_, space.parameters_, source_text);
  check_size(path, reader, space.parameters_);
  for (const std::string& name : declared_tunables(source_text))
    if (auto value = declared_integer_default(source_text, name))
      space.template_defaults_[name] = *value;
  if (find_template(space.template_name_))
    for (size_t d = 0; d < space.derived_.size(); ++d)
      for (const char* name : kHostNames)
        if (space.derived_[d].first == name)
          fail(
              "{}:{}: derived {}: the family's host side gives {} (its block_resources); the "
              "space's expressions read it, and must not define it again",
              path, reader.line_of_expression(true, d), name, name);
  // Parsing every expression now, with the first values and a known arch's limits, reports
  // typos and unknown names at load time with their line.
  try {
    space.cache_.evaluator = std::make_unique<detail::SpaceEvaluator>(
        space.parameters_, space.derived_, space.constraints_, space.host());
  } catch (const ExpressionError& e) {
    fail("{}:{}: {} {}", path, reader.line_of_expression(e.in_derived, e.index),
         e.in_derived ? fmt::format("derived {}:", space.derived_[e.index].first)
                      : std::string("constraint"),
         e.message);
  }
  return space;
}

detail::SpaceHost SearchSpace::host() const {
  return {find_template(template_name_), template_name_, template_defaults_};
}

detail::SpaceEvaluator& SearchSpace::evaluator() const {
  if (!cache_.evaluator)
    cache_.evaluator =
        std::make_unique<detail::SpaceEvaluator>(parameters_, derived_, constraints_, host());
  return *cache_.evaluator;
}

uint64_t SearchSpace::cartesian_size() const {
  uint64_t size = 1;
  for (const auto& p : parameters_) {
    if (size > std::numeric_limits<uint64_t>::max() / p.values.size())
      fail("{}: the search space has more than 2^64 points", path_);
    size *= p.values.size();
  }
  return size;
}

KernelConfig SearchSpace::config_at(uint64_t index) const {
  const uint64_t size = cartesian_size();
  if (index >= size) fail("config index {} is outside {} (size {})", index, path_, size);
  KernelConfig config{template_name_, {}};
  config.params.resize(parameters_.size());
  for (size_t i = parameters_.size(); i-- > 0;) {
    const auto& values = parameters_[i].values;
    config.params[i] = {parameters_[i].name, values[index % values.size()]};
    index /= values.size();
  }
  return config;
}

namespace {

// Rejection text without the values: the key enumerate() counts by.
std::string reason_key(const SearchSpace& space, const detail::SpaceEvaluator::Verdict& v) {
  if (v.constraint >= 0) {
    const SpaceConstraint& c = space.constraints()[size_t(v.constraint)];
    if (v.cause == Undefined::division_by_zero)
      return fmt::format("{}: division or modulo by zero in {}", c.reason, c.expression);
    if (v.cause == Undefined::overflow)
      return fmt::format("{}: overflow (beyond 2^53) in {}", c.reason, c.expression);
    if (v.cause == Undefined::host_refused)
      return fmt::format("{}: the host side refuses the config (in {})", c.reason, c.expression);
    return c.reason;
  }
  const auto& d = space.derived()[size_t(v.derived)];
  if (v.cause == Undefined::overflow)
    return fmt::format("derived {} = {} overflows (beyond 2^53)", d.first, d.second);
  if (v.cause == Undefined::host_refused)
    return fmt::format("derived {} = {}: the host side refuses the config", d.first, d.second);
  return fmt::format("derived {} = {} divides by zero", d.first, d.second);
}

}  // namespace

std::optional<std::string> SearchSpace::rejection(const KernelConfig& config,
                                                  const ArchLimits& limits) const {
  if (config.template_name != template_name_)
    fail("config {} is for template '{}', not for {}'s template '{}'", config.canonical_name(),
         config.template_name, path_, template_name_);
  for (const auto& param : config.params) {
    const bool known = std::any_of(parameters_.begin(), parameters_.end(),
                                   [&](const SpaceParameter& p) { return p.name == param.first; });
    if (!known)
      return fmt::format("{} is not a parameter of {} ({})", param.first, template_name_, path_);
  }
  detail::SpaceEvaluator& eval = evaluator();
  for (size_t i = 0; i < parameters_.size(); ++i)
    eval.values()[i] = double(config.get(parameters_[i].name));
  eval.set_limits(limits);
  const auto verdict = eval.check();
  if (verdict.constraint < 0 && verdict.derived < 0) return std::nullopt;
  const bool in_derived = verdict.constraint < 0;
  return fmt::format(
      "{} ({})", reason_key(*this, verdict),
      eval.shown_values(in_derived, size_t(in_derived ? verdict.derived : verdict.constraint)));
}

std::map<std::string, int64_t> SearchSpace::derived_values(const KernelConfig& config,
                                                           const ArchLimits& limits) const {
  detail::SpaceEvaluator& eval = evaluator();
  for (size_t i = 0; i < parameters_.size(); ++i)
    eval.values()[i] = double(config.get(parameters_[i].name));
  eval.set_limits(limits);
  eval.check();
  std::map<std::string, int64_t> values;
  for (size_t i = 0; i < parameters_.size(); ++i)
    values[parameters_[i].name] = config.get(parameters_[i].name);
  for (size_t h = 0; h < eval.host_count(); ++h) {
    const double value = eval.values()[eval.host_offset() + h];
    if (std::isnan(value))
      fail("the host side of {} refuses {} (its block_resources throws)", template_name_,
           config.canonical_name());
    values[kHostNames[h]] = int64_t(value);
  }
  for (size_t d = 0; d < derived_.size(); ++d) {
    const double value = eval.values()[eval.derived_offset() + d];
    int64_t v = 0;
    if (!as_int(value, &v))
      fail("derived {} = {} is undefined for {} ({})", derived_[d].first, derived_[d].second,
           config.canonical_name(),
           cause_of(value) == Undefined::overflow ? "overflow beyond 2^53"
                                                  : "division or modulo by zero");
    values[derived_[d].first] = v;
  }
  return values;
}

SearchSpace::Enumeration SearchSpace::enumerate(const ArchLimits& limits,
                                                std::chrono::milliseconds progress_every) const {
  detail::SpaceEvaluator& eval = evaluator();
  eval.set_limits(limits);
  const uint64_t size = cartesian_size();
  const size_t count = parameters_.size();
  // An odometer over the value lists (last parameter fastest), the order of config_at():
  // only the legal points are kept.
  std::vector<size_t> digit(count, 0);
  double* values = eval.values();
  for (size_t i = 0; i < count; ++i) values[i] = double(parameters_[i].values[0]);

  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto next_report = started + progress_every;
  Enumeration result;
  // Counted by (constraint, cause, derived) and named once at the end: cheaper than
  // building a reason string per rejected point.
  std::map<std::tuple<int, Undefined, int>, uint64_t> rejected;
  for (uint64_t index = 0; index < size; ++index) {
    if (index % 65536 == 0 && index > 0 && Clock::now() >= next_report) {
      spdlog::info("enumerating {}: {} of {} points, {} legal ({:.0f} s)", path_, index, size,
                   result.legal.size(),
                   std::chrono::duration<double>(Clock::now() - started).count());
      next_report = Clock::now() + progress_every;
    }
    const auto verdict = eval.check();
    if (verdict.constraint < 0 && verdict.derived < 0) {
      if (result.legal.size() == kMaxLegalConfigs)
        fail(
            "{}: more than {} legal configs for {} (found at point {} of {}); a space may keep "
            "at most {}: shorten the value lists or add constraints",
            path_, kMaxLegalConfigs, limits.arch, index + 1, size, kMaxLegalConfigs);
      KernelConfig config{template_name_, {}};
      config.params.reserve(count);
      for (size_t i = 0; i < count; ++i)
        config.params.emplace_back(parameters_[i].name, parameters_[i].values[digit[i]]);
      result.legal.push_back(std::move(config));
    } else {
      ++rejected[{verdict.constraint, verdict.cause, verdict.derived}];
    }
    for (size_t i = count; i-- > 0;) {
      if (++digit[i] < parameters_[i].values.size()) {
        values[i] = double(parameters_[i].values[digit[i]]);
        break;
      }
      digit[i] = 0;
      values[i] = double(parameters_[i].values[0]);
    }
  }

  for (const auto& [key, n] : rejected) {
    const auto [constraint, cause, derived] = key;
    result.rejected_by_reason[reason_key(*this, {constraint, derived, cause})] += n;
  }

  if (result.legal.empty()) {
    std::vector<std::pair<std::string, uint64_t>> top(result.rejected_by_reason.begin(),
                                                      result.rejected_by_reason.end());
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string reasons;
    for (size_t i = 0; i < top.size() && i < 3; ++i)
      reasons += fmt::format("\n  {} ({} of {})", top[i].first, top[i].second, size);
    fail("no legal config in {} for {}; most common reasons:{}", path_, limits.arch, reasons);
  }
  return result;
}

}  // namespace tgemm
