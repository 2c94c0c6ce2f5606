#include "agent/heap/thread_name_repair.h"

#include <cstdio>

namespace memprof::agent {
namespace {

struct NameField {
  std::string_view start;  // the key and the value's opening quote
  std::string_view end;    // the value's closing quote and the next key
};

// jemalloc 5.3's prof_recent_alloc_dump_node: each name is followed by its time.
constexpr NameField kNameFields[] = {
    {R"("alloc_thread_name":")", R"(","alloc_time":)"},
    {R"("dalloc_thread_name":")", R"(","dalloc_time":)"},
};

// The longest text that may be the start of a key: held back between calls.
constexpr size_t kLongestStart = sizeof(R"("dalloc_thread_name":")") - 1;

}  // namespace

std::string EscapeJsonString(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

void ThreadNameRepair::Write(void* self, const char* text) {
  static_cast<ThreadNameRepair*>(self)->Feed(text);
}

void ThreadNameRepair::Feed(std::string_view text) {
  held_.append(text);
  for (;;) {
    if (end_.empty()) {
      ScanText();
      if (end_.empty()) return;
    }
    if (!ScanName()) return;
  }
}

void ThreadNameRepair::Finish() {
  Emit(held_);
  held_.clear();
  end_ = {};
}

void ThreadNameRepair::Emit(std::string_view text) {
  if (!text.empty()) write_(opaque_, std::string(text).c_str());
}

void ThreadNameRepair::ScanText() {
  size_t first = std::string::npos;
  const NameField* field = nullptr;
  for (const NameField& f : kNameFields) {
    const size_t at = held_.find(f.start);
    if (at < first) {
      first = at;
      field = &f;
    }
  }
  if (field == nullptr) {
    const size_t keep = std::min(held_.size(), kLongestStart - 1);
    Emit(std::string_view(held_).substr(0, held_.size() - keep));
    held_.erase(0, held_.size() - keep);
    return;
  }
  const size_t value = first + field->start.size();
  Emit(std::string_view(held_).substr(0, value));
  held_.erase(0, value);
  end_ = field->end;
}

bool ThreadNameRepair::ScanName() {
  const size_t at = held_.find(end_);
  if (at == std::string::npos) return false;
  Emit(EscapeJsonString(std::string_view(held_).substr(0, at)));
  held_.erase(0, at);
  end_ = {};
  return true;
}

}  // namespace memprof::agent
