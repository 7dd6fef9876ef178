// The page's files as embed.cmake compiled them in, with their paths, types and ETags.
#include "web/page_assets.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace ordo::web {

struct PageFile {
  const char* name;
  const unsigned char* bytes;
  size_t size;
};
extern const PageFile kPageFiles[];
extern const size_t kPageFileCount;

namespace {

std::string etag_of(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a 64
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char text[24];
  std::snprintf(text, sizeof text, "\"%016llx\"", static_cast<unsigned long long>(hash));
  return text;
}

std::vector<PageAsset> make_assets() {
  std::vector<PageAsset> assets;
  for (size_t i = 0; i < kPageFileCount; ++i) {
    const std::string name = kPageFiles[i].name;
    PageAsset a;
    a.body = std::string_view(reinterpret_cast<const char*>(kPageFiles[i].bytes), kPageFiles[i].size);
    a.etag = etag_of(a.body);
    if (name == "index.html") {
      a.path = "/";
      a.content_type = "text/html; charset=utf-8";
    } else {
      a.path = "/static/" + name;
      const bool js = name.size() > 3 && name.compare(name.size() - 3, 3, ".js") == 0;
      a.content_type = js ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
    }
    assets.push_back(a);
  }
  return assets;
}

}  // namespace

const PageAsset* page_asset(const std::string& path) {
  static const std::vector<PageAsset> assets = make_assets();
  for (const PageAsset& a : assets)
    if (a.path == path || (path == "/index.html" && a.path == "/")) return &a;
  return nullptr;
}

const char* page_content_security_policy() {
  return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
         "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
}

}  // namespace ordo::web
