// Checks exercises::parameter_count (tutorials/exercises/10_parameter_count.cpp, or the reference
// solution): against the parameters of models the library builds, against the library's formula for
// the paper's base and big models, and the base model against a count written out here from its sizes
// and the paper's table 3 figure, 65M. Prints what it found; exits 1 if a check fails or the file is
// still the stub.
#include <cmath>
#include <cstdio>
#include <string>

#include "exercises.h"

using namespace gradformer;

static bool report(const std::string& what, int64_t mine, int64_t expected) {
  const bool same = mine == expected;
  std::printf("%-50s: %10lld, expected %10lld: %s\n", what.c_str(), static_cast<long long>(mine),
              static_cast<long long>(expected), same ? "yes" : "NO");
  return same;
}

static int checks() {
  int failed = 0;
  // Small models, built: the count must be what they hold.
  TransformerConfig tutorial = TransformerConfig::tutorial(11, 13), tied = TransformerConfig::tutorial(11, 11),
                    pre = TransformerConfig::tutorial(11, 13), learned = TransformerConfig::tutorial(11, 13);
  tied.tie_embeddings = true;
  pre.norm = NormPlacement::Pre;
  learned.positions = Positions::Learned;
  learned.max_len = 40;
  const std::pair<std::string, TransformerConfig> built[] = {
      {"tutorial, vocabularies 11 and 13", tutorial},
      {"tutorial, tied, vocabulary 11", tied},
      {"tutorial, pre-LN", pre},
      {"tutorial, learned positions (max_len 40)", learned},
  };
  for (const auto& [name, config] : built)
    if (!report(name + " (built)", exercises::parameter_count(config), EncoderDecoder(config, 0).parameter_count()))
      ++failed;

  // The paper's models, too big to build here: the library's formula.
  TransformerConfig base_untied = TransformerConfig::base();
  base_untied.tie_embeddings = false;
  const std::pair<std::string, TransformerConfig> paper[] = {
      {"base (tied)", TransformerConfig::base()},
      {"big (tied)", TransformerConfig::big()},
      {"base, untied", base_untied},
  };
  for (const auto& [name, config] : paper)
    if (!report(name + " (the library's count)", exercises::parameter_count(config),
                gradformer::parameter_count(config)))
      ++failed;

  // Base from its sizes: d 512, d_ff 2048, N 6, a shared vocabulary of 37,000 tokens.
  const int64_t d = 512, d_ff = 2048, N = 6, V = 37000;
  const int64_t attention = 4 * (d * d + d), feed_forward = (d * d_ff + d_ff) + (d_ff * d + d), norm = 2 * d;
  const int64_t base = V * d  // the one embedding matrix
                       + V    // the output projection's bias (its weight is the embedding)
                       + N * (attention + feed_forward + 2 * norm)       // encoder layers
                       + N * (2 * attention + feed_forward + 3 * norm);  // decoder layers
  const int64_t mine = exercises::parameter_count(TransformerConfig::base());
  if (!report("base (counted from its sizes)", mine, base)) ++failed;
  const double paper_base = 65e6;  // table 3: "65" (x 10^6) parameters
  const bool near_paper = std::abs(static_cast<double>(mine) - paper_base) < 0.05 * paper_base;
  std::printf("base within 5%% of the paper's 65M: %s\n", near_paper ? "yes" : "NO");
  if (!near_paper) ++failed;

  std::printf(failed == 0 ? "parameter count: all checks pass\n" : "parameter count: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("10_parameter_count.cpp", 10, checks); }
