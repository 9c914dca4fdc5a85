// How a checkpoint's tensors reach the model (transformer/store/checkpoint.cpp): views of the file
// mapped into memory, or read straight into the model's own parameters where a view cannot be made
// (read_checkpoint_header, the loaders given a path), or
// copied from the tensors read_checkpoint_file read (a caller that keeps them). Either way the
// model holds exactly the saved values, and a file that is refused is refused alike.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../train/training_helpers.h"
#include "catch.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace {

struct Saved {
  std::string path;
  StateDict values;  // the saved model's parameters, cloned
};

// A small decoder-only model with tied embeddings, saved under `name`.
Saved saved_decoder_only(const std::string& name) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  const Tokenizer tokenizer = Tokenizer::gpt2(BytePairEncoding(tokens, {}));
  TransformerConfig c = decoder_only_config(tokenizer.size());
  c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 2, c.max_len = 12, c.positions = Positions::Learned;
  c.tie_embeddings = true;
  const DecoderOnly model(c, 3);
  CheckpointInfo info;
  info.config = c, info.source_tokenizer = tokenizer, info.target_tokenizer = tokenizer;
  Saved saved{(std::filesystem::temp_directory_path() / ("gradformer-test-load-" + name + ".safetensors")).string(),
              {}};
  save_checkpoint(saved.path, model, c, {}, info);
  for (const auto& [key, value] : model.state_dict()) saved.values.emplace(key, value.clone());
  return saved;
}

// Every parameter of `model` equals, element for element, the saved value of its name.
void require_exactly(const Module& model, const StateDict& values) {
  const auto parameters = model.named_parameters();
  REQUIRE(parameters.size() == values.size());
  for (const auto& [name, parameter] : parameters) {
    INFO(name);
    REQUIRE(parameter.value().shape() == values.at(name).shape());
    REQUIRE(parameter.value().contiguous().to_vector<float>() == values.at(name).to_vector<float>());
  }
}

}  // namespace

TEST_CASE("checkpoint load: a path loads into exactly the saved parameters") {
  const Saved saved = saved_decoder_only("path");
  const LoadedDecoderOnly loaded = load_decoder_only_checkpoint(saved.path);
  require_exactly(*loaded.model, saved.values);
}

TEST_CASE("checkpoint load: a header read leaves the parameters in the file for the model, a file read is copied") {
  const Saved saved = saved_decoder_only("header");
  const CheckpointFile header = read_checkpoint_header(saved.path);
  CHECK(header.parameters.empty());
  REQUIRE(header.unread_parameters.has_value());
  CHECK(header.unread_parameters->tensor_specs().size() == saved.values.size());
  const LoadedDecoderOnly from_header = load_decoder_only_checkpoint(header);
  require_exactly(*from_header.model, saved.values);

  const CheckpointFile read = read_checkpoint_file(saved.path);
  CHECK_FALSE(read.unread_parameters.has_value());
  const LoadedDecoderOnly copied = load_decoder_only_checkpoint(read);
  require_exactly(*copied.model, saved.values);
  for (const auto& [name, parameter] : copied.model->named_parameters())
    CHECK_FALSE(parameter.value().shares_storage_with(read.parameters.at(name)));
}

TEST_CASE("checkpoint load: a loaded model's parameters can be trained while the file stays as saved") {
  // The parameters are views of the mapped file (copy-on-write): writing one copies its pages.
  const Saved saved = saved_decoder_only("written");
  std::ifstream in(saved.path, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  {
    const LoadedDecoderOnly loaded = load_decoder_only_checkpoint(saved.path);
    require_exactly(*loaded.model, saved.values);
    for (auto& [name, parameter] : loaded.model->named_parameters()) {
      Tensor value = parameter.value();  // a handle to the parameter's own storage
      value.fill_(0.25);
    }
    for (const auto& [name, parameter] : loaded.model->named_parameters())
      CHECK(sum(parameter.value()).item() == 0.25 * static_cast<double>(parameter.value().numel()));
  }
  std::ifstream again(saved.path, std::ios::binary);
  CHECK(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()) == before);
  require_exactly(*load_decoder_only_checkpoint(saved.path).model, saved.values);
}

TEST_CASE("checkpoint load: SafetensorsReader refuses a destination of another shape and a name the file lacks") {
  const Saved saved = saved_decoder_only("reader");
  const SafetensorsReader reader(saved.path);
  const std::string name = saved.values.begin()->first;
  CHECK_THROWS_MSG(reader.read_into(name, zeros({3})), CheckpointError, "tensor \"" + name + "\": is ");
  CHECK_THROWS_MSG(reader.read("no.such.tensor"), CheckpointError, "no such tensor in the file");
  CHECK(reader.read(name).to_vector<float>() == saved.values.at(name).to_vector<float>());
}

TEST_CASE("checkpoint load: a truncated or corrupted file is refused by every loader alike") {
  const Saved saved = saved_decoder_only("refused");
  std::ifstream in(saved.path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = saved.path + ".truncated", trailing = saved.path + ".trailing";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  std::ofstream(trailing, std::ios::binary) << bytes << "xxxx";
  for (const std::string& bad : {truncated, trailing}) {
    INFO(bad);
    CHECK_THROWS_AS(load_decoder_only_checkpoint(bad), CheckpointError);
    CHECK_THROWS_AS(read_checkpoint_file(bad), CheckpointError);
    CHECK_THROWS_AS(read_checkpoint_header(bad), CheckpointError);
  }
  // A non-finite parameter written by another program: refused before any model is built.
  SafetensorsFile file = load_safetensors(saved.path);
  const std::string name = file.tensors.begin()->first;
  file.tensors[name] = full(file.tensors.at(name).shape(), NAN);
  const std::string nan = saved.path + ".nan";
  save_safetensors(nan, file.tensors, file.metadata);
  const std::string refused = nan + ": a non-finite parameter (" + name + " holds nan): the model is unusable";
  CHECK_THROWS_MSG(load_decoder_only_checkpoint(nan), CheckpointError, refused);  // read into the model
  CHECK_THROWS_MSG(read_checkpoint_file(nan), CheckpointError, refused);          // read, then checked
}
