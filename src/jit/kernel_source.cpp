#include "src/jit/kernel_source.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>
#include <string_view>

#include "src/core/error.h"
#include "src/core/hash.h"

namespace tgemm {

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  for (const auto& t : embedded_templates()) names.emplace_back(t.name);
  return names;
}

namespace {

// `#include "name"` lines of a text, in order.
std::vector<std::string> quoted_includes(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line.compare(hash, 1, "#") != 0) continue;
    const size_t word = line.find_first_not_of(" \t", hash + 1);
    if (word == std::string::npos || line.compare(word, 7, "include") != 0) continue;
    const size_t open = line.find('"', word + 7), close = line.find('"', open + 1);
    if (open != std::string::npos && close != std::string::npos)
      names.push_back(line.substr(open + 1, close - open - 1));
  }
  return names;
}

}  // namespace

std::vector<const NamedHeader*> included_headers(const std::string& text,
                                                 const std::vector<NamedHeader>& headers) {
  std::vector<bool> used(headers.size(), false);
  std::vector<const std::string*> pending{&text};
  while (!pending.empty()) {
    const std::string* next = pending.back();
    pending.pop_back();
    for (const std::string& name : quoted_includes(*next))
      for (size_t i = 0; i < headers.size(); ++i)
        if (!used[i] && headers[i].include_name == name) {
          used[i] = true;
          pending.push_back(&headers[i].text);
        }
  }
  std::vector<const NamedHeader*> out;  // in the headers' order: the hash is stable
  for (size_t i = 0; i < headers.size(); ++i)
    if (used[i]) out.push_back(&headers[i]);
  return out;
}

namespace {

// The text with every header NVRTC may need; the hash covers the text and the headers it
// includes (directly or through another header), so a new or edited header that a family
// does not include leaves that family's tuned entries current.
KernelSource with_headers(const std::string& name, const std::string& text,
                          std::vector<NamedHeader> headers) {
  KernelSource source{name, text, std::move(headers), ""};
  std::string everything = text;
  for (const NamedHeader* h : included_headers(text, source.headers))
    everything += fmt::format("\n// ---- {}\n{}", h->include_name, h->text);
  source.hash = stable_hash(everything);
  return source;
}

std::vector<NamedHeader> common_headers() {
  std::vector<NamedHeader> headers;
  for (const EmbeddedHeader& h : embedded_common_headers())
    headers.push_back({h.include_name, h.text});
  return headers;
}

}  // namespace

KernelSource kernel_source_from_text(const std::string& name, const std::string& text) {
  std::vector<NamedHeader> headers = common_headers();
  for (const auto& t : embedded_templates())
    headers.push_back({std::string(t.name) + ".cuh", t.source});
  return with_headers(name, text, std::move(headers));
}

// A shipped template's version covers only itself and the common headers: editing one
// family never makes another's tuned entries stale.
KernelSource kernel_source(const std::string& name) {
  for (const auto& t : embedded_templates()) {
    if (name == t.name) return with_headers(t.name, t.source, common_headers());
  }
  fail("unknown kernel template '{}' (known: {})", name, fmt::join(template_names(), ", "));
}

namespace {

// The macro name of a "#<directive> NAME ..." line (spaces allowed around '#'), else "".
std::string directive_name(std::string_view line, std::string_view directive,
                           std::string_view* rest) {
  auto skip_blanks = [&] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  };
  skip_blanks();
  if (line.empty() || line.front() != '#') return "";
  line.remove_prefix(1);
  skip_blanks();
  if (line.substr(0, directive.size()) != directive) return "";
  line.remove_prefix(directive.size());
  if (line.empty() || (line.front() != ' ' && line.front() != '\t')) return "";
  skip_blanks();
  size_t end = 0;
  while (end < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
    ++end;
  *rest = line.substr(end);
  return std::string(line.substr(0, end));
}

}  // namespace

namespace {

// `text` without a trailing // comment and the blanks around it.
std::string_view trimmed_value(std::string_view text) {
  text = text.substr(0, text.find("//"));
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// Calls `visit(name, value)` for each macro declared with a default, in order, each once;
// `value` is the text after the name, its continued lines ('\' at the end) joined, without
// comments.
template <typename Visit>
void for_each_declared(const std::string& source_text, Visit&& visit) {
  std::vector<std::string> names;
  std::istringstream lines(source_text);
  std::string line, pending;  // pending: the name of the #ifndef on the line before
  while (std::getline(lines, line)) {
    std::string_view rest;
    const std::string defined = directive_name(line, "define", &rest);
    std::string value(trimmed_value(rest));
    while (!value.empty() && value.back() == '\\' && std::getline(lines, line)) {
      value.pop_back();
      value = std::string(trimmed_value(value + " " + line));
    }
    if (!pending.empty() && defined == pending && !value.empty() &&
        std::find(names.begin(), names.end(), defined) == names.end()) {
      names.push_back(defined);
      visit(defined, std::string_view(value));
    }
    pending = directive_name(line, "ifndef", &rest);
  }
}

}  // namespace

std::vector<std::string> declared_macros(const std::string& source_text) {
  std::vector<std::string> names;
  for_each_declared(source_text,
                    [&](const std::string& name, std::string_view) { names.push_back(name); });
  return names;
}

std::optional<int64_t> declared_integer_default(const std::string& source_text,
                                                const std::string& name) {
  std::optional<int64_t> value;
  for_each_declared(source_text, [&](const std::string& declared, std::string_view text) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (declared == name && ec == std::errc() && end == text.data() + text.size()) value = v;
  });
  return value;
}

std::vector<std::string> declared_tunables(const std::string& source_text) {
  std::vector<std::string> names = declared_macros(source_text);
  std::erase_if(names, [](const std::string& name) { return name.starts_with("TGEMM_"); });
  return names;
}

}  // namespace tgemm
