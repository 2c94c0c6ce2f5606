#include "cli/report/render/xml_text.h"

#include <cstdint>

namespace memprof::report::render {
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

// Printable ASCII (and tab): safe as it is, and what nearly every frame
// name is.
bool IsPlainAscii(std::string_view text) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && byte != '\t') || byte >= 0x7F) return false;
  }
  return true;
}

}  // namespace

std::string XmlSafeText(std::string_view text) {
  if (IsPlainAscii(text)) return std::string(text);
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
  std::string made_safe;
  std::string_view safe = text;
  if (!IsPlainAscii(text)) {
    made_safe = XmlSafeText(text);
    safe = made_safe;
  }
  static constexpr std::string_view kSpecial = "&<>\"'";
  std::string escaped;
  escaped.reserve(safe.size() + safe.size() / 8);
  size_t from = 0;
  for (size_t at = safe.find_first_of(kSpecial); at != std::string_view::npos;
       at = safe.find_first_of(kSpecial, from)) {
    escaped.append(safe.substr(from, at - from));
    escaped += EntityFor(safe[at]);
    from = at + 1;
  }
  escaped.append(safe.substr(from));
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

}  // namespace memprof::report::render
