// What every chapter's program uses to check the claims its chapter makes: a claim that stops
// holding prints CLAIM FAILED, and the program then exits non-zero, so the test suite (which runs
// every chapter's program) fails too.
#pragma once

#include <filesystem>
#include <iostream>
#include <string>

namespace tutorial {

inline int failures = 0;  // claims that did not hold

inline void claim(bool holds, const char* what) {
  if (!holds) {
    std::cout << "CLAIM FAILED: " << what << "\n";
    ++failures;
  }
}

inline void section(const char* title) { std::cout << "\n== " << title << " ==\n"; }

/// Where the program puts a file it makes (a figure, a page, a model's files): runs/NAME in the
/// folder it runs in. git ignores runs/, so a program run from the repository's root leaves the
/// repository as it was. Makes the folder runs/ if need be.
inline std::string output_path(const std::string& name) {
  std::filesystem::create_directories("runs");
  return "runs/" + name;
}

}  // namespace tutorial
