// Training the decoder-only model: causal language modelling (GPT, Radford et al., 2018, section 3.1):
//
//   "Given an unsupervised corpus of tokens U = {u_1, ..., u_n}, we use a standard language modeling
//    objective to maximize the following likelihood:  L_1(U) = sum_i log P(u_i | u_{i-k}, ..., u_{i-1}; Θ)"
//
// Tasks: toy-lm (the toy grammar's French sentences, drawn afresh for every batch) and
// toy-translation (each toy pair as one sequence "<s> source <sep> target </s>", the loss on the
// target part only).
#pragma once

#include <string>

#include "transformer/train/trainer.h"

namespace gradformer {

/// The defaults of a decoder-only task (toy-lm or toy-translation). ValueError for another task.
TrainOptions default_decoder_only_options(const std::string& task);

}  // namespace gradformer
