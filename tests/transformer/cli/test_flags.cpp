// The command-line flags of the gradformer program (transformer/cli/flags.h).
#include <string>
#include <vector>

#include "catch.h"
#include "transformer/cli/flags.h"

using namespace gradformer;

namespace {

// Flags as `gradformer demo <args...>` would give them.
struct Argv {
  explicit Argv(std::vector<std::string> args) : storage{"gradformer", "demo"} {
    storage.insert(storage.end(), args.begin(), args.end());
    for (std::string& s : storage) pointers.push_back(s.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(storage.size()); }
  char** argv() { return pointers.data(); }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
};

Flags demo_flags() {
  Flags f("demo", "A demonstration.");
  f.add("--d-model", "512", "model width");
  f.add("--lr", "0.5", "learning rate");
  f.add("--out", "", "output directory");
  f.add("--norm", "post", "post or pre");
  f.add_switch("--quiet", "say nothing");
  return f;
}

Flags parsed(std::vector<std::string> args) {
  Flags f = demo_flags();
  Argv a(std::move(args));
  REQUIRE(f.parse(a.argc(), a.argv()));
  return f;
}

}  // namespace

TEST_CASE("Flags: defaults, values, --flag=value and switches") {
  const Flags d = parsed({});
  CHECK(d.integer("--d-model") == 512);
  CHECK(d.number("--lr") == 0.5);
  CHECK(d.text("--out").empty());
  CHECK_FALSE(d.has("--out"));
  CHECK(d.has("--d-model"));
  CHECK_FALSE(d.given("--d-model"));
  CHECK_FALSE(d.on("--quiet"));
  CHECK(d.choice("--norm", {"post", "pre"}) == "post");

  const Flags f = parsed({"--d-model", "64", "--lr=1e-3", "--quiet", "--out", "runs/x", "--norm=pre"});
  CHECK(f.integer("--d-model") == 64);
  CHECK(f.given("--d-model"));
  CHECK(f.number("--lr") == 1e-3);
  CHECK(f.on("--quiet"));
  CHECK(f.text("--out") == "runs/x");
  CHECK(f.has("--out"));
  CHECK(f.choice("--norm", {"post", "pre"}) == "pre");
  // The last of a repeated flag wins; a value may start with a dash or hold an '='.
  CHECK(parsed({"--d-model", "1", "--d-model", "2"}).integer("--d-model") == 2);
  CHECK(parsed({"--d-model", "-4"}).integer("--d-model") == -4);
  CHECK(parsed({"--out=a=b"}).text("--out") == "a=b");
  CHECK(parsed({"--lr", "-2.5"}).number("--lr") == -2.5);
}

TEST_CASE("Flags: --help and -h stop parsing, and the help lists every flag with its default") {
  for (const char* help : {"--help", "-h"}) {
    Flags f = demo_flags();
    Argv a({"--d-model", "3", help, "--no-such-flag"});
    CHECK_FALSE(f.parse(a.argc(), a.argv()));
    // Anywhere, also where a flag's value would stand: --out --help is help, not a directory
    // named --help (which --out=--help still gives).
    Flags g = demo_flags();
    Argv b({"--out", help});
    CHECK(asks_for_help(b.argc(), b.argv()));
    CHECK_FALSE(g.parse(b.argc(), b.argv()));
  }
  Flags f = demo_flags();
  Argv a({"--out=--help"});
  CHECK_FALSE(asks_for_help(a.argc(), a.argv()));
  REQUIRE(f.parse(a.argc(), a.argv()));
  CHECK(f.text("--out") == "--help");
  const std::string text = demo_flags().help();
  CHECK(text.find("usage: gradformer demo [flags]") != std::string::npos);
  CHECK(text.find("A demonstration.") != std::string::npos);
  CHECK(text.find("--d-model X") != std::string::npos);
  CHECK(text.find("model width (default 512)") != std::string::npos);
  CHECK(text.find("--quiet") != std::string::npos);
  CHECK(text.find("--quiet X") == std::string::npos);           // a switch takes no value
  CHECK(text.find("output directory\n") != std::string::npos);  // no "(default )" for an empty default
  CHECK(text.find("--help") != std::string::npos);
}

TEST_CASE("Flags: command-line mistakes are UsageErrors naming the command and the flag") {
  auto parse = [](std::vector<std::string> args) {
    Flags f = demo_flags();
    Argv a(std::move(args));
    return f.parse(a.argc(), a.argv());
  };
  CHECK_THROWS_MSG(parse({"--d-modle", "3"}), UsageError, "demo: unknown flag --d-modle (see gradformer demo --help)");
  CHECK_THROWS_MSG(parse({"--d-modle=3"}), UsageError, "unknown flag --d-modle");
  CHECK_THROWS_MSG(parse({"stray"}), UsageError, "demo: unknown argument stray");
  CHECK_THROWS_MSG(parse({"--d-model"}), UsageError, "demo: --d-model needs a value");
  CHECK_THROWS_MSG(parse({"--quiet=yes"}), UsageError, "demo: --quiet takes no value");
  CHECK_THROWS_MSG(parsed({}).require("--out"), UsageError, "demo: --out is required");
  CHECK_THROWS_MSG(parsed({"--out="}).require("--out"), UsageError, "demo: --out is required");
  CHECK_NOTHROW(parsed({"--out", "runs/x"}).require("--out"));
  CHECK_NOTHROW(parsed({}).require("--d-model"));  // a default counts

  CHECK_THROWS_MSG(parsed({"--d-model", "abc"}).integer("--d-model"), UsageError,
                   "demo: --d-model expects an integer, got 'abc'");
  CHECK_THROWS_MSG(parsed({"--d-model", "12x"}).integer("--d-model"), UsageError, "expects an integer, got '12x'");
  CHECK_THROWS_MSG(parsed({"--d-model", "1.5"}).integer("--d-model"), UsageError, "expects an integer");
  CHECK_THROWS_MSG(parsed({"--d-model="}).integer("--d-model"), UsageError, "expects an integer, got ''");
  CHECK_THROWS_MSG(parsed({"--d-model", "99999999999999999999"}).integer("--d-model"), UsageError,
                   "expects an integer");
  CHECK_THROWS_MSG(parsed({"--lr", "fast"}).number("--lr"), UsageError, "demo: --lr expects a number, got 'fast'");
  CHECK_THROWS_MSG(parsed({"--lr", "0.1x"}).number("--lr"), UsageError, "expects a number");
  CHECK_THROWS_MSG(parsed({"--lr", "nan"}).number("--lr"), UsageError, "expects a number");
  CHECK_THROWS_MSG(parsed({"--lr", "inf"}).number("--lr"), UsageError, "expects a number");
  CHECK_THROWS_MSG(parsed({"--lr", "1e999"}).number("--lr"), UsageError, "expects a number");
  CHECK_THROWS_MSG(parsed({"--lr="}).number("--lr"), UsageError, "expects a number, got ''");
  CHECK_THROWS_MSG(parsed({"--norm", "middle"}).choice("--norm", {"post", "pre"}), UsageError,
                   "demo: --norm must be one of post, pre; got 'middle'");
  // Asking for a flag that was never declared is the program's bug, not the user's.
  CHECK_THROWS_MSG(parsed({}).text("--nope"), ValueError, "no flag --nope was declared");
}

TEST_CASE("Flags: a flag whose value may be left out takes one only when one follows") {
  auto profile = [](std::vector<std::string> args) {
    Flags f = demo_flags();
    f.add_optional("--profile", "profile, writing the trace to X");
    Argv a(std::move(args));
    REQUIRE(f.parse(a.argc(), a.argv()));
    return f;
  };
  CHECK_FALSE(profile({}).given("--profile"));
  const Flags last = profile({"--quiet", "--profile"});
  CHECK(last.given("--profile"));
  CHECK(last.text("--profile").empty());
  const Flags before_flag = profile({"--profile", "--quiet"});
  CHECK(before_flag.given("--profile"));
  CHECK(before_flag.text("--profile").empty());
  CHECK(before_flag.on("--quiet"));
  CHECK(profile({"--profile", "t.json", "--quiet"}).text("--profile") == "t.json");
  CHECK(profile({"--profile=u.json"}).text("--profile") == "u.json");
  Flags f = demo_flags();
  f.add_optional("--profile", "profile, writing the trace to X");
  CHECK(f.help().find("--profile [X]") != std::string::npos);
}

TEST_CASE("Flags: add_positionals takes every argument without a flag, in order, among the flags") {
  Flags f("average", "Average checkpoints.");
  f.add("--out", "", "output");
  f.add_positionals("CHECKPOINT...", "the checkpoints");
  Argv a({"a.safetensors", "--out", "avg.safetensors", "b.safetensors", "c.safetensors"});
  REQUIRE(f.parse(a.argc(), a.argv()));
  CHECK(f.positionals() == std::vector<std::string>{"a.safetensors", "b.safetensors", "c.safetensors"});
  CHECK(f.text("--out") == "avg.safetensors");
  CHECK(f.help().find("usage: gradformer average [flags] CHECKPOINT...") != std::string::npos);

  Flags one("trace", "One sentence.");
  one.add_positional("SENTENCE", "the sentence");
  Argv two({"first", "second"});
  CHECK_THROWS_MSG(one.parse(two.argc(), two.argv()), UsageError, "trace: unknown argument second");
}

TEST_CASE("defaults_table: a row for each flag whose default differs between the columns, in declaration order") {
  auto declared = [](const std::string& model, const std::string& lr, const std::string& norm) {
    Flags f("demo", "");
    f.add("--task", "", "the task");
    f.add("--d-model", model, "model width");
    f.add("--lr", lr, "learning rate");
    f.add("--out", "", "output directory");
    f.add("--norm", norm, "post or pre");
    f.add_switch("--quiet", "say nothing");
    return f;
  };
  const std::string table = defaults_table(
      {{"copy", declared("512", "0.5", "post")}, {"toy-translation", declared("512", "1", "pre")}}, {"--task"});
  // The column widths: "--norm" 6 wide, "copy" 4, "toy-translation" 15, two spaces before each.
  CHECK(table ==
        "          copy  toy-translation\n"
        "  --lr    0.5   1\n"
        "  --norm  post  pre\n");
  // One column: nothing differs.
  CHECK(defaults_table({{"copy", declared("512", "0.5", "post")}}) == "    copy\n");
  CHECK(defaults_table({}).empty());
}
