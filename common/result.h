#ifndef MEMPROF_COMMON_RESULT_H_
#define MEMPROF_COMMON_RESULT_H_

#include <expected>
#include <string>
#include <utility>

#include "common/error.h"

namespace memprof {

// Recoverable errors are values. Result<T> is std::expected<T, Error>; a
// function that can fail returns it and callers must look at it.
template <typename T>
using Result = std::expected<T, Error>;

// Builds the unexpected side of a Result: `return Fail(ErrorCode::kNotFound, "...")`.
inline std::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}

inline std::unexpected<Error> Fail(Error error) {
  return std::unexpected<Error>(std::move(error));
}

}  // namespace memprof

#endif  // MEMPROF_COMMON_RESULT_H_
