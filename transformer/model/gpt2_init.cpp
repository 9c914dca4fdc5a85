#include "transformer/model/gpt2_init.h"

#include <cmath>

#include "nn/init.h"

namespace gradformer {

double Gpt2Init::residual_std(int64_t n_layer) { return weight_std / std::sqrt(2.0 * static_cast<double>(n_layer)); }

void gpt2_init_(DecoderOnly& model, Generator& gen) {
  const double residual = Gpt2Init::residual_std(model.config().layers);
  normal_(model.embed->weight, 0.0, Gpt2Init::weight_std, gen);  // wte [V, d] (also the output, when tied)
  if (!model.config().tie_embeddings)                            // untied: the output projection [V, d] too
    normal_(model.output_projection->weight, 0.0, Gpt2Init::weight_std, gen);
  if (model.positional_encoding->learned())
    normal_(model.positional_encoding->weight, 0.0, Gpt2Init::position_std, gen);  // wpe [n_ctx, d]
  auto zero = [](const Variable& bias) {
    if (bias.defined()) fill_(bias, 0.0);  // a block without biases has none to zero
  };
  for (const auto& layer : *model.decoder->layers) {
    normal_(layer->self_attn->in_proj_weight, 0.0, Gpt2Init::weight_std, gen);  // c_attn [3d, d]
    zero(layer->self_attn->in_proj_bias);
    normal_(layer->self_attn->out_proj->weight, 0.0, residual, gen);  // attn.c_proj: writes into the stream
    zero(layer->self_attn->out_proj->bias);
    normal_(layer->linear1->weight, 0.0, Gpt2Init::weight_std, gen);  // mlp.c_fc [d_ff, d] (SwiGLU: the gate)
    zero(layer->linear1->bias);
    if (layer->linear3) normal_(layer->linear3->weight, 0.0, Gpt2Init::weight_std, gen), zero(layer->linear3->bias);
    normal_(layer->linear2->weight, 0.0, residual, gen);  // mlp.c_proj: writes into the stream
    zero(layer->linear2->bias);
    layer->norm1->reset_parameters(), layer->norm2->reset_parameters();  // gains 1, biases 0
  }
  if (model.decoder->norm) model.decoder->norm->reset_parameters();  // ln_f
}

}  // namespace gradformer
