#include "tensor/support/files.h"

#include <filesystem>

namespace gradformer {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  const bool a_exists = fs::exists(a, error), b_exists = fs::exists(b, error);
  if (a_exists != b_exists) return false;
  if (a_exists) return fs::equivalent(a, b, error);  // false when it cannot tell
  const fs::path canonical_a = fs::weakly_canonical(a, error);
  if (error) return false;
  const fs::path canonical_b = fs::weakly_canonical(b, error);
  return !error && canonical_a == canonical_b;
}

std::string input_written_over(const std::vector<std::string>& paths, const std::string& out_path) {
  for (const std::string& path : paths)
    if (same_file(path, out_path)) return path;
  return "";
}

}  // namespace gradformer
