# gradformer import --gpt2 and params --checkpoint as a user runs them: a small random GPT-2 in the
# hub's layout (write_gpt2: "transformer." names, the causal-mask buffers, lm_head equal to wte, and a
# config.json as the hub writes it), with the GPT-2-format tokenizer of data/gpt2_reference (657
# tokens). The logits themselves are checked in store/test_import_gpt2.cpp against a float64 GPT-2.
# The counts below, by hand: V 657, d 16, n_ctx 32, 2 layers, d_ff 64:
#   token embedding 657 x 16 = 10512; positions 32 x 16 = 512; a layer 4 d^2 + 4 d + 2 d d_ff + d_ff + d
#   + 4 d = 1024 + 64 + 2048 + 64 + 16 + 64 = 3280; the final LayerNorm 32: 10512 + 512 + 6560 + 32 = 17616.
add_executable(write_gpt2 cli/write_gpt2.cpp)
target_link_libraries(write_gpt2 PRIVATE gradformer_store gradformer_warnings)
set(GRADFORMER_GPT2_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-import-gpt2)
set(gpt2_tokenizer ${CMAKE_CURRENT_SOURCE_DIR}/data/gpt2_reference)
foreach(variant "hub|657|4" "bare|657" "v300|300|4")  # directory, vocabulary, heads in config.json (none: no config)
  string(REPLACE "|" ";" variant_args "${variant}")
  list(GET variant_args 0 variant_dir)
  list(SUBLIST variant_args 1 -1 variant_sizes)
  add_test(NAME "gradformer program: write a small GPT-2 in the hub's layout: ${variant_dir}"
           COMMAND write_gpt2 ${GRADFORMER_GPT2_DIR}/${variant_dir} ${variant_sizes})
  set_tests_properties("gradformer program: write a small GPT-2 in the hub's layout: ${variant_dir}" PROPERTIES
                       FIXTURES_SETUP gradformer_gpt2_files)
endforeach()

gradformer_cli_test("import --gpt2 --help says where the files are, what is transposed, and its flags"
  "-DARGS=import|--gpt2|--help"
  "-DSTDOUT=usage: gradformer import --gpt2.*huggingface.co/gpt2.*model.safetensors, config.json, vocab.json and merges.txt.*gpt2-medium, gpt2-large and gpt2-xl.*encoder.json and vocab.bpe.*\\[in, out\\].*transposed.*--heads is needed.*--gpt2 X.*--tokenizer X.*--config X.*--heads X.*--out X")
gradformer_cli_test("import --help points to import --gpt2" "-DARGS=import|--help"
  "-DSTDOUT=GPT-2's released weights: gradformer import --gpt2 model.safetensors.*--gpt2 X")
gradformer_cli_test("import --gpt2 of the hub's files: sizes, heads from config.json, what was transposed, the count"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/hub/model.safetensors|--tokenizer|${gpt2_tokenizer}|--out|${GRADFORMER_GPT2_DIR}/gpt2.safetensors|--force"
  "-DSTDOUT=^imported [^\n]*hub/model.safetensors: GPT-2 with a vocabulary of 657 tokens, context 32, d_model 16, 2 layers, 4 heads \\(n_head in [^\n]*hub/config.json\\), d_ff 64, float32\n  gelu-tanh activation, LayerNorm eps 1e-05, embedding not scaled by sqrt\\(d\\), output tied to wte\n  names: the prefix \"transformer.\" removed\n  left out: 4 causal-mask buffers \\(h.{i}.attn.bias, h.{i}.attn.masked_bias\\)\n  transposed in each layer \\(Conv1D \\[in, out\\] -> Linear \\[out, in\\]\\):\n    attn.c_attn.weight \\[16, 48\\] -> self_attn.in_proj_weight \\[48, 16\\]\n    attn.c_proj.weight \\[16, 16\\] -> self_attn.out_proj.weight \\[16, 16\\]\n    mlp.c_fc.weight \\[16, 64\\] -> linear1.weight \\[64, 16\\]\n    mlp.c_proj.weight \\[64, 16\\] -> linear2.weight \\[16, 64\\]\n  parameters: 17616\n  tokenizer: 657 tokens from [^\n]*gpt2_reference/encoder.json and [^\n]*gpt2_reference/vocab.bpe\nwrote [^\n]*gpt2.safetensors"
  "-DFILES=${GRADFORMER_GPT2_DIR}/gpt2.safetensors" REQUIRES gradformer_gpt2_files FIXTURE gradformer_gpt2_imported)
