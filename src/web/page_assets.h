// The translation page `ordo serve` serves at GET / (docs/serving.md#the-page): index.html,
// app.js and style.css, compiled into the binary at build time (CMakeLists.txt, embed.cmake),
// so that the page works on a machine without network. The server only looks them up here.
#pragma once

#include <string>
#include <string_view>

namespace ordo::web {

struct PageAsset {
  std::string path;          // "/", "/static/app.js", "/static/style.css"
  std::string content_type;  // with charset
  std::string_view body;
  std::string etag;  // a strong ETag of the bytes, quoted
};

// The asset served at `path`, or nullptr.
const PageAsset* page_asset(const std::string& path);

// The Content-Security-Policy the page is served with: everything from this server only
// (no CDN, no inline script, no other origin to connect to).
const char* page_content_security_policy();

}  // namespace ordo::web
