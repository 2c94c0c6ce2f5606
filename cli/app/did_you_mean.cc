#include "cli/app/did_you_mean.h"

#include <algorithm>

namespace memprof::cli {
namespace {

constexpr size_t kMaxSuggestions = 3;

std::string_view WithoutDashes(std::string_view word) {
  while (word.starts_with('-')) word.remove_prefix(1);
  return word;
}

// How many edits still look like a typo of a word this long.
size_t MaxEdits(size_t length) {
  if (length <= 1) return 0;
  return length <= 4 ? 1 : 2;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between a's first i and b's first j characters.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> NearestWords(std::string_view word,
                                      const std::vector<std::string>& candidates) {
  const std::string_view typed = WithoutDashes(word);
  size_t best = MaxEdits(typed.size());
  std::vector<std::string> nearest;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(typed, WithoutDashes(candidate));
    if (distance > best) continue;
    if (distance < best) nearest.clear();
    best = distance;
    if (std::find(nearest.begin(), nearest.end(), candidate) == nearest.end()) {
      nearest.push_back(candidate);
    }
  }
  if (nearest.size() > kMaxSuggestions) nearest.resize(kMaxSuggestions);
  return nearest;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> nearest = NearestWords(word, candidates);
  if (nearest.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < nearest.size(); ++i) {
    if (i > 0) out += i + 1 == nearest.size() ? " or " : ", ";
    out += "'" + nearest[i] + "'";
  }
  return out + "?";
}

}  // namespace memprof::cli