gradformer_cli_test("params --checkpoint of the imported GPT-2: its configuration and 17616 parameters, term by term"
  "-DARGS=params|--checkpoint|${GRADFORMER_GPT2_DIR}/gpt2.safetensors"
  "-DSTDOUT=^checkpoint [^\n]*gpt2.safetensors \\(decoder-only\\): d_model 16, d_ff 64, heads 4, layers 2, vocabulary 657, context 32\n  token embedding V d          10512 \\(tied: also the output projection\\)\n  learned positions n_ctx d    512\n  per layer: attention 1088 \\(W\\^Q 16 x 16, W\\^K and W\\^V 16 x 16 each, W\\^O 16 x 16, biases 64\\)\n             feed-forward 2128 \\(2 matrices of d x d_ff and their biases\\), 2 LayerNorms \\(gains, biases\\) 64\n  2 layers x 3280 = 6560\n  final norm                   32\nparameters: 17616 \\(0.0M\\)\nlearned positions, pre-LN, LayerNorm eps 1e-05, activation gelu-tanh, embedding not scaled by sqrt\\(d_model\\), output tied to the embedding\ntokenizer: gpt2, 657 tokens\nthe checkpoint's 28 tensors hold 17616 numbers: the same\n$"
  REQUIRES gradformer_gpt2_imported)
gradformer_cli_test("import --gpt2 without --force refuses an existing --out, status 2, before reading the model"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/hub/model.safetensors|--tokenizer|${gpt2_tokenizer}|--out|${GRADFORMER_GPT2_DIR}/gpt2.safetensors"
  -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer import --gpt2: --out [^\n]*gpt2.safetensors exists. give --force to replace it\n$"
  REQUIRES gradformer_gpt2_imported)
gradformer_cli_test("import --gpt2 with --heads and no config.json"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/bare/model.safetensors|--tokenizer|${gpt2_tokenizer}|--heads|2|--out|${GRADFORMER_GPT2_DIR}/bare.safetensors|--force"
  "-DSTDOUT=2 layers, 2 heads \\(--heads\\), d_ff 64" "-DFILES=${GRADFORMER_GPT2_DIR}/bare.safetensors" REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 without --heads or config.json says --heads is needed, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/bare/model.safetensors|--tokenizer|${gpt2_tokenizer}|--out|${GRADFORMER_GPT2_DIR}/x.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_GPT2_DIR}/x.safetensors"
  "-DSTDERR=^gradformer import: error: [^\n]*bare/model.safetensors: no tensor's shape tells the number of heads: --heads H is needed \\(or a config.json with n_head beside the model, or --config FILE\\)\n$"
  REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 --heads 3 with d 16 names both, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/bare/model.safetensors|--tokenizer|${gpt2_tokenizer}|--heads|3|--out|${GRADFORMER_GPT2_DIR}/x.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer import: error: [^\n]*: 3 heads \\(--heads\\) do not divide d 16 \\(wte.weight \\[657, 16\\]\\)\n$"
  REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 --heads that config.json's n_head contradicts names both, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/hub/model.safetensors|--tokenizer|${gpt2_tokenizer}|--heads|2|--out|${GRADFORMER_GPT2_DIR}/x.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer import: error: --heads 2 disagrees with [^\n]*hub/config.json's n_head 4\n$"
  REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 with a tokenizer of another size names both sizes, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/v300/model.safetensors|--tokenizer|${gpt2_tokenizer}|--out|${GRADFORMER_GPT2_DIR}/x.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer import: error: [^\n]*v300/model.safetensors: wte.weight has 300 rows \\(one per token\\), but the tokenizer \\([^\n]*encoder.json and [^\n]*vocab.bpe\\) has 657 tokens\n$"
  REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 without a tokenizer beside the model says which files, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/hub/model.safetensors|--out|${GRADFORMER_GPT2_DIR}/x.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer import: error: [^\n]*hub: no GPT-2 tokenizer: neither vocab.json \\+ merges.txt \\(the hub's names\\) nor encoder.json \\+ vocab.bpe \\(the original release's\\). give their directory with --tokenizer DIR\n$"
  REQUIRES gradformer_gpt2_files)
