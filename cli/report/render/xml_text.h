#ifndef MEMPROF_CLI_REPORT_RENDER_XML_TEXT_H_
#define MEMPROF_CLI_REPORT_RENDER_XML_TEXT_H_

#include <string>
#include <string_view>

namespace memprof::report::render {

// `text` made safe as XML 1.0 character data or a double- or single-quoted
// attribute value: & < > " ' become entities, and what XML cannot carry at
// all (control characters other than tab, bytes that are not UTF-8,
// U+FFFE/U+FFFF) becomes '?'. Function names come from binaries we do not
// control, and one stray byte would make a browser refuse the whole file.
std::string XmlEscape(std::string_view text);

// `text` with what XML cannot carry replaced by '?', but not escaped: valid
// UTF-8 without control characters, so it can be cut and measured safely.
std::string XmlSafeText(std::string_view text);

// The first `max_chars` characters (code points) of valid UTF-8 `text`.
std::string_view Utf8Prefix(std::string_view text, size_t max_chars);

// The number of code points of valid UTF-8 `text`.
size_t Utf8Length(std::string_view text);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_XML_TEXT_H_
