// ordo::configure_process: the process-wide settings a Translator no longer makes by itself
// (include/ordo/process.h says why each one helps).
#include "ordo/process.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "nn/attention.h"
#include "pipeline/heap.h"
#include "text/sentencepiece.h"

namespace ordo {
namespace {

std::atomic<bool> large_buffers_on_heap{false};
std::atomic<bool> drop_library_pages{false};

// How much the resident set may grow past its size at the last release before
// release_free_heap releases again (pipeline/heap.h).
constexpr size_t kReleaseSlack = size_t{8} << 20;
// The resident set's size at the last release (release_free_heap, release_idle_memory).
std::atomic<size_t> released_at{0};

// The process's resident set in bytes (/proc/self/statm), 0 when it cannot be read (then
// nothing is released).
size_t resident_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<size_t>(resident) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// A shared library's file: an absolute path whose name holds ".so" (libfoo.so, libfoo.so.1.2).
bool is_library(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.find(" (deleted)") != std::string::npos) return false;
  const size_t slash = path.rfind('/');
  return path.find(".so", slash) != std::string::npos;
}

}  // namespace

void pipeline::release_free_heap() {
  if (!large_buffers_on_heap.load(std::memory_order_relaxed)) return;
  // Only after a batch that made the resident set grow past its size at the last release by
  // more than kReleaseSlack (pipeline/heap.h says why).
  const size_t resident = resident_bytes();
  size_t mark = released_at.load(std::memory_order_relaxed);
  while (resident > mark + kReleaseSlack)
    if (released_at.compare_exchange_weak(mark, resident, std::memory_order_relaxed)) {
      ::malloc_trim(0);
      return;
    }
}

size_t release_idle_memory() {
  const size_t before = resident_bytes();
  nn::release_kept_cache_mappings();
  ::malloc_trim(0);
  const size_t after = resident_bytes();
  released_at.store(after, std::memory_order_relaxed);
  return before > after ? before - after : 0;
}

namespace {

// One pass of release_library_pages over the loaded objects (dl_iterate_phdr's callback).
struct LibraryPages {
  int pagemap = -1;
  size_t page = 4096;
  std::vector<uint64_t> entries;
  std::vector<ElfW(Phdr)> headers;
  size_t released = 0;
};

// Whether the object is relocated by writing into its read-only segments (DT_TEXTREL): the
// loader makes them writable meanwhile, so their pages are not the file's.
bool has_text_relocations(const dl_phdr_info& object) {
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = object.dlpi_phdr[i];
    if (header.p_type != PT_DYNAMIC) continue;
    for (auto* entry = reinterpret_cast<const ElfW(Dyn)*>(object.dlpi_addr + header.p_vaddr); entry->d_tag != DT_NULL;
         ++entry)
      if (entry->d_tag == DT_TEXTREL || (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL))) return true;
  }
  return false;
}

// Drops the resident pages of one object's read-only segments when every one of them is the
// file's (pagemap bit 61; a private copy or a swapped page keeps the segment as it is).
int release_object_pages(dl_phdr_info* object, size_t, void* data) {
  LibraryPages& pass = *static_cast<LibraryPages*>(data);
  if (!object->dlpi_name || !is_library(object->dlpi_name) || has_text_relocations(*object)) return 0;
  // The program headers usually sit in the first page of the first segment: copied before
  // anything is dropped, or reading them again would fault that page back in (and the 15
  // after it: the kernel's fault-around).
  pass.headers.assign(object->dlpi_phdr, object->dlpi_phdr + object->dlpi_phnum);
  const uintptr_t down = ~static_cast<uintptr_t>(pass.page - 1), up = pass.page - 1;
  const auto pages_of = [&](const ElfW(Phdr) & h) {
    const uintptr_t start = object->dlpi_addr + h.p_vaddr;
    return std::make_pair(start & down, (start + h.p_memsz + up) & down);
  };
  for (const ElfW(Phdr) & segment : pass.headers) {
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) || segment.p_memsz == 0) continue;
    auto [begin, end] = pages_of(segment);
    for (const ElfW(Phdr) & other : pass.headers) {  // never a page shared with a writable segment
      if (other.p_type != PT_LOAD || !(other.p_flags & PF_W)) continue;
      const auto [w_begin, w_end] = pages_of(other);
      if (w_begin >= end || w_end <= begin) continue;
      if (w_begin <= begin)
        begin = std::min(end, w_end);
      else
        end = w_begin;
    }
    if (begin >= end) continue;
    const size_t pages = (end - begin) / pass.page, bytes = pages * sizeof(uint64_t);
    pass.entries.resize(pages);
    if (::pread(pass.pagemap, pass.entries.data(), bytes, static_cast<off_t>(begin / pass.page * sizeof(uint64_t))) !=
        static_cast<ssize_t>(bytes))
      continue;
    size_t resident = 0;
    bool own_page = false;
    for (const uint64_t e : pass.entries) {
      const bool present = e >> 63 & 1, swapped = e >> 62 & 1, file_page = e >> 61 & 1;
      if (swapped || (present && !file_page)) {
        own_page = true;
        break;
      }
      resident += present;
    }
    if (own_page || resident == 0) continue;
    if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) == 0)
      pass.released += resident * pass.page;
  }
  return 0;
}

}  // namespace

size_t pipeline::release_library_pages() {
  if (!drop_library_pages.load(std::memory_order_relaxed)) return 0;
  // The ranges come from the loaded objects' own program headers, inside dl_iterate_phdr
  // (which holds the loader's list lock: no object leaves the list, nor is unmapped, meanwhile),
  // and are only the read-only PT_LOAD segments, which hold nothing but the file's bytes once
  // mapped. The first version read /proc/self/maps and dropped what it listed a few ms later:
  // a library another thread loaded meanwhile (the tokenizer's thread loads the SentencePiece
  // shim while the weights load) could have been listed as its first, read-only mapping of the
  // whole object and relocated into data segments mapped over it before the madvise, which
  // then threw its relocations away: a rare SIGSEGV of `ordo` in CI, and within seconds with a
  // thread loading libraries in a loop (tests/pipeline/process_state_test.cpp).
  // /proc/self/pagemap says, per page, whether it is resident and whether it is the file's
  // (bit 61) or a private copy (clear, or swapped out: bit 62).
  LibraryPages pass;
  pass.pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pass.pagemap < 0) return 0;
  pass.page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  pass.entries.reserve(size_t{1} << 16);
  pass.headers.reserve(64);
  ::dl_iterate_phdr(release_object_pages, &pass);
  text::for_each_sentencepiece_object(release_object_pages, &pass);  // its namespace's own copies
  ::close(pass.pagemap);
  return pass.released;
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
