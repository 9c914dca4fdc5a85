// A Hugging Face hub folder's tensors (transformer/store/hub_folder.h): model.safetensors or shards
// and their index (one shard written by hand in BF16 and F16), each error of a folder, the files an
// import reads, and the check of the tensors against the config. Every value asserted comes from the
// files this test writes.
#include "hub_folder_files.h"
#include "transformer/store/hub_folder.h"

using namespace gradformer;
using namespace hub_test;

// ---- the tensors: one file, or shards and their index ---------------------------------------------

TEST_CASE("hub tensors: model.safetensors alone, each tensor read where it is") {
  TempDir dir("hub-single");
  const StateDict state = tiny_llama_state(true);
  write_single_file_folder(dir, state);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.index_file().empty());
  CHECK(tensors.files() == std::vector<std::string>{dir / "model.safetensors"});
  REQUIRE(tensors.specs().size() == state.size());
  for (const ParameterSpec& spec : tensors.specs()) {  // name order, as the state's map
    INFO(spec.name);
    REQUIRE(state.count(spec.name));
    CHECK(spec.shape == state.at(spec.name).shape());
    CHECK(spec.dtype == DType::Float32);
  }
  CHECK(tensors.file_of("model.norm.weight") == dir / "model.safetensors");
  const Tensor into = Tensor::empty({4, 6});
  tensors.read_into("model.layers.1.mlp.down_proj.weight", into);
  CHECK(test::bitwise_equal(into, state.at("model.layers.1.mlp.down_proj.weight")));
  CHECK_THROWS_MSG(tensors.file_of("model.layers.9.mlp.up_proj.weight"), CheckpointError,
                   "no file of the folder holds the tensor model.layers.9.mlp.up_proj.weight");
  CHECK(check_hub_tensors(read_hub_config(dir / "config.json"), tensors).lm_head_in_folder);
}

TEST_CASE("hub tensors: shards named by the index, one in BF16 and F16, widened exactly") {
  TempDir dir("hub-shards");
  const auto places = write_sharded_folder(dir);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.index_file() == dir / "model.safetensors.index.json");
  CHECK(tensors.files() == std::vector<std::string>{dir / kShard1, dir / kShard2});
  CHECK(tensors.specs().size() == places.size());
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(true)) {
    INFO(name);
    CHECK(tensors.file_of(name) == dir / places[start].second);
    const Tensor t = tensors.read(name);  // BF16 and F16 read as float32, every value exact
    CHECK(t.dtype() == DType::Float32);
    CHECK(test::bitwise_equal(t, filled(shape, start)));
    ++start;
  }
  for (const ParameterSpec& spec : tensors.specs()) CHECK(spec.dtype == DType::Float32);
  const HubTensorCheck check = check_hub_tensors(read_hub_config(dir / "config.json"), tensors);
  CHECK(check.dtype == DType::Float32);
  CHECK(check.ignored.empty());
}

TEST_CASE("hub tensors: model.safetensors is read when both it and an index are there") {
  TempDir dir("hub-both");
  write_sharded_folder(dir);
  save_safetensors(dir / "model.safetensors", tiny_llama_state(true));
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.files() == std::vector<std::string>{dir / "model.safetensors"});
  CHECK(tensors.index_file().empty());
}

