// One include for the tests, whether Catch2 v2 or v3 is installed, plus the helpers all layers use.
#pragma once

#if defined(GRADFORMER_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

#include <string>

namespace test {

/// Runs fn, expecting it to throw E; returns the message (and fails the test if nothing is thrown).
/// Another exception type propagates and fails the test too.
template <class E, class F>
std::string error_message(F&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception, none was thrown");
  return {};
}

}  // namespace test

/// CHECK_THROWS_MSG(expr, Type, "substring"): expr throws Type whose message contains "substring".
#define CHECK_THROWS_MSG(expr, Type, text)                                        \
  do {                                                                            \
    const std::string gf_msg_ = test::error_message<Type>([&] { (void)(expr); }); \
    INFO("message: " << gf_msg_);                                                 \
    CHECK(gf_msg_.find(text) != std::string::npos);                               \
  } while (0)
