#include "src/templates/integer_expression.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace tgemm::detail {

Undefined cause_of(double v) {
  if (!std::isnan(v)) return Undefined::none;
  const uint64_t payload = std::bit_cast<uint64_t>(v) & 0xf;
  if (payload == uint64_t(Undefined::overflow)) return Undefined::overflow;
  if (payload == uint64_t(Undefined::host_refused)) return Undefined::host_refused;
  return Undefined::division_by_zero;
}

namespace {
constexpr double kExactLimitDouble = double(kExactLimit);
}  // namespace

bool as_int(double v, int64_t* out) {
  if (!(std::fabs(v) < kExactLimitDouble)) return false;  // also false for NaN
  *out = static_cast<int64_t>(v);
  return true;
}

std::string show_value(double v) {
  int64_t i = 0;
  return as_int(v, &i) ? std::to_string(i) : std::string("undefined");
}

namespace {

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

}  // namespace

IntExprParser::IntExprParser() {
  AddValIdent(read_integer_literal);
  InitCharSets();
  InitFun();
  InitOprt();
}

void IntExprParser::InitCharSets() {
  DefineNameChars("0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
  DefineOprtChars("+-*/%<>=!&|");
  DefineInfixOprtChars("-!");
}

void IntExprParser::InitFun() {
  DefineFun("min", minimum);
  DefineFun("max", maximum);
}

void IntExprParser::InitOprt() {
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

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

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

namespace {

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

}  // namespace

std::string grammar_violation(const std::string& expression) {
  return GrammarCheck(expression).violation();
}

}  // namespace tgemm::detail