gradformer_cli_test("import --gpt2 without --out is status 2"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}/hub/model.safetensors" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer import --gpt2: --gpt2 MODEL and --out FILE are required \\(gradformer import --gpt2 --help\\)\n$")
gradformer_cli_test("params --checkpoint of an encoder-decoder checks its count against its tensors"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors"
  "-DSTDOUT=\\(encoder-decoder\\): d_model 16, d_ff 32, heads 2, layers 1 a side.*\nparameters: [0-9]+ .*\nsinusoidal positions, post-LN, LayerNorm eps 1e-05, activation relu, embedding scaled by sqrt\\(d_model\\).*the checkpoint's [0-9]+ tensors hold [0-9]+ numbers: the same\n$"
  REQUIRES gradformer_cli_model)
gradformer_cli_test("params --checkpoint with --preset is status 2"
  "-DARGS=params|--checkpoint|x.safetensors|--preset|base" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer params: --checkpoint describes the checkpoint's model. --preset, --vocab and --length do not go with it\n$")
gradformer_cli_test("params --preset gpt2-small says how GPT-2 computes" "-DARGS=params|--preset|gpt2-small"
  "-DSTDOUT=parameters: 124439808 \\(124.4M\\)\nlearned positions, pre-LN, LayerNorm eps 1e-05, activation gelu-tanh, embedding not scaled by sqrt\\(d_model\\), output tied to the embedding\n$")
gradformer_cli_test("params --checkpoint of an encoder-only model counts it part by part, checked against its tensors"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_ENC}/mlm/model.safetensors"
  "-DSTDOUT=\\(encoder-only\\): d_model [0-9]+.*\n  embeddings [0-9]+, encoder [0-9]+, pooler [0-9]+, mlm head [0-9]+, classifier [0-9]+ \\(2 classes\\)\nparameters: [0-9]+ .*the checkpoint's [0-9]+ tensors hold [0-9]+ numbers: the same\n$"
  REQUIRES gradformer_cli_encoder)
gradformer_cli_test("import --gpt2 --out that is one of the files it reads is status 2, before reading them"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}-guarded|--heads|2|--out|${GRADFORMER_GPT2_DIR}-guarded/./vocab.json|--force"
  -DWRITE=${GRADFORMER_GPT2_DIR}-guarded/model.safetensors "-DWRITE_TEXT=not read" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer import --gpt2: --out [^\n]*guarded/./vocab.json is [^\n]*guarded/vocab.json, one of the files to import: writing the checkpoint would replace it. write it elsewhere\n$")
gradformer_cli_test("import --gpt2 of a missing model names it first, status 1"
  "-DARGS=import|--gpt2|${GRADFORMER_GPT2_DIR}-missing/model.safetensors|--out|${GRADFORMER_GPT2_DIR}/never.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_GPT2_DIR}/never.safetensors"
  "-DSTDERR=^gradformer import: error: [^\n]*missing/model.safetensors: no such file \\(--gpt2 takes GPT-2's model.safetensors or the directory holding it\\)\n$")
