// The two allocator reports doctor reads: jemalloc's malloc_stats_print JSON
// and glibc's malloc_info XML.
#include <charconv>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/doctor/doctor_figures.h"
#include "cli/doctor/libxml2_library.h"

namespace memprof::cli {
namespace {

using nlohmann::json;

// The value at `path` ("/stats.arenas/merged/pdirty"), or an error naming it.
template <typename T>
Result<T> Field(const json& root, const char* path) {
  const json::json_pointer pointer(path);
  if (!root.contains(pointer) || !(root[pointer].is_number() || root[pointer].is_boolean())) {
    return Fail(ErrorCode::kInternal, std::string("jemalloc's statistics have no ") + path +
                                          " (is this jemalloc 5.x?)");
  }
  return root[pointer].get<T>();
}

#define MEMPROF_READ(out, type, path)           \
  do {                                          \
    auto value = Field<type>(root, path);       \
    if (!value) return Fail(value.error());     \
    out = *value;                               \
  } while (false)

// The figures doctor takes from each arena, added up over arenas.
struct ArenaTotals {
  uint64_t pdirty = 0;
  uint64_t pmuzzy = 0;
  uint64_t tcache_bytes = 0;
  uint32_t nthreads = 0;
};

Result<ArenaTotals> ReadArena(const json& root, const std::string& arena) {
  ArenaTotals t;
  const std::string at = "/stats.arenas/" + arena + "/";
  MEMPROF_READ(t.pdirty, uint64_t, (at + "pdirty").c_str());
  MEMPROF_READ(t.pmuzzy, uint64_t, (at + "pmuzzy").c_str());
  MEMPROF_READ(t.tcache_bytes, uint64_t, (at + "tcache_bytes").c_str());
  MEMPROF_READ(t.nthreads, uint32_t, (at + "nthreads").c_str());
  return t;
}

// jemalloc prints "merged" (every arena together) only when more than one
// arena is in use; with one (narenas:1, or a program whose threads all share
// arena 0) that arena, printed under its number, is the total.
Result<ArenaTotals> ReadArenaTotals(const json& root) {
  const json::json_pointer arenas("/stats.arenas");
  if (!root.contains(arenas) || !root[arenas].is_object() || root[arenas].contains("merged")) {
    return ReadArena(root, "merged");
  }
  ArenaTotals sum;
  bool any = false;
  for (const auto& [name, unused] : root[arenas].items()) {
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto one = ReadArena(root, name);
    if (!one) return Fail(one.error());
    sum.pdirty += one->pdirty;
    sum.pmuzzy += one->pmuzzy;
    sum.tcache_bytes += one->tcache_bytes;
    sum.nthreads += one->nthreads;
    any = true;
  }
  if (!any) return ReadArena(root, "merged");  // names what is missing
  return sum;
}

Result<JemallocFigures> ReadJemallocFigures(const json& root) {
  JemallocFigures f;
  uint64_t page = 0;
  MEMPROF_READ(page, uint64_t, "/arenas/page");
  auto totals = ReadArenaTotals(root);
  if (!totals) return Fail(totals.error());
  f.dirty_bytes = totals->pdirty * page;
  f.muzzy_bytes = totals->pmuzzy * page;
  f.tcache_bytes = totals->tcache_bytes;
  f.threads = totals->nthreads;
  MEMPROF_READ(f.arenas, uint32_t, "/arenas/narenas");
  MEMPROF_READ(f.dirty_decay_ms, int64_t, "/opt/dirty_decay_ms");
  MEMPROF_READ(f.muzzy_decay_ms, int64_t, "/opt/muzzy_decay_ms");
  MEMPROF_READ(f.background_thread, bool, "/opt/background_thread");
  MEMPROF_READ(f.narenas, uint32_t, "/opt/narenas");
  MEMPROF_READ(f.tcache_max, uint64_t, "/opt/tcache_max");
  MEMPROF_READ(f.retain, bool, "/opt/retain");
  return f;
}

#undef MEMPROF_READ

// The value of attribute `name` of an element, or "" (read from the tree:
// the attribute's text child, so nothing needs freeing).
std::string_view Attribute(const xmlNode& node, std::string_view name) {
  for (const xmlAttr* attr = node.properties; attr != nullptr; attr = attr->next) {
    if (name != reinterpret_cast<const char*>(attr->name)) continue;
    if (attr->children == nullptr || attr->children->content == nullptr) return {};
    return reinterpret_cast<const char*>(attr->children->content);
  }
  return {};
}

uint64_t Number(const xmlNode& node, std::string_view name) {
  const std::string_view text = Attribute(node, name);
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// A top-level (all arenas) <total> or <system> element of malloc_info.
void ReadTotal(const xmlNode& node, GlibcFigures& f) {
  const std::string_view element = reinterpret_cast<const char*>(node.name);
  const std::string_view type = Attribute(node, "type");
  if (element == "system" && type == "current") f.system_bytes = Number(node, "size");
  if (element != "total") return;
  if (type == "rest") f.free_bytes = Number(node, "size");
  if (type == "fast") f.fastbin_bytes = Number(node, "size");
  if (type == "mmap") {
    f.mmap_bytes = Number(node, "size");
    f.mmap_chunks = Number(node, "count");
  }
}

// <malloc><heap nr="0">...</heap>...<total type="rest" size=".."/>...</malloc>
Result<GlibcFigures> ReadMallocInfo(const xmlNode* root) {
  if (root == nullptr || std::string_view(reinterpret_cast<const char*>(root->name)) != "malloc") {
    return Fail(ErrorCode::kInternal, "the agent returned a glibc report that is not malloc_info");
  }
  GlibcFigures f;
  for (const xmlNode* node = root->children; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE) continue;
    if (std::string_view(reinterpret_cast<const char*>(node->name)) == "heap") {
      ++f.arenas;
    } else {
      ReadTotal(*node, f);
    }
  }
  return f;
}

}  // namespace

Result<JemallocFigures> ParseJemallocFigures(const std::string& text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Fail(ErrorCode::kInternal, "the agent returned jemalloc statistics that are not JSON");
  }
  if (parsed.contains("jemalloc")) return ReadJemallocFigures(parsed["jemalloc"]);
  return ReadJemallocFigures(parsed);
}

Result<GlibcFigures> ParseMallocInfo(const std::string& xml) {
  auto libxml2 = Libxml2();
  if (!libxml2) return Fail(libxml2.error());
  const Libxml2Api& api = **libxml2;
  xmlDoc* doc = api.read_memory(xml.data(), static_cast<int>(xml.size()), "malloc_info.xml",
                                nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == nullptr) {
    return Fail(ErrorCode::kInternal, "the agent returned a glibc report that is not XML");
  }
  auto figures = ReadMallocInfo(api.root_element(doc));
  api.free_doc(doc);
  return figures;
}

}  // namespace memprof::cli
