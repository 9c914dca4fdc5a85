// Two more text files a user gives: sentences, one a line (what a language model or a masked-language
// model learns from), and labelled sentences, "label<TAB>sentence" a line (what a classifier learns
// from). Read as tsv.h reads a parallel corpus: by LineReader (line_reader.h: Windows line ends and
// a UTF-8 byte-order mark are fine, a line that is not UTF-8 is an error, a line over 1 MiB or a
// failed read a ReadError), blank lines (only spaces and tabs) skipped, a sentence split into tokens
// by split_words, and every error a DataError "path:line: what is wrong", or "path: what is wrong"
// about the file as a whole.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "transformer/data/data_error.h"
#include "transformer/data/mlm.h"
#include "transformer/data/tsv.h"

namespace gradformer {

/// Reads `path`: one sentence a line, its tokens separated by spaces. max_tokens > 0 rejects a
/// sentence of more tokens than that: pass the model's maximum length less the specials the
/// caller adds (two for encode_sequences' <s> and </s>). DataError "path:line: ..." for an
/// over-long sentence, a line that is not UTF-8, or a line holding a tab (a file of sentences has
/// none; a line with one is a TSV line, a pair or a labelled sentence, given where sentences were
/// expected); "path: ..." for a file that cannot be opened, a directory, or a file that holds no
/// sentence at all.
std::vector<std::vector<std::string>> read_sentences(const std::string& path, int64_t max_tokens = 0);
/// As read_sentences, from a stream; `name` stands in for the path in messages.
std::vector<std::vector<std::string>> parse_sentences(std::istream& in, const std::string& name,
                                                      int64_t max_tokens = 0);

/// A classification task's examples and the names of its classes.
struct LabelledCorpus {
  std::vector<std::string> labels;         // the class names; example.label indexes them
  std::vector<LabelledSentence> examples;  // in the order of the file's lines
};

/// Reads `path`: one example a line, "label<TAB>sentence", the sentence's tokens separated by
/// spaces. A label is the text before the tab less the whitespace around it, and must be one word
/// (no whitespace inside) so that it prints as one word on a line of output. Any names will do
/// ("negated", "pos", "3"), as many as the file has.
///
/// With known_labels empty (a training file), `labels` are the file's distinct labels in the order
/// they first appear, and the file must hold at least two. With known_labels given (a validation
/// or test file, read with the training file's labels), `labels` are known_labels, every label of
/// the file must be one of them, and one class is enough.
///
/// max_tokens as for read_sentences. DataError "path:line: ..." for a line without a tab or with
/// more than one, an empty label, a label with whitespace inside, a label not among known_labels, an
/// empty or over-long sentence, a line that is not UTF-8; "path: ..." for a file that cannot be
/// opened, a directory, a file that holds no example at all, and a training file whose sentences
/// all have the same label. ValueError for a negative max_tokens, or known_labels that are not
/// distinct labels.
LabelledCorpus read_labelled(const std::string& path, int64_t max_tokens = 0,
                             const std::vector<std::string>& known_labels = {});
/// As read_labelled, from a stream; `name` stands in for the path in messages.
LabelledCorpus parse_labelled(std::istream& in, const std::string& name, int64_t max_tokens = 0,
                              const std::vector<std::string>& known_labels = {});

}  // namespace gradformer
