# gradformer generate and trace with a checkpoint of GPT-2's kind: a decoder-only model whose tokenizer
# is in GPT-2's format (no specials in front; <|endoftext|> an ordinary token, its last). The tiny
# untrained model of tests/transformer/train/tiny_gpt2.h stands in for GPT-2's weights: what is
# checked is the program's handling of such a checkpoint; the numbers are checked by test_training.
# Included by tests/transformer/CMakeLists.txt.
add_executable(write_gpt2_checkpoint cli/write_gpt2_checkpoint.cpp)
target_link_libraries(write_gpt2_checkpoint PRIVATE gradformer_train gradformer_warnings)
set(GRADFORMER_GPT2_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-gpt2)
set(gpt2 ${GRADFORMER_GPT2_DIR}/tiny-gpt2.safetensors)
set(gpt2_end ${GRADFORMER_GPT2_DIR}/tiny-gpt2-end.safetensors)
set(gpt2_real_end ${GRADFORMER_GPT2_DIR}/tiny-gpt2-reference-end.safetensors)  # the tokenizer of data/gpt2_reference
set(bytes_pad ${GRADFORMER_GPT2_DIR}/tiny-bytes-pad.safetensors)  # gradformer's bytes tokenizer, <pad> most likely
add_test(NAME "gradformer program: gpt2: write a tiny model of GPT-2's kind" COMMAND write_gpt2_checkpoint ${gpt2})
add_test(NAME "gradformer program: gpt2: write one that says <|endoftext|> at once"
         COMMAND write_gpt2_checkpoint ${gpt2_end} --always-end)
add_test(NAME "gradformer program: gpt2: write one with GPT-2's released files' tokenizer, saying <|endoftext|> at once"
         COMMAND write_gpt2_checkpoint ${gpt2_real_end} --always-end --gpt2 ${CMAKE_CURRENT_SOURCE_DIR}/data/gpt2_reference)
add_test(NAME "gradformer program: gpt2: write a text model of bytes whose most likely next token is <pad>"
         COMMAND write_gpt2_checkpoint ${bytes_pad} --always-pad)
set_tests_properties("gradformer program: gpt2: write a tiny model of GPT-2's kind"
                     "gradformer program: gpt2: write a text model of bytes whose most likely next token is <pad>"
                     "gradformer program: gpt2: write one that says <|endoftext|> at once"
                     "gradformer program: gpt2: write one with GPT-2's released files' tokenizer, saying <|endoftext|> at once" PROPERTIES
                     FIXTURES_SETUP gradformer_cli_gpt2)

# --- generate ---------------------------------------------------------------------------------------
gradformer_cli_test("gpt2: generate --help explains GPT-2's prompt, context and <|endoftext|>" "-DARGS=generate|--help"
  "-DSTDOUT=GPT-2 .*The prompt must fit\nthe context. GPT-2 stops at <.endoftext.>, which is not printed.*--top-k 40.*--max-tokens X +new tokens generated at most.*--temperature X .*0: greedy")
gradformer_cli_test("gpt2: generate greedy prints the prompt, then its continuation"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|the cat is|--temperature|0|--max-tokens|40"
  "-DSTDOUT=^the cat is[^\n]*" "-DSTDERR_ABSENT=." -DSAVE_STDOUT=${GRADFORMER_GPT2_DIR}/greedy.txt
  REQUIRES gradformer_cli_gpt2 FIXTURE gradformer_cli_gpt2_greedy)
gradformer_cli_test("gpt2: generate --top-k 1 prints what greedy does"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|the cat is|--top-k|1|--max-tokens|40|--seed|9"
  -DSAME_STDOUT_AS=${GRADFORMER_GPT2_DIR}/greedy.txt REQUIRES "gradformer_cli_gpt2;gradformer_cli_gpt2_greedy")
gradformer_cli_test("gpt2: generate --top-k 40 --seed 5, first run"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|the cat is|--top-k|40|--seed|5" "-DSTDOUT=^the cat is"
  -DSAVE_STDOUT=${GRADFORMER_GPT2_DIR}/seed5.txt REQUIRES gradformer_cli_gpt2 FIXTURE gradformer_cli_gpt2_seed5)
gradformer_cli_test("gpt2: generate --top-k 40 --seed 5 again prints the same text"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|the cat is|--top-k|40|--seed|5"
  -DSAME_STDOUT_AS=${GRADFORMER_GPT2_DIR}/seed5.txt REQUIRES "gradformer_cli_gpt2;gradformer_cli_gpt2_seed5")
gradformer_cli_test("gpt2: generate stops at <|endoftext|> and does not print it"
  "-DARGS=generate|--checkpoint|${gpt2_end}|--prompt|the end|--max-tokens|50" "-DSTDOUT=^the end\n$" "-DSTDERR_ABSENT=."
  REQUIRES gradformer_cli_gpt2)
