# Fine-tuning from the command line: a small text model trained on bytes, then train --task sft on
# instruction data, which adds chatml's tokens and reports the held-out answers; generate then
# answers a prompt as a user's turn (or, with --raw, continues it as text). Refusals name the flag.
set(GRADFORMER_CLI_SFT ${CMAKE_CURRENT_BINARY_DIR}/cli-run-sft)
set(GRADFORMER_CLI_SFT_DATA ${CMAKE_CURRENT_BINARY_DIR}/cli-sft-data)
set(sft_lines "")
foreach(pair "ab cd" "cd ef" "ef ab" "ab ef" "cd ab" "ef cd" "ab ab" "cd cd" "ef ef" "ab cd" "cd ef" "ef ab")
  string(REPLACE " " ";" words "${pair}")
  list(REVERSE words)
  string(REPLACE ";" " " reversed "${words}")
  string(APPEND sft_lines "{\"instruction\": \"Reverse.\", \"input\": \"${pair}\", \"output\": \"${reversed}\"}\n")
endforeach()
file(WRITE ${GRADFORMER_CLI_SFT_DATA}/chat.jsonl "${sft_lines}")
file(WRITE ${GRADFORMER_CLI_SFT_DATA}/bad.jsonl "{\"instruction\": \"Reverse.\"}\n")
string(REPEAT "ab cd ef. " 60 sft_text)
file(WRITE ${GRADFORMER_CLI_SFT_DATA}/text.txt "${sft_text}\n")
set(tiny_sft --d-model|16|--d-ff|32|--layers|1|--heads|2|--max-len|64|--batch-size|8)
gradformer_cli_test("train --text: the small model sft starts from"
  "-DARGS=train|--arch|decoder-only|--text|${GRADFORMER_CLI_SFT_DATA}/text.txt|${tiny_sft}|--steps|2|--out|${GRADFORMER_CLI_SFT}/base|--quiet"
  -DCLEAN=${GRADFORMER_CLI_SFT}/base "-DFILES=${GRADFORMER_CLI_SFT}/base/model.safetensors" FIXTURE gradformer_cli_sft_base)
gradformer_cli_test("train --task sft: chatml's tokens added, the held-out answers checked, how to ask it"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|${GRADFORMER_CLI_SFT_DATA}/chat.jsonl|--init|${GRADFORMER_CLI_SFT}/base/model.safetensors|--steps|4|--batch-size|4|--out|${GRADFORMER_CLI_SFT}/tuned"
  -DCLEAN=${GRADFORMER_CLI_SFT}/tuned "-DFILES=${GRADFORMER_CLI_SFT}/tuned/model.safetensors"
  "-DSTDOUT=chatml: the tokenizer lacked <\\|im_start\\|> <\\|im_end\\|>: added as ids 260 to 261, their embedding rows each the mean row\n.*held-out answers \\(greedy\\): [0-9]+ of 1 end with <\\|im_end\\|>, [0-9]+ exact\n.*ask it: gradformer generate --checkpoint [^ ]*tuned/model.safetensors --prompt 'your question' --temperature 0"
  REQUIRES gradformer_cli_sft_base FIXTURE gradformer_cli_sft_tuned)
gradformer_cli_test("generate from an sft model answers the prompt as a user's turn, in one line"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_SFT}/tuned/model.safetensors|--prompt|Reverse.|--temperature|0|--max-tokens|8"
  "-DSTDOUT=^[^\n]*\n$" "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_sft_tuned)
gradformer_cli_test("generate --raw from an sft model continues the prompt as text"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_SFT}/tuned/model.safetensors|--prompt|ab|--raw|--temperature|0|--max-tokens|4"
  "-DSTDOUT=^ab[^\n]*\n$" "-DSTDERR_ABSENT=." REQUIRES gradformer_cli_sft_tuned)
gradformer_cli_test("train --task sft without --init is status 2 naming --init"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|${GRADFORMER_CLI_SFT_DATA}/chat.jsonl" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --init is empty: decoder-only sft fine-tunes a trained decoder-only model \\(--init\\)\n$")
gradformer_cli_test("train --task sft --template zephyr is status 2 naming the templates"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|${GRADFORMER_CLI_SFT_DATA}/chat.jsonl|--init|x.safetensors|--template|zephyr"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer train: --template must be chatml or llama3, got 'zephyr'\n$")
gradformer_cli_test("train --task sft on a conversation without an output is status 1 naming its line"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|${GRADFORMER_CLI_SFT_DATA}/bad.jsonl|--init|${GRADFORMER_CLI_SFT}/base/model.safetensors|--out|${GRADFORMER_CLI_SFT}/refused"
  -DEXIT=1 ${one_error_line} "-DSTDERR=bad.jsonl:1: \"output\" is missing\n$"
  "-DNO_FILES=${GRADFORMER_CLI_SFT}/refused/model.safetensors" REQUIRES gradformer_cli_sft_base)
# Three turns through a pipe, /reset between the second and the third: the second reads its new
# tokens on top of the first's cache, the third starts afresh.
file(WRITE ${GRADFORMER_CLI_SFT_DATA}/turns.txt "hi\nReverse.\n/reset\nab cd\n/quit\nnot read\n")
gradformer_cli_test("chat through a pipe: the cache kept across turns, /reset, /quit"
  "-DARGS=chat|--checkpoint|${GRADFORMER_CLI_SFT}/tuned/model.safetensors|--temperature|0|--max-tokens|6|--stats"
  -DSTDIN=${GRADFORMER_CLI_SFT_DATA}/turns.txt
  "-DSTDERR=^\\(read [0-9]+ new tokens after 0 cached; wrote [1-6]\\)\n\\(read [0-9]+ new tokens after [1-9][0-9]* cached; wrote [1-6]\\)\n\\(read [0-9]+ new tokens after 0 cached; wrote [1-6]\\)\n$"
  REQUIRES gradformer_cli_sft_tuned)
