// ordo-elf-symbolic: copies a shared library, sets DF_SYMBOLIC in its DT_FLAGS entry and
// optionally renames its SONAME and DT_NEEDED entries (in place, to names no longer than the
// old ones). Used by the build on Debian's libsentencepiece.so.0: with DF_SYMBOLIC the library
// binds its own references to its own definitions first (its embedded protobuf-lite 3.14
// instead of LibTorch's libprotobuf 3.21), which is what RTLD_DEEPBIND did, but as a property
// of the file, so an ordinary dlopen(RTLD_LOCAL) works under the sanitizers too. See
// src/text/sentencepiece_shim.h.
//
//   ordo-elf-symbolic IN OUT [--soname NEW] [--needed OLD=NEW]...
//
// 64-bit ELF of the host's byte order only (what the build produces and loads).
#include <elf.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Image {
  std::vector<unsigned char> bytes;
  template <typename T>
  T* at(uint64_t offset, uint64_t count = 1) {
    if (offset > bytes.size() || count * sizeof(T) > bytes.size() - offset)
      throw std::runtime_error("truncated ELF file (offset " + std::to_string(offset) + ")");
    return reinterpret_cast<T*>(bytes.data() + offset);
  }
};

// File offset of a virtual address, through the PT_LOAD segments.
uint64_t file_offset(Image& image, const Elf64_Ehdr& header, uint64_t address) {
  auto* phdrs = image.at<Elf64_Phdr>(header.e_phoff, header.e_phnum);
  for (int i = 0; i < header.e_phnum; ++i)
    if (phdrs[i].p_type == PT_LOAD && address >= phdrs[i].p_vaddr &&
        address < phdrs[i].p_vaddr + phdrs[i].p_filesz)
      return address - phdrs[i].p_vaddr + phdrs[i].p_offset;
  throw std::runtime_error("address not in a loaded segment");
}

// Replaces the '\0'-terminated string at `offset` of the dynamic string table by `name`.
void rename(Image& image, uint64_t strtab, uint64_t strsz, uint64_t offset, const std::string& old_name,
            const std::string& name) {
  if (offset >= strsz) throw std::runtime_error("string offset outside .dynstr");
  char* s = image.at<char>(strtab + offset, strsz - offset);
  const size_t length = strnlen(s, strsz - offset);
  if (std::string(s, length) != old_name)
    throw std::runtime_error("expected '" + old_name + "', found '" + std::string(s, length) + "'");
  if (name.size() > length)
    throw std::runtime_error("new name '" + name + "' is longer than '" + old_name + "'");
  std::memset(s, 0, length);
  std::memcpy(s, name.data(), name.size());
}