# <pad> is the argmax at every step, but the specials are not text: never printed, greedy or sampled.
gradformer_cli_test("generate: a text model never prints a special (<pad> most likely, greedy)"
  "-DARGS=generate|--checkpoint|${bytes_pad}|--prompt|ab|--temperature|0|--max-tokens|20" "-DSTDOUT=^ab"
  "-DSTDOUT_ABSENT=<pad>|<s>|</s>|<unk>" "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("generate: a text model never prints a special (<pad> most likely, sampled)"
  "-DARGS=generate|--checkpoint|${bytes_pad}|--prompt|ab|--max-tokens|200|--seed|3" "-DSTDOUT=^ab"
  "-DSTDOUT_ABSENT=<pad>|<s>|</s>|<unk>" "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: generate finds <|endoftext|> in a tokenizer read from encoder.json and vocab.bpe"
  "-DARGS=generate|--checkpoint|${gpt2_real_end}|--prompt|Hello world|--max-tokens|50" "-DSTDOUT=^Hello world\n$"
  "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace with GPT-2's released files' tokenizer: <|endoftext|> the most likely next token"
  "-DARGS=trace|--checkpoint|${gpt2_real_end}|--layer|0|--head|0|--top|2|Hello world" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^Prompt: \"Hello world\": 7 tokens of GPT-2's tokenizer .*\nNext token: the 2 most likely of 657\n +1\\. +[0-9.]+% +656 +<.endoftext.> +\"<.endoftext.>\"\n"
  REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: generate with an empty prompt is status 2"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt=" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer generate: a bpe model continues text: give a --prompt to continue\n$" REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: generate with a prompt longer than the context is status 2"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|abcdefghijklmnopqrstuvwxyz" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer generate: the prompt's 26 tokens do not fit the model's context of 16 tokens \\(max_len\\)\n$"
  REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: generate past the context slides the window"
  "-DARGS=generate|--checkpoint|${gpt2}|--prompt|the cat is|--temperature|0|--max-tokens|60" "-DSTDOUT=^the cat is"
  "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_gpt2)

# --- trace of a decoder-only model --------------------------------------------------------------------
gradformer_cli_test("gpt2: trace --help explains the decoder-only trace and --layer, --head" "-DARGS=trace|--help"
  "-DSTDOUT=A decoder-only checkpoint .*reads SENTENCE as its prompt.*--layer X +decoder-only: show this layer's heads only.*--head X +decoder-only: show this head")
gradformer_cli_test("gpt2: trace shows the tokens, every layer's heads and the next tokens"
  "-DARGS=trace|--checkpoint|${gpt2}|the cat is" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^Prompt: \"the cat is\": 6 tokens of GPT-2's tokenizer \\(the model reads at most 16\\)\n +# +id +piece +text\n +0 +257 +the +\"the\"\n +1 +32 +Ġ +\" \"\n.* +5 +260 +Ġis +\" is\"\n\nAttention at a glance: .*\n +h0 +h1 +h2 +h3\nlayer 0 +[FPS] +[0-9]+ +[FPS] +[0-9]+ +[FPS] +[0-9]+ +[FPS] +[0-9]+\nlayer 1 [^\n]*\n\nAttention, head by head .*: 2 layers x 4 heads.\n.*\nlayer 0 head 0\n.*\nlayer 1 head 3\n +0 +1 +2 +3 +4 +5\n +0 the +100 +\\. +\\. +\\. +\\. +\\.\n.*\nNext token: the 10 most likely of 262\n +1\\. +[0-9.]+% .*\n +10\\. +[0-9.]+% [^\n]*\n$"
  REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace --layer 1 --head 2 shows that head only"
  "-DARGS=trace|--checkpoint|${gpt2}|--layer|1|--head|2|--top|3|the cat is" "-DSTDOUT=\nlayer 1 head 2\n.*Next token: the 3 most likely"
  "-DSTDOUT_ABSENT=layer 0 head|head [013]\n" REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace --html writes one page"
  "-DARGS=trace|--checkpoint|${gpt2}|--html|${GRADFORMER_GPT2_DIR}/trace.html|--force|the cat is"
  "-DSTDOUT=\nwrote [^\n]*trace.html \\(open it in a browser\\)\n$" "-DFILES=${GRADFORMER_GPT2_DIR}/trace.html" REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace --layer past the model's layers is status 2"
  "-DARGS=trace|--checkpoint|${gpt2}|--layer|2|the cat" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: --layer must be from 0 to 1 \\(the model's layers\\), got 2\n$" REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace --beam with a decoder-only model is status 2"
  "-DARGS=trace|--checkpoint|${gpt2}|--beam|2|the cat" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: --beam is for an encoder-decoder's translation. this model is decoder-only\n$"
  REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("gpt2: trace of a prompt longer than the context is status 1"
  "-DARGS=trace|--checkpoint|${gpt2}|abcdefghijklmnopqrstuvwxyz" -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer trace: error: trace: the prompt's 26 tokens do not fit the model's context of 16 tokens \\(max_len\\)\n$"
  REQUIRES gradformer_cli_gpt2)
gradformer_cli_test("trace --layer with an encoder-decoder is status 2"
  "-DARGS=trace|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors|--layer|0|4 5 6" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: --layer is for a decoder-only model's trace\n$" REQUIRES gradformer_cli_model)
gradformer_cli_test("trace of a decoder-only model of words reads <s> first"
  "-DARGS=trace|--checkpoint|${GRADFORMER_LM_DIR}/model.safetensors|--head|0|le chat" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^Prompt: \"le chat\": 3 tokens of words tokenizer .*\n +0 +1 +<s> +\"<s>\"\n +1 +[0-9]+ +le +\"le\"\n.*Next token: the 10 most likely of "
  REQUIRES gradformer_cli_lm)
gradformer_cli_test("gpt2: trace --html that is the checkpoint is status 2, before reading it"
  "-DARGS=trace|--checkpoint|guarded.safetensors|--html|./guarded.safetensors|--force|the cat"
  -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR} -DWRITE=${CMAKE_CURRENT_BINARY_DIR}/guarded.safetensors "-DWRITE_TEXT=not read"
  -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer trace: --html ./guarded.safetensors is guarded.safetensors, the checkpoint to trace: writing the page would replace it. write it elsewhere\n$")