gradformer_cli_test("chat with a model that has no chat tokens is status 2 saying to fine-tune it"
  "-DARGS=chat|--checkpoint|${GRADFORMER_CLI_SFT}/base/model.safetensors" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer chat: [^ ]*base/model.safetensors's tokenizer has no <\\|im_start\\|>, which the chatml template writes: fine-tune the model first"
  REQUIRES gradformer_cli_sft_base)
# LoRA: adapters of rank 2 beside W^Q, W^V and the feed-forward's two matrices of the grown model
# (d 16, d_ff 32): 2 (16 + 16) twice and 2 (16 + 32) twice, 320 numbers, of the model's 6448 + 320;
# and the embedding (262 x 16 = 4192), trained too because chatml's tokens were added: 4512.
gradformer_cli_test("train --task sft --lora-rank: the adapters alone trained, counted"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|${GRADFORMER_CLI_SFT_DATA}/chat.jsonl|--init|${GRADFORMER_CLI_SFT}/base/model.safetensors|--steps|4|--batch-size|4|--lora-rank|2|--lora-targets|v,ffn,q|--out|${GRADFORMER_CLI_SFT}/lora"
  -DCLEAN=${GRADFORMER_CLI_SFT}/lora "-DFILES=${GRADFORMER_CLI_SFT}/lora/model.safetensors"
  "-DSTDOUT=\nLoRA: the embedding is trained too \\(target embed\\), so that the template's new tokens learn rows of their own\nLoRA rank 2, alpha 2 on q,v,ffn,embed: training 4512 of the model's 6768 parameters \\(66.67%\\), the rest frozen\n"
  REQUIRES gradformer_cli_sft_base FIXTURE gradformer_cli_sft_lora)
gradformer_cli_test("params of a LoRA checkpoint shows the adapters' term"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_SFT}/lora/model.safetensors"
  "-DSTDOUT=LoRA adapters 320 \\(rank 2 on q,v,ffn: r \\(in \\+ out\\) beside each; merge-lora folds them in\\)\n.*the checkpoint's 23 tensors hold 6768 numbers: the same\n"
  REQUIRES gradformer_cli_sft_lora)
gradformer_cli_test("chat reads a checkpoint with adapters beside its weights"
  "-DARGS=chat|--checkpoint|${GRADFORMER_CLI_SFT}/lora/model.safetensors|--temperature|0|--max-tokens|3|--stats"
  -DSTDIN=${GRADFORMER_CLI_SFT_DATA}/turns.txt
  "-DSTDERR=^\\(read [0-9]+ new tokens after 0 cached; wrote [1-3]\\)\n" REQUIRES gradformer_cli_sft_lora)
gradformer_cli_test("merge-lora writes the model with its adapters folded in"
  "-DARGS=merge-lora|--checkpoint|${GRADFORMER_CLI_SFT}/lora/model.safetensors|--out|${GRADFORMER_CLI_SFT}/merged.safetensors|--force"
  "-DFILES=${GRADFORMER_CLI_SFT}/merged.safetensors" "-DSTDOUT=^merged the LoRA adapters of [^ ]*lora/model.safetensors into [^ ]*merged.safetensors\n$"
  REQUIRES gradformer_cli_sft_lora FIXTURE gradformer_cli_sft_merged)
gradformer_cli_test("the merged model has no adapters and answers as a user's turn"
  "-DARGS=params|--checkpoint|${GRADFORMER_CLI_SFT}/merged.safetensors"
  "-DSTDOUT=the checkpoint's 15 tensors hold 6448 numbers: the same\n" "-DSTDOUT_ABSENT=LoRA" REQUIRES gradformer_cli_sft_merged)
gradformer_cli_test("merge-lora of a checkpoint without adapters is status 1 saying so"
  "-DARGS=merge-lora|--checkpoint|${GRADFORMER_CLI_SFT}/base/model.safetensors|--out|${GRADFORMER_CLI_SFT}/none.safetensors"
  -DEXIT=1 ${one_error_line} "-DSTDERR=base/model.safetensors has no LoRA adapters to merge \\(no config.lora.rank\\)\n$"
  "-DNO_FILES=${GRADFORMER_CLI_SFT}/none.safetensors" REQUIRES gradformer_cli_sft_base)
gradformer_cli_test("train --lora-rank on a task that trains from scratch is status 2 naming the flag"
  "-DARGS=train|--arch|decoder-only|--text|${GRADFORMER_CLI_SFT_DATA}/text.txt|--lora-rank|4" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --lora-rank is for fine-tuning a trained model \\(decoder-only sft\\), not decoder-only text\n$")
gradformer_cli_test("train --lora-targets with an unknown projection is status 2 listing them"
  "-DARGS=train|--arch|decoder-only|--task|sft|--data|x.jsonl|--init|x.safetensors|--lora-rank|4|--lora-targets|q,w"
  -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer train: --lora-targets: LoRA targets: 'w' in 'q,w' is not one of q, k, v, o, ffn, embed \\(comma-separated\\)\n$")
gradformer_cli_test("score --text reads a checkpoint with adapters beside its weights"
  "-DARGS=score|--checkpoint|${GRADFORMER_CLI_SFT}/lora/model.safetensors|--text|${GRADFORMER_CLI_SFT_DATA}/text.txt"
  "-DSTDOUT=600 tokens predicted \\(600 bytes\\), blocks of 64\nloss [0-9.]+ nats/token" REQUIRES gradformer_cli_sft_lora)
