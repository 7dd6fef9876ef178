// Opening the files of a model folder safely. Every model file is opened by a path a user
// gave us, and a FIFO, socket, device or directory in its place would block a reader forever
// or fail later with an obscure stream error; so each is checked to be a regular file first
// and opened without blocking, and errors name the path and what is wrong with it.
#pragma once

#include <cstdint>
#include <string>

namespace ordo::io {

// kUnreadable: something may be there but cannot be looked at (no permission on a folder on
// the way, a symlink loop, a name too long): its reader reports why, with the system's words.
enum class PathKind { kMissing, kRegular, kDirectory, kOther, kUnreadable };

// What is at `path` (following symlinks); never opens it. kMissing only when nothing is there
// (ENOENT, or a part of the path is not a folder).
PathKind path_kind(const std::string& path);
// Anything at all is there (a broken or unreadable file counts: its reader reports the problem
// instead of a caller saying "not found").
inline bool path_exists(const std::string& path) { return path_kind(path) != PathKind::kMissing; }

// Throws ordo::Error "<path>: file not found (<hint>)" when missing and "<path>: is a
// directory / a FIFO, socket or device, not a regular file" otherwise. Returns `path`.
const std::string& require_regular_file(const std::string& path, const std::string& hint = "");

// Opens `path` read-only without blocking (O_NONBLOCK: a FIFO cannot hang the open), checks
// that it is a regular file, and returns the descriptor (O_CLOEXEC). Throws ordo::Error.
int open_regular_file(const std::string& path);

// The whole content of a regular file. Throws ordo::Error naming the file.
std::string read_regular_file(const std::string& path);
// The same held to `max_bytes`: a larger file is refused before it is read (and one that grows
// while it is read, once it passes the bound) with "<path>: N bytes, over the limit of
// `max_bytes` bytes (`limit_name`)".
std::string read_regular_file(const std::string& path, int64_t max_bytes, const std::string& limit_name);
// That message, for callers that hold bytes from elsewhere to the same bound.
std::string over_byte_limit(const std::string& path, int64_t bytes, int64_t max_bytes, const std::string& limit_name);

}  // namespace ordo::io
