# Llama's block from the command line: train --block llama with grouped-query attention writes a
# checkpoint whose params names every setting and finds its tensors the formula's; the flags'
# bad values are each one line, status 2, naming the flag.
set(GRADFORMER_CLI_LLAMA ${CMAKE_CURRENT_BINARY_DIR}/cli-run-llama)
set(tiny_llama --d-model|16|--d-ff|32|--layers|1|--batch-size|8)
gradformer_cli_test("train --block llama --kv-heads 2 --heads 4: a decoder-only model with Llama's block"
  "-DARGS=train|--arch|decoder-only|--task|toy-lm|--block|llama|--kv-heads|2|--heads|4|${tiny_llama}|--steps|3|--out|${GRADFORMER_CLI_LLAMA}/lm|--quiet"
  -DCLEAN=${GRADFORMER_CLI_LLAMA}/lm "-DSTDERR_ABSENT=." "-DFILES=${GRADFORMER_CLI_LLAMA}/lm/model.safetensors"
  "-DSTDOUT=trained 3 steps .*generate with it: gradformer generate --checkpoint [^ ]*lm/model.safetensors"
  FIXTURE gradformer_cli_llama_lm)
# d 16, 4 heads of 4, 2 key/value heads: W^Q and W^O 16 x 16, W^K and W^V 8 x 16 (768); SwiGLU
# 3 x 16 x 32 (1536); two RMSNorm gains (32): a layer of 2336, no biases anywhere.
gradformer_cli_test("params --checkpoint of a --block llama model names each of its settings"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_LLAMA}/lm/model.safetensors"
  "-DSTDOUT=rope positions +0 \\(computed, not stored\\)\n  per layer: attention 768 \\(W\\^Q 16 x 16, W\\^K and W\\^V 8 x 16 each, W\\^O 16 x 16, biases 0\\)\n +feed-forward 1536 \\(3 matrices of d x d_ff\\), 2 RMSNorms \\(gains\\) 32\n  1 layers x 2336 = 2336\n  final norm +16\n.*\nrope positions, pre-LN, RMSNorm eps 1e-05, activation swiglu, [^\n]*. 2 key/value heads, no biases, rope theta 10000\n.*: the same\n$"
  REQUIRES gradformer_cli_llama_lm)
gradformer_cli_test("generate from a --block llama model" "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_LLAMA}/lm/model.safetensors|--prompt|le chat|--temperature|0|--max-tokens|4"
  "-DSTDOUT=^le chat[^\n]*\n$" "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_llama_lm)
gradformer_cli_test("train --kv-heads 3 --heads 4 is status 2 naming --kv-heads"
  "-DARGS=train|--arch|decoder-only|--task|toy-lm|--kv-heads|3|--heads|4|--out|${GRADFORMER_CLI_LLAMA}/refused" -DEXIT=2
  ${one_error_line} "-DSTDERR=^gradformer train: --kv-heads must divide the heads, 4, got 3\n$" "-DSTDOUT_ABSENT=."
  "-DNO_FILES=${GRADFORMER_CLI_LLAMA}/refused/model.safetensors")
gradformer_cli_test("train --bias maybe is status 2 listing the choices"
  "-DARGS=train|--arch|decoder-only|--bias|maybe" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --bias must be one of true, false, attention, qkv. got 'maybe'\n$" "-DSTDOUT_ABSENT=.")
gradformer_cli_test("train --positions rope with an odd head width is status 2 naming --positions"
  "-DARGS=train|--arch|decoder-only|--positions|rope|--d-model|12|--heads|4" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --positions rope turns pairs of a head's numbers, so the head width \\(d_model / heads, or head_dim\\) must be even, got 3\n$")
gradformer_cli_test("train --block llama with an odd head width is status 2 naming --positions"
  "-DARGS=train|--arch|decoder-only|--block|llama|--d-model|12|--heads|4" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --positions rope .*must be even, got 3\n$")
gradformer_cli_test("train --block gpt is status 2" "-DARGS=train|--arch|decoder-only|--block|gpt" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --block must be one of llama. got 'gpt'\n$" "-DSTDOUT_ABSENT=.")
# An encoder-only model with rotary positions: params named its positions "sinusoidal" (it has none)
# and left out its block's settings.
gradformer_cli_test("train --arch encoder-only --block llama: params --checkpoint names rope and the block's settings"
  "-DARGS=train|--arch|encoder-only|--block|llama|--kv-heads|1|--heads|2|${tiny_llama}|--steps|2|--out|${GRADFORMER_CLI_LLAMA}/mlm|--quiet"
  -DCLEAN=${GRADFORMER_CLI_LLAMA}/mlm "-DSTDERR_ABSENT=." "-DFILES=${GRADFORMER_CLI_LLAMA}/mlm/model.safetensors"
  FIXTURE gradformer_cli_llama_mlm)
gradformer_cli_test("params --checkpoint of an encoder-only --block llama model says rope, RMSNorm, 1 key/value head"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_LLAMA}/mlm/model.safetensors" "-DSTDOUT_ABSENT=sinusoidal"
  "-DSTDOUT=\nrope positions, pre-LN RMSNorm, activation swiglu, [^\n]*. 1 key/value heads, no biases, rope theta 10000\n.*: the same\n$"
  REQUIRES gradformer_cli_llama_mlm)
