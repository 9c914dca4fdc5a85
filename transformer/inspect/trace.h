// One sentence through every stage of a trained encoder-decoder, in the order of the paper's
// figure 1: tokens -> ids -> embedding * sqrt(d) -> + positional encoding -> each encoder layer
// (self-attention, add & norm, feed-forward, add & norm) -> decoding one token at a time (the
// prefix, cross-attention, the next-token probabilities, the choice). What `gradformer trace`
// prints, and draws as one self-contained HTML page.
//
// The encoder stages are computed here from the layers' own modules, spelled out as the paper
// writes them; a test checks that they end in exactly the bits model.encode() gives, so this walk
// and the model cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transformer/data/tokenizer.h"
#include "transformer/model/encoder_decoder.h"

namespace gradformer {

/// Summary statistics of one activation tensor, as a learner wants to see them.
struct ActivationStats {
  Shape shape;
  double mean = 0, std = 0, max_abs = 0;
  std::vector<double> first;  // the first few values of the first position's vector
};

/// One stage of the walk: a name, the equation it computes, and what came out.
struct TraceStage {
  std::string name, equation;
  ActivationStats stats;
};

struct EncoderLayerTrace {
  Tensor attention;  // [H, S, S]: row i is what source token i attends to, per head
  std::vector<TraceStage> stages;
};

struct TokenProbability {
  std::string token;
  double probability = 0;
};

/// One decoding step: the prefix the decoder saw, where its last position looked in the source
/// (each layer's cross-attention, mean over heads), the most likely next tokens, the choice.
struct DecodeStepTrace {
  std::vector<std::string> prefix;
  std::vector<std::vector<double>> cross_attention;  // [layer][S]
  std::vector<TokenProbability> top;                 // best first
  std::string chosen;
};

/// One step of beam search: the live hypotheses after it, best first.
struct BeamStepTrace {
  struct Beam {
    std::vector<std::string> tokens;
    double log_prob = 0, score = 0;
  };
  std::vector<Beam> beams;
};

struct SentenceTrace {
  TransformerConfig config;
  // The words as typed (a tokenizer of words) or the tokens' pieces ("Ġchat": bytes, BPE), then </s>
  // when source_eos.
  std::vector<std::string> source_tokens;
  bool source_eos = true;
  std::vector<int64_t> source_ids;
  std::vector<bool> unknown;  // true where the token became <unk>
  TraceStage embedding, scaled, positions, encoder_input;
  std::vector<EncoderLayerTrace> encoder;
  TraceStage memory;                      // the encoder's output (after the final norm with pre-LN)
  std::vector<DecodeStepTrace> steps;     // greedy decoding, one per generated token
  std::vector<BeamStepTrace> beam_steps;  // with beam > 1
  int64_t beam = 1;
  // Greedy's, or beam search's best with beam > 1: the words of the target tokenizer's text.
  std::vector<std::string> translation;
};

struct TraceOptions {
  int64_t beam = 1;        // 1: greedy only; K > 1: also beam search with K beams
  int64_t top = 5;         // next-token candidates shown per step
  int64_t max_len = 0;     // tokens generated at most; 0: twice the source plus 10, as translate does
  bool source_eos = true;  // the source ends in </s> (the checkpoint's data.source_eos)
};

/// Walks `sentence` (whitespace-separated words, encoded as encode_source does) through the model in
/// eval mode without a graph; the decoder's tokens are shown as pieces (Tokenizer::piece), the
/// translation as words. ValueError for an empty sentence or bad options; DataError for a sentence
/// of more tokens than the model takes, or text the tokenizer cannot encode. A Vocab converts to the
/// tokenizer of its words.
SentenceTrace trace_sentence(EncoderDecoder& model, const Tokenizer& source_tokenizer,
                             const Tokenizer& target_tokenizer, const std::vector<std::string>& sentence,
                             const TraceOptions& options = {});

/// The walk as text, stage by stage (what `gradformer trace` prints).
std::string trace_text(const SentenceTrace& trace);

/// The walk as one HTML page: inline SVG heatmaps and tables, no scripts, nothing fetched.
std::string trace_html(const SentenceTrace& trace);

}  // namespace gradformer
