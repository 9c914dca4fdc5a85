// What every chapter's program uses to check the claims its chapter makes: a claim that stops
// holding prints CLAIM FAILED, and the program then exits non-zero, so the test suite (which runs
// every chapter's program) fails too.
#pragma once

#include <iostream>

namespace tutorial {

inline int failures = 0;  // claims that did not hold

inline void claim(bool holds, const char* what) {
  if (!holds) {
    std::cout << "CLAIM FAILED: " << what << "\n";
    ++failures;
  }
}

inline void section(const char* title) { std::cout << "\n== " << title << " ==\n"; }

}  // namespace tutorial
