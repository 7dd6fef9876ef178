// ordo::configure_process: the process-wide settings a Translator no longer makes by itself
// (include/ordo/process.h says why each one helps).
#include "ordo/process.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "pipeline/heap.h"

namespace ordo {
namespace {

std::atomic<bool> large_buffers_on_heap{false};
std::atomic<bool> drop_library_pages{false};

// A shared library's file: an absolute path whose name holds ".so" (libfoo.so, libfoo.so.1.2).
bool is_library(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.find(" (deleted)") != std::string::npos) return false;
  const size_t slash = path.rfind('/');
  return path.find(".so", slash) != std::string::npos;
}

}  // namespace

void pipeline::release_free_heap() {
  if (large_buffers_on_heap.load(std::memory_order_relaxed)) ::malloc_trim(0);
}

size_t pipeline::release_library_pages() {
  if (!drop_library_pages.load(std::memory_order_relaxed)) return 0;
  // /proc/self/maps names the mappings (no page-table walk: cheap, unlike smaps, which took
  // tens of ms with LibTorch's ~1,500 mappings); /proc/self/pagemap says, per page, whether it is
  // resident and whether it is the file's (bit 61) or a private copy (clear, or swapped out:
  // bit 62).
  struct Range {
    uintptr_t begin, end;
    size_t resident = 0;  // bytes
  };
  std::vector<Range> candidates;
  {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      std::istringstream fields(line);
      std::string range, perms, offset, device, inode, path;
      fields >> range >> perms >> offset >> device >> inode;
      std::getline(fields, path);
      path.erase(0, std::min(path.size(), path.find_first_not_of(' ')));
      const size_t dash = range.find('-');
      if (perms.size() < 2 || perms[1] != '-' || dash == std::string::npos || !is_library(path)) continue;
      candidates.push_back(
          {std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16)});
    }
  }
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) return 0;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<Range> droppable;  // adjacent ones merged: one madvise each
  std::vector<uint64_t> entries;
  for (const Range& r : candidates) {
    const size_t pages = (r.end - r.begin) / page;
    entries.resize(pages);
    const size_t bytes = pages * sizeof(uint64_t);
    if (pages == 0 || ::pread(pagemap, entries.data(), bytes, static_cast<off_t>(r.begin / page * sizeof(uint64_t))) !=
                          static_cast<ssize_t>(bytes))
      continue;
    size_t resident = 0;
    bool own_page = false;
    for (const uint64_t e : entries) {
      const bool present = e >> 63 & 1, swapped = e >> 62 & 1, file_page = e >> 61 & 1;
      if (swapped || (present && !file_page)) {
        own_page = true;
        break;
      }
      resident += present;
    }
    if (own_page || resident == 0) continue;
    if (droppable.empty() || droppable.back().end != r.begin) droppable.push_back({r.begin, r.begin});
    droppable.back().end = r.end;
    droppable.back().resident += resident * page;
  }
  ::close(pagemap);
  size_t released = 0;
  for (const Range& r : droppable)
    if (::madvise(reinterpret_cast<void*>(r.begin), r.end - r.begin, MADV_DONTNEED) == 0) released += r.resident;
  return released;
}

void configure_process(const ProcessOptions& options) {
  if (options.keep_large_buffers_on_heap) {
    large_buffers_on_heap = true;  // and stays: false leaves the allocator as it is
    ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  if (options.release_library_pages) drop_library_pages = true;  // and stays, as above
  if (options.onednn_primitive_cache_capacity > 0 && !std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") &&
      !std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY"))
    dnnl::set_primitive_cache_capacity(options.onednn_primitive_cache_capacity);
}

}  // namespace ordo
