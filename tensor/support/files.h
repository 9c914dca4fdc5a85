// Files by identity: whether two paths name one file, whichever way each was spelled. What every
// command that writes asks before it writes over one of its own inputs.
#pragma once

#include <string>
#include <vector>

namespace gradformer {

/// Whether two paths name one file: ./a and a, a symbolic or hard link and its target (a kept
/// checkpoint is a hard link to the checkpoint it kept). Paths that do not exist (yet) are compared
/// as their absolute, normalised forms.
bool same_file(const std::string& a, const std::string& b);

/// The one of `paths` that names the same file as `out_path` (./a and a, a link and its target), or
/// "" when none does.
std::string input_written_over(const std::vector<std::string>& paths, const std::string& out_path);

}  // namespace gradformer