TEST_CASE("hub tensors: an index and its shards that disagree are refused, naming the file") {
  TempDir dir("hub-bad-index");
  auto places = write_sharded_folder(dir);
  const std::string index = dir / "model.safetensors.index.json";
  const auto with_index = [&](const std::vector<std::pair<std::string, std::string>>& p) {
    test::write_text(index, index_json(p));
    return open_hub_tensors(dir.path().string());
  };
  auto missing_shard = places;
  missing_shard.back().second = "model-00003-of-00003.safetensors";
  CHECK_THROWS_MSG(
      with_index(missing_shard), CheckpointError,
      index + ": places lm_head.weight in " + (dir / "model-00003-of-00003.safetensors") + ", which is not there");
  auto misplaced = places;
  misplaced.front().second = kShard2;  // the embedding is in the first shard
  CHECK_THROWS_MSG(with_index(misplaced), CheckpointError,
                   (dir / kShard2) + ": no tensor model.embed_tokens.weight, which " + index + " places there");
  auto extra = places;
  extra.emplace_back("model.layers.2.input_layernorm.weight", kShard1);
  CHECK_THROWS_MSG(with_index(extra), CheckpointError,
                   (dir / kShard1) + ": no tensor model.layers.2.input_layernorm.weight");
  auto unnamed = places;
  unnamed.pop_back();
  CHECK_THROWS_MSG(with_index(unnamed), CheckpointError,
                   (dir / kShard2) + ": holds lm_head.weight, which " + index + " does not name");
  auto escaping = places;
  escaping.back().second = "../model-00002-of-00002.safetensors";
  CHECK_THROWS_MSG(with_index(escaping), CheckpointError,
                   index +
                       ": weight_map places lm_head.weight in '../model-00002-of-00002.safetensors', which is "
                       "not a file name inside the folder");
  escaping.back().second = "/etc/passwd";
  CHECK_THROWS_MSG(with_index(escaping), CheckpointError, "in '/etc/passwd', which is not a file name inside");
  auto twice = places;
  twice.push_back(places.front());
  CHECK_THROWS_MSG(with_index(twice), CheckpointError, index + ": weight_map names model.embed_tokens.weight twice");
  test::write_text(index, "{\"metadata\": {}}");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, index + ": no weight_map object");
  test::write_text(index, "{\"weight_map\": ");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, index + ": not a JSON index");
}

TEST_CASE("hub tensors: the same tensor in two shards is refused, naming both") {
  TempDir dir("hub-twice");
  auto places = write_sharded_folder(dir);
  StateDict first = load_safetensors(dir / kShard1).tensors;
  first["model.norm.weight"] = filled({4}, 0);  // also in the second shard
  save_safetensors(dir / kShard1, first);
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError,
                   "model.norm.weight is in two shards: " + (dir / kShard1) + " and " + (dir / kShard2));
}

TEST_CASE("hub tensors: a folder with neither file lists what it holds") {
  TempDir dir("hub-empty");
  test::write_text(dir / "config.json", config());
  test::write_text(dir / "pytorch_model.bin", "not read");
  test::write_text(dir / "README.md", "not listed");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError,
                   dir.path().string() + ": neither model.safetensors nor model.safetensors.index.json");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, "it holds config.json, pytorch_model.bin");
  CHECK_THROWS_MSG(open_hub_tensors(dir / "absent"), CheckpointError, (dir / "absent") + ": no such directory");
  CHECK_THROWS_MSG(open_hub_tensors(dir / "config.json"), CheckpointError, (dir / "config.json") + ": not a directory");
}

TEST_CASE("hub folder paths: every file an import reads") {
  TempDir single("hub-paths-single"), sharded("hub-paths-sharded");
  write_single_file_folder(single, tiny_llama_state(true));
  CHECK(hub_folder_paths(single.path().string()) ==
        std::vector<std::string>{single / "config.json", single / "model.safetensors", single / "tokenizer.json"});
  write_sharded_folder(sharded);
  CHECK(hub_folder_paths(sharded.path().string()) ==
        std::vector<std::string>{sharded / "config.json", sharded / "model.safetensors.index.json", sharded / kShard1,
                                 sharded / kShard2, sharded / "tokenizer.json"});
}

// ---- the tensors against the config ---------------------------------------------------------------

TEST_CASE("hub tensors: missing, unexpected and mis-shaped tensors listed together, naming the folder") {
  TempDir dir("hub-mismatch");
  StateDict state = tiny_llama_state(true);
  state.erase("model.layers.1.self_attn.k_proj.weight");
  state["model.layers.0.mlp.up_proj.weight"] = filled({4, 6}, 0);  // transposed
  state["model.layers.0.self_attn.extra.weight"] = filled({2}, 0);
  write_single_file_folder(dir, state);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  const HubConfig c = read_hub_config(dir / "config.json");
  const std::string error = test::error_message<CheckpointError>([&] { check_hub_tensors(c, tensors); });
  CHECK(error.find(dir.path().string() + ": the tensors are not those of the model " + (dir / "config.json")) == 0);
  CHECK(error.find("missing: model.layers.1.self_attn.k_proj.weight [2, 4]") != std::string::npos);
  CHECK(error.find("mismatched: model.layers.0.mlp.up_proj.weight is [6, 4]") != std::string::npos);
  CHECK(error.find("unexpected: model.layers.0.self_attn.extra.weight [2]") != std::string::npos);
}

