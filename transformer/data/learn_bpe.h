// Learning byte-pair merges from a text, as byte-level BPE does (Sennrich et al. 2016, on bytes as
// in GPT-2): start from the 256 bytes; count every pair of neighbouring tokens inside each
// pre-token, weighted by how often the pre-token occurs; join the most frequent pair everywhere,
// left to right without overlap, as a new token; repeat until the vocabulary has the size asked for.
//
// STATUS: correct and tested on hand-worked examples, but slow: every merge recounts all pairs of
// every distinct pre-token (time ~ merges x distinct pre-tokens' length). Learning 8,000 tokens from
// 10 MB of text in seconds needs incremental pair counts (update only the words that held the
// merged pair) and a priority queue of counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transformer/data/bpe.h"

namespace gradformer {

/// Merges learned from pre_tokens (each a string of bytes; merges never cross from one into the
/// next) until the vocabulary holds vocab_size tokens, or no two tokens are neighbours any more.
/// Tokens 0..255 are the bytes (id = byte value), then one token per merge in the order learned.
/// Ties between pairs of equal count go to the pair of smaller ids (left id, then right id), so
/// the result depends on the text alone. A merge whose joined bytes are already a token (possible:
/// "a"+"bc" and "ab"+"c") reuses that token's id. ValueError for vocab_size < 256.
BytePairEncoding learn_bpe(const std::vector<std::string>& pre_tokens, int64_t vocab_size);

}  // namespace gradformer
