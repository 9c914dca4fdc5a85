// Every parameter a model of a configuration has, its name, shape and dtype, from the configuration
// alone: nothing is allocated. A checkpoint reader compares a file's tensors with these before it
// builds anything, so a file whose metadata asks for a model far larger than its tensors is refused
// at the cost of reading its header, not of allocating that model.
//
// The lists mirror the constructors (EncoderDecoder, DecoderOnly, EncoderOnly and the layers they
// are made of) name for name, in named_parameters() order; the model tests build each kind of model
// in every variant and require its parameter_specs() to equal these.
#pragma once

#include <vector>

#include "nn/module.h"
#include "transformer/model/config.h"
#include "transformer/model/encoder_only.h"

namespace gradformer {

/// An encoder-decoder's or a decoder-only model's parameters (config.arch says which); the
/// configuration's validate() errors first, so the sizes in the list are bounded.
std::vector<ParameterSpec> parameter_specs(const TransformerConfig& config);
/// An encoder-only model's parameters, the classifier's and the MLM head's included.
std::vector<ParameterSpec> parameter_specs(const EncoderOnlyConfig& config);

}  // namespace gradformer
