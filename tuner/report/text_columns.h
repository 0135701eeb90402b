// TextColumns: a plain-text table for the command-line tools, columns padded to their widest
// cell and numbers right-aligned so digits line up.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tgemm {

class TextColumns {
 public:
  TextColumns(std::vector<std::string> header, std::vector<bool> right_aligned)
      : right_(std::move(right_aligned)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.size() == 1; }  // only the header
  void print() const { fmt::print("{}", text()); }
  std::string text() const {
    std::string out;
    std::vector<size_t> width(rows_.front().size(), 0);
    for (const auto& row : rows_)
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const bool last = c + 1 == row.size();
        if (c) line += "  ";
        if (right_[c])
          line += fmt::format("{:>{}}", row[c], width[c]);
        else
          line += last ? row[c] : fmt::format("{:<{}}", row[c], width[c]);
      }
      line.erase(line.find_last_not_of(' ') + 1);  // an empty last cell leaves no trailing blanks
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tgemm
