// gradformer translate and classify: one output line per line of standard input, whatever the line.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/data/tsv.h"

namespace gradformer {

int64_t answer_each_line(const char* command, const char* verb, const LineAnswer& answer) {
  // Standard input as C's stdin, not std::cin: a directory given as input or a closed descriptor is
  // a read error that std::ferror reports and std::cin hides (it looks like an empty input).
  LineReader lines(stdin, "standard input");
  int64_t unanswered = 0;
  for (std::string line;;) {
    try {
      if (!lines.next(line)) break;
      const std::vector<std::string> words = split_words(line);
      if (!words.empty()) std::cout << answer(words);
    } catch (const ReadError&) {
      throw;  // the input cannot be read on: stop, and main() prints the one line
    } catch (const DataError& e) {
      ++unanswered;
      std::cerr << "gradformer " << command << ": line " << lines.line_number() << " not " << verb
                << " (an empty line is printed): " << e.what() << "\n";
    }
    std::cout << "\n" << std::flush;  // a line at a time: a pipe's reader gets each answer as it is made
    // Answers nobody can read (a full disk, a closed output): stop now, not after the whole input.
    if (!std::cout) {
      const int reason = errno;
      throw DataError(message("writing standard output failed at line ", lines.line_number(), ": ",
                              reason != 0 ? std::strerror(reason) : "the stream failed"));
    }
  }
  return unanswered;
}

int unanswered_status(const char* command, const char* verb, int64_t unanswered) {
  if (unanswered == 0) return 0;
  std::cerr << "gradformer " << command << ": " << unanswered << (unanswered == 1 ? " line" : " lines")
            << " could not be " << verb << "\n";
  return 1;
}

}  // namespace gradformer
