// Learning byte-pair merges from a text, as byte-level BPE does (Sennrich et al. 2016, on bytes as
// in GPT-2): start from the 256 bytes; count every pair of neighbouring tokens inside each
// pre-token, weighted by how often the pre-token occurs; join the most frequent pair everywhere,
// left to right without overlap, as a new token; repeat until the vocabulary has the size asked for.
//
// The count of a pair is the number of places i where token i and token i + 1 are the pair, in
// every occurrence of every pre-token: "aaaa" counts (a, a) three times, although only two of them
// can be joined.
//
// Fast, by counting incrementally: the pre-tokens are kept once each with their counts, their
// tokens as linked lists; the pair counts live in a hash map, and each pair knows the places where
// it starts. A merge visits only those places and recounts only the pairs on either side of each;
// a max-heap of (count, pair) finds the next most frequent pair, an entry whose count is no longer
// the pair's being stale and skipped when it comes to the top. So a merge costs time in proportion
// to what it changes, not to the text, and one long pre-token (a text without spaces) costs what
// many short ones do.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "transformer/data/bpe.h"

namespace gradformer {

/// Each distinct pre-token (a string of bytes) and how often it occurs.
using PreTokenCounts = std::unordered_map<std::string, int64_t>;

/// Adds one to counts[p] for each p in pre_tokens: a long text can be counted piece by piece
/// (document by document, say) without keeping all its pre-tokens at once.
void add_pre_token_counts(PreTokenCounts& counts, const std::vector<std::string>& pre_tokens);

/// Merges learned from the pre-tokens, each occurring counts[pre_token] times (merges never cross
/// from one pre-token into the next), until the vocabulary holds vocab_size tokens or no pair is
/// left to merge. Tokens 0..255 are the bytes (id = byte value), then one token per merge in the
/// order learned. Ties between pairs of equal count go to the pair of smaller ids (left id, then
/// right id), so the result depends on the text alone. A merge whose joined bytes are already a
/// token (possible: "a"+"bc" and "ab"+"c") reuses that token's id.
///
/// No pair whose joined bytes equal one of `reserved` is ever merged (the next most frequent pair
/// is taken instead), so no learned token spells, say, a special token's name "<pad>".
///
/// ValueError for vocab_size < 256, a negative count, or a reserved string of fewer than two bytes
/// (every single byte is a token already).
BytePairEncoding learn_bpe_from_counts(const PreTokenCounts& counts, int64_t vocab_size,
                                       const std::vector<std::string>& reserved = {});

/// As learn_bpe_from_counts, counting the pre-tokens first: a pre-token given n times counts n.
BytePairEncoding learn_bpe(const std::vector<std::string>& pre_tokens, int64_t vocab_size,
                           const std::vector<std::string>& reserved = {});

}  // namespace gradformer