TEST_CASE("hub tensors: lm_head.weight: needed untied, accepted tied, compared with the embedding") {
  TempDir untied("hub-untied"), tied("hub-tied"), tied_bare("hub-tied-bare");
  write_single_file_folder(untied, tiny_llama_state(false));
  CHECK_THROWS_MSG(check_hub_tensors(read_hub_config(untied / "config.json"), open_hub_tensors(untied.path().string())),
                   CheckpointError, "missing: lm_head.weight [8, 4]");
  const std::string tied_config = config({{"tie_word_embeddings", "true"}});
  write_single_file_folder(tied_bare, tiny_llama_state(false), tied_config);
  CHECK(!check_hub_tensors(read_hub_config(tied_bare / "config.json"), open_hub_tensors(tied_bare.path().string()))
             .lm_head_in_folder);
  StateDict state = tiny_llama_state(true);
  state["lm_head.weight"] = state.at("model.embed_tokens.weight").clone();
  write_single_file_folder(tied, state, tied_config);
  const HubTensors tensors = open_hub_tensors(tied.path().string());
  CHECK(check_hub_tensors(read_hub_config(tied / "config.json"), tensors).lm_head_in_folder);
  const Tensor embedding = tensors.read("model.embed_tokens.weight");
  CHECK_NOTHROW(require_lm_head_is_embedding(tensors, embedding));
  Tensor other = embedding.clone();
  other.data<float>()[1 * 4 + 2] += 1.0f;  // row 1, column 2
  CHECK_THROWS_MSG(require_lm_head_is_embedding(tensors, other), CheckpointError,
                   (tied / "model.safetensors") +
                       ": tie_word_embeddings is true, but lm_head.weight is not "
                       "model.embed_tokens.weight: they differ first at [1, 2]");
}

TEST_CASE("hub tensors: Qwen2's q, k, v biases expected, rotary buffers ignored, integer tensors refused") {
  TempDir qwen("hub-qwen2"), buffers("hub-buffers"), ints("hub-ints");
  const std::string qwen_config = config({{"model_type", "\"qwen2\""}});
  write_single_file_folder(qwen, tiny_llama_state(true, true), qwen_config);
  CHECK_NOTHROW(check_hub_tensors(read_hub_config(qwen / "config.json"), open_hub_tensors(qwen.path().string())));
  write_single_file_folder(buffers, tiny_llama_state(true), qwen_config);  // no biases
  CHECK_THROWS_MSG(
      check_hub_tensors(read_hub_config(buffers / "config.json"), open_hub_tensors(buffers.path().string())),
      CheckpointError, "missing: model.layers.0.self_attn.q_proj.bias [4]");
  StateDict state = tiny_llama_state(true);
  state["model.layers.0.self_attn.rotary_emb.inv_freq"] = filled({1}, 0);
  write_single_file_folder(buffers, state);
  const HubTensorCheck check =
      check_hub_tensors(read_hub_config(buffers / "config.json"), open_hub_tensors(buffers.path().string()));
  CHECK(check.ignored == std::vector<std::string>{"model.layers.0.self_attn.rotary_emb.inv_freq"});
  state["model.norm.weight"] = Tensor::empty({4}, DType::Int64).fill_(1);
  write_single_file_folder(ints, state);
  CHECK_THROWS_MSG(check_hub_tensors(read_hub_config(ints / "config.json"), open_hub_tensors(ints.path().string())),
                   CheckpointError, "model.norm.weight is [4] int64, but a model's weights are floating point");
}
