// GPT-2's initialisation (transformer/model/gpt2_init.h): each group of parameters drawn with the
// standard deviation the formula gives, measured on the drawn values (the sample standard deviation
// of tens of thousands of normals is within a few parts in a thousand of the true one), biases and
// LayerNorms exact, and no parameter left undrawn.
#include <cmath>
#include <string>
#include <vector>

#include "model_helpers.h"
#include "nn/init.h"
#include "transformer/model/gpt2_init.h"

using namespace gradformer;

namespace {

TransformerConfig small_gpt2(int64_t layers, bool tied) {
  TransformerConfig c = decoder_only_config(500);
  c.d_model = 64, c.d_ff = 256, c.heads = 4, c.layers = layers, c.max_len = 128, c.dropout = 0;
  c.positions = Positions::Learned, c.activation = Activation::GELUTanh, c.scale_embedding = false;
  c.tie_embeddings = tied;
  return c;
}

struct Moments {
  double mean = 0, std = 0;
  size_t count = 0;
};

// The mean and standard deviation of every value of the given parameters together.
Moments moments(const std::vector<Variable>& group) {
  std::vector<double> all;
  for (const Variable& p : group)
    for (double v : p.value().to(DType::Float64).contiguous().to_vector<double>()) all.push_back(v);
  Moments m;
  m.count = all.size();
  for (double v : all) m.mean += v / static_cast<double>(all.size());
  for (double v : all) m.std += (v - m.mean) * (v - m.mean) / static_cast<double>(all.size() - 1);
  m.std = std::sqrt(m.std);
  return m;
}

bool all_equal(const Variable& p, double value) {
  for (double v : p.value().to(DType::Float64).contiguous().to_vector<double>())
    if (v != value) return false;
  return true;
}

}  // namespace

TEST_CASE("gpt2_init_: the residual std is 0.02 / sqrt(2 n_layer)") {
  CHECK(Gpt2Init::residual_std(1) == Approx(0.02 / std::sqrt(2.0)));
  CHECK(Gpt2Init::residual_std(12) == Approx(0.02 / std::sqrt(24.0)));
  CHECK(Gpt2Init::residual_std(48) == Approx(0.02 / std::sqrt(96.0)));
}

TEST_CASE("gpt2_init_: each group's empirical std matches the formula, for 1 and 6 layers") {
  for (int64_t layers : {1, 6}) {
    DecoderOnly model(small_gpt2(layers, /*tied=*/true), /*seed=*/1);
    Generator gen(5);
    gpt2_init_(model, gen);
    std::vector<Variable> matrices, residual;
    for (const auto& layer : *model.decoder->layers) {
      matrices.push_back(layer->self_attn->in_proj_weight);
      matrices.push_back(layer->linear1->weight);
      residual.push_back(layer->self_attn->out_proj->weight);
      residual.push_back(layer->linear2->weight);
    }
    const double expected_residual = 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
    struct Group {
      const char* name;
      Moments m;
      double std;
    };
    for (const Group& g : {Group{"wte", moments({model.embed->weight}), 0.02},
                           Group{"wpe", moments({model.positional_encoding->weight}), 0.01},
                           Group{"c_attn and c_fc", moments(matrices), 0.02},
                           Group{"the two residual projections", moments(residual), expected_residual}}) {
      INFO(g.name << " with " << layers << " layer(s): std " << g.m.std << " over " << g.m.count << " values");
      // the sample std of n normals has a relative standard error of 1 / sqrt(2 n): under 0.6% here
      const double tolerance = 5.0 / std::sqrt(2.0 * static_cast<double>(g.m.count));
      CHECK(std::abs(g.m.std / g.std - 1.0) < tolerance);
      CHECK(std::abs(g.m.mean) < 5.0 * g.std / std::sqrt(static_cast<double>(g.m.count)));
    }
  }
}

TEST_CASE("gpt2_init_: biases 0, LayerNorm gains 1 and biases 0, no parameter left as it was") {
  DecoderOnly model(small_gpt2(2, /*tied=*/false), /*seed=*/1);
  for (const auto& [name, p] : model.named_parameters()) fill_(p, 7.0);  // what must not survive
  Generator gen(9);
  gpt2_init_(model, gen);
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    const bool is_bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    const bool is_norm = name.find("norm") != std::string::npos;
    if (is_norm && !is_bias) {
      CHECK(all_equal(p, 1.0));
    } else if (is_bias) {
      CHECK(all_equal(p, 0.0));
    } else {
      const Moments m = moments({p});
      CHECK(m.std > 0.002);  // drawn, not 7 and not constant
      CHECK(m.std < 0.03);
    }
  }
  // untied: the output projection is drawn as every other matrix
  CHECK(moments({model.output_projection->weight}).std == Approx(0.02).epsilon(0.05));
}

TEST_CASE("gpt2_init_: the same generator state gives the same model") {
  DecoderOnly a(small_gpt2(2, true), 1), b(small_gpt2(2, true), 2);
  Generator ga(11), gb(11);
  gpt2_init_(a, ga);
  gpt2_init_(b, gb);
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO(pa[i].first);
    CHECK(pa[i].second.value().contiguous().to_vector<float>() == pb[i].second.value().contiguous().to_vector<float>());
  }
}