void patch(Image& image, const std::string& soname,
           const std::vector<std::pair<std::string, std::string>>& needed) {
  auto& header = *image.at<Elf64_Ehdr>(0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) throw std::runtime_error("not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) throw std::runtime_error("not a 64-bit ELF file");
  const uint16_t probe = 1;
  const bool little = *reinterpret_cast<const unsigned char*>(&probe) == 1;
  if (header.e_ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB))
    throw std::runtime_error("ELF byte order differs from the host's");
  if (header.e_type != ET_DYN) throw std::runtime_error("not a shared library");

  auto* phdrs = image.at<Elf64_Phdr>(header.e_phoff, header.e_phnum);
  Elf64_Dyn* dynamic = nullptr;
  uint64_t count = 0;
  for (int i = 0; i < header.e_phnum; ++i)
    if (phdrs[i].p_type == PT_DYNAMIC) {
      count = phdrs[i].p_filesz / sizeof(Elf64_Dyn);
      dynamic = image.at<Elf64_Dyn>(phdrs[i].p_offset, count);
    }
  if (!dynamic) throw std::runtime_error("no dynamic section");

  Elf64_Dyn* flags = nullptr;
  uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  for (uint64_t i = 0; i < count && dynamic[i].d_tag != DT_NULL; ++i) {
    if (dynamic[i].d_tag == DT_FLAGS) flags = &dynamic[i];
    if (dynamic[i].d_tag == DT_STRTAB) strtab = dynamic[i].d_un.d_ptr, have_strtab = true;
    if (dynamic[i].d_tag == DT_STRSZ) strsz = dynamic[i].d_un.d_val;
  }
  if (!flags) {
    // No DT_FLAGS: turn a spare DT_NULL (linkers often leave several) into one.
    for (uint64_t i = 0; i + 1 < count; ++i)
      if (dynamic[i].d_tag == DT_NULL && dynamic[i + 1].d_tag == DT_NULL) {
        dynamic[i].d_tag = DT_FLAGS;
        dynamic[i].d_un.d_val = 0;
        flags = &dynamic[i];
        break;
      }
    if (!flags) throw std::runtime_error("no DT_FLAGS entry and no spare DT_NULL to hold one");
  }
  flags->d_un.d_val |= DF_SYMBOLIC;

  if (soname.empty() && needed.empty()) return;
  if (!have_strtab) throw std::runtime_error("no DT_STRTAB");
  const uint64_t strtab_offset = file_offset(image, header, strtab);
  bool soname_done = soname.empty();
  std::vector<bool> needed_done(needed.size(), false);
  for (uint64_t i = 0; i < count && dynamic[i].d_tag != DT_NULL; ++i) {
    if (dynamic[i].d_tag != DT_SONAME && dynamic[i].d_tag != DT_NEEDED) continue;
    const uint64_t offset = dynamic[i].d_un.d_val;
    if (offset >= strsz) throw std::runtime_error("string offset outside .dynstr");
    const char* s = image.at<char>(strtab_offset + offset, strsz - offset);
    const std::string current(s, strnlen(s, strsz - offset));
    if (dynamic[i].d_tag == DT_SONAME && !soname.empty()) {
      rename(image, strtab_offset, strsz, offset, current, soname);
      soname_done = true;
    }
    for (size_t k = 0; k < needed.size(); ++k)
      if (dynamic[i].d_tag == DT_NEEDED && current == needed[k].first) {
        rename(image, strtab_offset, strsz, offset, current, needed[k].second);
        needed_done[k] = true;
      }
  }
  if (!soname_done) throw std::runtime_error("no DT_SONAME entry");
  for (size_t k = 0; k < needed.size(); ++k)
    if (!needed_done[k]) throw std::runtime_error("no DT_NEEDED entry '" + needed[k].first + "'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s IN OUT [--soname NEW] [--needed OLD=NEW]...\n", argv[0]);
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  std::string soname;
  std::vector<std::pair<std::string, std::string>> needed;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--soname" && i + 1 < argc) {
      soname = argv[++i];
    } else if (arg == "--needed" && i + 1 < argc) {
      const std::string pair = argv[++i];
      const size_t eq = pair.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "%s: --needed takes OLD=NEW\n", argv[0]);
        return 2;
      }
      needed.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], arg.c_str());
      return 2;
    }
  }
  try {
    Image image;
    std::ifstream file(in, std::ios::binary);
    if (!file) throw std::runtime_error("cannot open");
    image.bytes.assign(std::istreambuf_iterator<char>(file), {});
    patch(image, soname, needed);
    const std::string temporary = out + ".tmp";
    std::ofstream output(temporary, std::ios::binary | std::ios::trunc);
    output.write(reinterpret_cast<const char*>(image.bytes.data()), static_cast<std::streamsize>(image.bytes.size()));
    output.close();
    if (!output) throw std::runtime_error("cannot write " + temporary);
    ::chmod(temporary.c_str(), 0755);
    if (std::rename(temporary.c_str(), out.c_str()) != 0) throw std::runtime_error("cannot write " + out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s: %s\n", argv[0], in.c_str(), e.what());
    return 1;
  }
  return 0;
}
