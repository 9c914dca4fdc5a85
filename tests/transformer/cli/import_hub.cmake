# gradformer import --hf, params, generate as a user runs them: a small random Llama in the hub's
# folder layout (write_llama: config.json, model.safetensors, the hand-written tokenizer.json of
# cli/hub_tokenizer, 16 ids). The logits themselves are checked in store/test_import_hub.cpp against a
# float64 Llama. The count, by hand (V 16, d 16, 4 heads and 2 key/value heads of 4, d_ff 24, 2 layers,
# untied): embedding 16 x 16 = 256; a layer: W^Q 16 x 16 = 256, W^K and W^V 8 x 16 = 128 each, W^O 256
# (768), SwiGLU 3 x 16 x 24 = 1152, two RMSNorm gains 32: 1952; two layers 3904; the final gain 16;
# lm_head 256: 256 + 3904 + 16 + 256 = 4432.
add_executable(write_llama cli/write_llama.cpp)
target_link_libraries(write_llama PRIVATE gradformer_store gradformer_warnings)
set(GRADFORMER_LLAMA_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-import-hf)
add_test(NAME "gradformer program: write a small Llama in the hub's folder layout"
         COMMAND write_llama ${GRADFORMER_LLAMA_DIR}/tiny ${CMAKE_CURRENT_SOURCE_DIR}/cli/hub_tokenizer/tokenizer.json)
set_tests_properties("gradformer program: write a small Llama in the hub's folder layout" PROPERTIES
                     FIXTURES_SETUP gradformer_llama_files)

gradformer_cli_test("import --hf --help says what the folder holds, what is refused and where to get a model"
  "-DARGS=import|--hf|--help"
  "-DSTDOUT=usage: gradformer import --hf.*config.json, model.safetensors or model.safetensors.index.json.*tokenizer.json.*llama, qwen2 or mistral.*refused in one line.*SmolLM2-135M.*--hf X.*--out X")
gradformer_cli_test("import --hf of a small Llama: its sizes, its block and 4432 parameters"
  "-DARGS=import|--hf|${GRADFORMER_LLAMA_DIR}/tiny|--out|${GRADFORMER_LLAMA_DIR}/tiny.safetensors|--force"
  "-DSTDOUT=^imported [^\n]*tiny: llama with a vocabulary of 16 tokens, context 64, d_model 16, 2 layers, 4 heads, 2 key/value heads of 4, d_ff 24\n  RMSNorm eps 1e-05, rope theta 10000, no biases, output lm_head.weight \\(untied\\)\n  parameters: 4432\n  tokenizer: 16 tokens from [^\n]*tiny/tokenizer.json\nwrote [^\n]*tiny.safetensors"
  "-DFILES=${GRADFORMER_LLAMA_DIR}/tiny.safetensors" REQUIRES gradformer_llama_files FIXTURE gradformer_llama_imported)
gradformer_cli_test("params --checkpoint of the imported Llama counts it term by term, as its tensors hold"
  "-DARGS=params|--checkpoint|${GRADFORMER_LLAMA_DIR}/tiny.safetensors"
  "-DSTDOUT=W\\^K and W\\^V 8 x 16 each.*feed-forward 1152 \\(3 matrices of d x d_ff\\), 2 RMSNorms \\(gains\\) 32\n  2 layers x 1952 = 3904\n.*parameters: 4432 .*rope positions, pre-LN, RMSNorm eps 1e-05, activation swiglu, embedding not scaled.*2 key/value heads, no biases, rope theta 10000\ntokenizer: hub, 16 tokens\nthe checkpoint's .* tensors hold 4432 numbers: the same"
  REQUIRES gradformer_llama_imported)
gradformer_cli_test("generate with the imported Llama continues a prompt through its tokenizer"
  "-DARGS=generate|--checkpoint|${GRADFORMER_LLAMA_DIR}/tiny.safetensors|--prompt|hi the|--max-tokens|6|--temperature|0"
  "-DSTDOUT=^hi the" REQUIRES gradformer_llama_imported)
gradformer_cli_test("import --hf with --out one of the folder's files is status 2, before reading them"
  "-DARGS=import|--hf|${GRADFORMER_LLAMA_DIR}/tiny|--out|${GRADFORMER_LLAMA_DIR}/tiny/model.safetensors|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer import --hf: --out [^\n]*model.safetensors is [^\n]*model.safetensors, one of the files to import: writing the checkpoint would replace it"
  REQUIRES gradformer_llama_files)
gradformer_cli_test("import --hf of a folder without config.json names the file, status 1"
  "-DARGS=import|--hf|${GRADFORMER_LLAMA_DIR}|--out|${GRADFORMER_LLAMA_DIR}/none.safetensors"
  -DEXIT=1 ${one_error_line} "-DSTDERR=config.json" REQUIRES gradformer_llama_files)
