// Files by identity: whether two paths name one file, whichever way each was spelled. What every
// command that writes asks before it writes over one of its own inputs. And the one way a file a
// user sees is written: whole, beside its target, renamed into place, never over what is not a file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/support/error.h"

namespace gradformer {

/// Whether two paths name one file: ./a and a, a symbolic or hard link and its target (a kept
/// checkpoint is a hard link to the checkpoint it kept). Paths that do not exist (yet) are compared
/// as their absolute, normalised forms.
bool same_file(const std::string& a, const std::string& b);

/// The one of `paths` that names the same file as `out_path` (./a and a, a link and its target), or
/// "" when none does.
std::string input_written_over(const std::vector<std::string>& paths, const std::string& out_path);

/// A file that cannot or must not be written: the message names the path and why.
struct OutputError : Error {
  using Error::Error;
};

/// Whether a command may write `path`, asked before any work: OutputError "PATH: a symbolic link,
/// not a regular file; not replacing it" when it exists and is not a regular file (a directory, a
/// device such as /dev/null, a FIFO, a socket, a link: replacing the name would replace that node),
/// and "PATH exists; give FORCE_FLAG to replace it" when it is a file and `replace` is false.
void check_output_path(const std::string& path, bool replace, const std::string& force_flag = "--force");

/// Writes a file whole: `write(fd)` fills a temporary created exclusively (O_EXCL: never through a
/// link planted under its name) beside `path`, named PATH.tmp-<pid>-<n>; it is synced and renamed
/// over `path`, so `path` is always the old file or the whole new one. The temporary is removed if
/// anything fails, and temporaries of `path` whose writer is gone (killed mid-write) are removed
/// first. `write` returns false when a write failed (errno says why). OutputError naming the path and
/// the system's reason; a `path` that exists and is not a regular file is refused, never replaced.
void write_file_whole(const std::string& path, const std::function<bool(int fd)>& write);
/// The same for a file whose bytes are all in hand (a page, a tokenizer's JSON, a figure).
void write_file_whole(const std::string& path, std::string_view bytes);
/// `write` for write_file_whole: all `size` bytes, or false.
bool write_all(int fd, const void* data, std::size_t size);
/// A fingerprint of a file's bytes: their 64-bit FNV-1a hash as 16 hex digits, read in chunks, so
/// memory does not grow with the file. It tells the same text from another file of the same length
/// (what a resumed run asks), not a forged file from the real one. Error naming the path and the
/// system's reason when the file cannot be read.
std::string file_fingerprint(const std::string& path);

/// ": <the system's reason>" for the last failed call (errno), or "" when it set none.
std::string system_reason();

}  // namespace gradformer
