#ifndef MEMPROF_CLI_APP_DID_YOU_MEAN_H_
#define MEMPROF_CLI_APP_DID_YOU_MEAN_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace memprof::cli {

// "Did you mean" for a mistyped command or option name.

// The Damerau-Levenshtein distance in its optimal-string-alignment form: the
// fewest insertions, deletions, substitutions and swaps of two neighbouring
// characters that turn `a` into `b` ("stat" -> "stats" is 1, "--pdi" ->
// "--pid" is 1).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidates closest to `word`, when they are close enough to be what the
// user meant: at most 1 edit for a word of 2 to 4 characters and 2 edits for a
// longer one, never for a single character; leading dashes are ignored on
// both sides, so "-json" finds "--json". Ties are all returned, in the
// candidates' order (at most 3); empty when nothing is that close.
std::vector<std::string> NearestWords(std::string_view word,
                                      const std::vector<std::string>& candidates);

// "; did you mean 'stats'?" or "; did you mean '--out' or '--out-dir'?" for
// NearestWords(word, candidates), or "" when there is none.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_DID_YOU_MEAN_H_
