// Saved text state read strictly (tensor/support/saved_state.h), and a generator's state as text.
#include <limits>

#include "catch.h"
#include "tensor/random.h"
#include "tensor/support/saved_state.h"

using namespace gradformer;

TEST_CASE("parse_integer takes the whole text or nothing") {
  CHECK(parse_integer("12", "x") == 12);
  CHECK(parse_integer("-7", "x") == -7);
  CHECK(parse_integer("+7", "x") == 7);
  CHECK(parse_integer("9223372036854775807", "x") == std::numeric_limits<int64_t>::max());
  for (const char* bad : {"", "12abc", " 12", "12 ", "1.5", "abc", "+", "-", "9223372036854775808", "0x10"}) {
    INFO(bad);
    CHECK_THROWS_MSG(parse_integer(bad, "f: 'k'"), CheckpointError,
                     std::string("f: 'k' should be an integer, got '") + bad + "'");
  }
}

TEST_CASE("parse_number takes the whole text as a finite number or nothing") {
  CHECK(parse_number("0.5", "x") == 0.5);
  CHECK(parse_number("-3", "x") == -3.0);
  CHECK(parse_number("0.10000000000000001", "x") == 0.1);  // what "%.17g" prints for 0.1
  CHECK(parse_number("1e-9", "x") == 1e-9);
  for (const char* bad : {"", "fast", "0.5x", " 0.5", "nan", "inf", "1e999"}) {
    INFO(bad);
    CHECK_THROWS_MSG(parse_number(bad, "f: 'k'"), CheckpointError,
                     std::string("f: 'k' should be a number, got '") + bad + "'");
  }
}

TEST_CASE("SavedState names the file and the key") {
  const std::map<std::string, std::string> entries = {{"step", "42"}, {"lr", "0.25"}, {"bad", "12abc"}};
  const SavedState saved(entries, "run.safetensors");
  CHECK(saved.contains("step"));
  CHECK_FALSE(saved.contains("epoch"));
  CHECK(saved.integer("step") == 42);
  CHECK(saved.number("lr") == 0.25);
  CHECK(saved.text("bad") == "12abc");
  CHECK_THROWS_MSG(saved.integer("bad"), CheckpointError, "run.safetensors: 'bad' should be an integer, got '12abc'");
  CHECK_THROWS_MSG(saved.text("epoch"), CheckpointError, "run.safetensors: no 'epoch' saved");
}

TEST_CASE("a generator's state survives its text form") {
  Generator g(7, 3), h(0);
  (void)g.next_u32();
  restore_generator(h, generator_state_text(g), "x");
  for (int i = 0; i < 5; ++i) CHECK(g.next_u32() == h.next_u32());
  CHECK_THROWS_MSG(restore_generator(h, "1", "f.safetensors"), CheckpointError,
                   "f.safetensors: a generator state should be two integers, got '1'");
  CHECK_THROWS_MSG(restore_generator(h, "1 2 3", "f.safetensors"), CheckpointError, "two integers");
}
