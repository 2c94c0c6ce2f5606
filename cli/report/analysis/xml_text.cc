#include "cli/report/analysis/xml_text.h"

#include <cstdint>

namespace memprof::analysis {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The length of the well-formed UTF-8 sequence XML accepts at `text[at]`,
// or 0. Rejects overlong forms, surrogates, code points above U+10FFFF,
// U+FFFE/U+FFFF and the C0 controls XML 1.0 forbids.
size_t XmlCharLength(std::string_view text, size_t at) {
  auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return (lead >= 0x20 || lead == '\t') && lead != 0x7F ? 1 : 0;
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || at + length > text.size()) return 0;
  uint32_t code = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    auto byte = static_cast<unsigned char>(text[at + i]);
    if (!IsContinuation(byte)) return 0;
    code = (code << 6) | (byte & 0x3F);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kMinimum[length] || code > 0x10FFFF) return 0;
  if ((code >= 0xD800 && code <= 0xDFFF) || code == 0xFFFE || code == 0xFFFF) return 0;
  return length;
}

const char* EntityFor(char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&apos;";
    default:
      return nullptr;
  }
}

}  // namespace

std::string XmlSafeText(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t length = XmlCharLength(text, at);
    if (length == 0) {
      safe += '?';
      ++at;
      continue;
    }
    safe.append(text.substr(at, length));
    at += length;
  }
  return safe;
}

std::string XmlEscape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 8);
  for (char c : XmlSafeText(text)) {
    const char* entity = EntityFor(c);
    if (entity != nullptr) {
      escaped += entity;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_chars) {
  size_t at = 0;
  for (size_t chars = 0; at < text.size() && chars < max_chars; ++chars) {
    ++at;
    while (at < text.size() && IsContinuation(static_cast<unsigned char>(text[at]))) ++at;
  }
  return text.substr(0, at);
}

size_t Utf8Length(std::string_view text) {
  size_t chars = 0;
  for (char c : text) chars += IsContinuation(static_cast<unsigned char>(c)) ? 0 : 1;
  return chars;
}

}  // namespace memprof::analysis
