# A language model of a text file, as a user runs it: train --arch decoder-only --text with the
# bytes and the bpe tokenizer (its progress shows bits per byte and a sample), generate continuing
# raw text past the model's max-len, score --text, and each refusal with its message and status.
set(GRADFORMER_CLI_TEXT ${CMAKE_CURRENT_BINARY_DIR}/cli-run-text)
set(text_file ${GRADFORMER_CLI_TEXT}-book.txt)
set(tiny_text --d-model|16|--d-ff|32|--heads|2|--layers|1|--batch-size|4)
string(REPEAT "the cat sat on the mat.|" 20 book)  # 480 bytes ('|' is a line end)
gradformer_cli_test("text: a small book" "-DARGS=train|--help" -DWRITE=${text_file} "-DWRITE_TEXT=${book}"
  FIXTURE gradformer_cli_text_book)
gradformer_cli_test("train --help lists the text flags" "-DARGS=train|--arch|decoder-only|--help"
  "-DSTDOUT=--text X +decoder-only text: a language model of this file.*--context X .*\\(default 128\\).*--tokenizer X .*words.*bytes.*bpe.*--vocab-size X +bpe: the vocabulary's size, specials included \\(0: 1024\\)")
gradformer_cli_test("train --arch decoder-only --text: bits per byte and a sample at each evaluation"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|${tiny_text}|--context|24|--steps|4|--eval-every|2|--log-every|2|--out|${GRADFORMER_CLI_TEXT}/bytes"
  -DCLEAN=${GRADFORMER_CLI_TEXT}/bytes "-DSTDERR_ABSENT=." "-DFILES=${GRADFORMER_CLI_TEXT}/bytes/model.safetensors"
  "-DSTDOUT=^training decoder-only text: [0-9]+ parameters .*\nstep 2/4  loss [^\n]*\nstep 2: valid bits per byte [0-9.]+. sample \"the cat sat \" → \"[^\n]*\"\nstep 2: valid loss [0-9.]+\n.*trained 4 steps .*\nvalid loss [0-9.]+\nvalid perplexity [0-9.]+, bits per byte [0-9.]+ \\(47 tokens predicted, 47 bytes\\)\ngenerate with it: gradformer generate --checkpoint [^ ]*bytes/model.safetensors --prompt 'The ' --max-tokens 200\n$"
  REQUIRES gradformer_cli_text_book FIXTURE gradformer_cli_text_bytes)
gradformer_cli_test("train --text --tokenizer bpe learns its vocabulary from the training part"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--tokenizer|bpe|--vocab-size|270|${tiny_text}|--context|8|--steps|2|--out|${GRADFORMER_CLI_TEXT}/bpe|--quiet"
  -DCLEAN=${GRADFORMER_CLI_TEXT}/bpe "-DSTDERR_ABSENT=."
  "-DSTDOUT=valid perplexity [0-9.]+, bits per byte [0-9.]+ \\([0-9]+ tokens predicted, [0-9]+ bytes\\)\n"
  REQUIRES gradformer_cli_text_book FIXTURE gradformer_cli_text_bpe)
gradformer_cli_test("train --text writes to runs/<the file's name>"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--d-model|16|--d-ff|32|--heads|2|--layers|1|--batch-size|2|--context|20|--steps|1|--quiet"
  -DWORKDIR=${GRADFORMER_CLI_TEXT}/workdir -DCLEAN=${GRADFORMER_CLI_TEXT}/workdir
  "-DFILES=${GRADFORMER_CLI_TEXT}/workdir/runs/cli-run-text-book/model.safetensors" REQUIRES gradformer_cli_text_book)
gradformer_cli_test("generate continues raw text with a bytes model, past its max-len"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_TEXT}/bytes/model.safetensors|--prompt|the cat|--max-tokens|60|--seed|3"
  "-DSTDERR_ABSENT=." "-DSTDOUT=^the cat" REQUIRES gradformer_cli_text_bytes)
gradformer_cli_test("generate continues raw text with a bpe model"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_TEXT}/bpe/model.safetensors|--prompt|the mat|--max-tokens|30"
  "-DSTDERR_ABSENT=." "-DSTDOUT=^the mat" REQUIRES gradformer_cli_text_bpe)
gradformer_cli_test("generate with a text model needs a prompt, status 2"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_TEXT}/bytes/model.safetensors" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer generate: a bytes model continues text: give a --prompt to continue\n$" REQUIRES gradformer_cli_text_bytes)
gradformer_cli_test("score --text: loss, perplexity and bits per byte of a whole file"
  "-DARGS=score|--checkpoint|${GRADFORMER_CLI_TEXT}/bytes/model.safetensors|--text|${text_file}" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^bytes tokenizer: 479 tokens predicted \\(479 bytes\\), blocks of 24\nloss [0-9.]+ nats/token, perplexity [0-9.]+, bits per byte [0-9.]+\n$"
  REQUIRES "gradformer_cli_text_bytes;gradformer_cli_text_book")
gradformer_cli_test("score --text with a bpe model counts the bytes of its tokens"
  "-DARGS=score|--checkpoint|${GRADFORMER_CLI_TEXT}/bpe/model.safetensors|--text|${text_file}" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^bpe tokenizer: [0-9]+ tokens predicted \\(4[0-9][0-9] bytes\\), blocks of 8\n" REQUIRES "gradformer_cli_text_bpe;gradformer_cli_text_book")
gradformer_cli_test("score --text --batch-size is status 2 whatever its value: it would be ignored"
  "-DARGS=score|--checkpoint|${GRADFORMER_CLI_TEXT}/bytes/model.safetensors|--text|${text_file}|--batch-size|abc"
  -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer score: --batch-size is for --data. --text is scored one block of the model's context at a time\n$"
  REQUIRES "gradformer_cli_text_bytes;gradformer_cli_text_book")
gradformer_cli_test("score --text refuses a model of words, status 2"
  "-DARGS=score|--checkpoint|${GRADFORMER_LM_DIR}/model.safetensors|--text|${text_file}" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer score: --text needs a model of bytes or bpe tokens. " REQUIRES "gradformer_cli_lm;gradformer_cli_text_book")
gradformer_cli_test("score --text refuses an encoder-decoder, status 2"
  "-DARGS=score|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors|--text|${text_file}" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer score: --text needs a decoder-only model of text" REQUIRES "gradformer_cli_model;gradformer_cli_text_book")
# Refused before training.
gradformer_cli_test("train --text --tokenizer words is status 2, saying why"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--tokenizer|words|--out|${GRADFORMER_CLI_TEXT}/words" -DEXIT=2
  ${one_error_line} "-DSTDERR=^gradformer train: --tokenizer words is not for decoder-only text, whose file is read as bytes")
gradformer_cli_test("train --text --vocab-size with bytes is status 2"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--vocab-size|500|--out|${GRADFORMER_CLI_TEXT}/vocab" -DEXIT=2
  ${one_error_line} "-DSTDERR=^gradformer train: --vocab-size is not used by the bytes tokenizer")
gradformer_cli_test("train --text --context past --max-len is status 2"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--context|30|--max-len|24|--out|${GRADFORMER_CLI_TEXT}/ctx" -DEXIT=2
  ${one_error_line} "-DSTDERR=^gradformer train: --context must be from 1 to max_len 24 \\(the model reads context tokens at once\\), got 30\n$")
gradformer_cli_test("train --text of an empty file is status 1"
  "-DARGS=train|--arch|decoder-only|--text|${GRADFORMER_CLI_TEXT}-empty.txt|--out|${GRADFORMER_CLI_TEXT}/empty"
  -DWRITE=${GRADFORMER_CLI_TEXT}-empty.txt -DWRITE_TEXT= -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer train: error: [^\n]*cli-run-text-empty.txt: the file is empty")
gradformer_cli_test("train --text of a file too short names its tokens and the tokens needed, status 1"
  "-DARGS=train|--arch|decoder-only|--text|${text_file}|--context|500|--max-len|500|--out|${GRADFORMER_CLI_TEXT}/short"
  -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer train: error: [^\n]*book.txt: too short for a language model with context 500: the bytes tokenizer makes 480 tokens of it, 432 in the training part \\(the first 90% of the bytes\\) and 48 in the held-out tail. one training block needs context \\+ 1 = 501 tokens and the tail at least 2, so about 557 tokens in all"
  REQUIRES gradformer_cli_text_book)
gradformer_cli_test("train --text --tokenizer bpe of a file that is not UTF-8 names the byte, status 1"
  "-DARGS=train|--arch|decoder-only|--text|${GRADFORMER_LM_DIR}/model.safetensors|--tokenizer|bpe|--out|${GRADFORMER_CLI_TEXT}/binary"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer train: error: [^\n]*model.safetensors: not UTF-8 text: byte 0x[0-9A-F][0-9A-F] at offset [0-9]+ "
  REQUIRES gradformer_cli_lm)
gradformer_cli_test("train --text of a missing file is status 1"
  "-DARGS=train|--arch|decoder-only|--text|${GRADFORMER_CLI_TEXT}-missing.txt|--out|${GRADFORMER_CLI_TEXT}/missing"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer train: error: [^\n]*cli-run-text-missing.txt: cannot open for reading")

# No command writes over one of its own inputs, however the path is spelled: refused before any work.
set(guarded_text ${GRADFORMER_CLI_TEXT}-guarded.txt)
gradformer_cli_test("train --metrics that is the --text file is status 2 naming both"
  "-DARGS=train|--arch|decoder-only|--text|${guarded_text}|--metrics|${CMAKE_CURRENT_BINARY_DIR}/./cli-run-text-guarded.txt|--steps|1"
  -DWRITE=${guarded_text} "-DWRITE_TEXT=${book}" -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer train: --metrics [^\n]*guarded.txt is [^\n]*cli-run-text-guarded.txt, one of the run's inputs: writing the metrics would replace it. write it elsewhere\n$")
gradformer_cli_test("train --profile that is the --text file is status 2 naming both"
  "-DARGS=train|--arch|decoder-only|--text|guarded.txt|--profile|./guarded.txt|--steps|1"
  -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR} -DWRITE=${CMAKE_CURRENT_BINARY_DIR}/guarded.txt "-DWRITE_TEXT=${book}" -DEXIT=2
  ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer train: --profile ./guarded.txt is guarded.txt, one of the run's inputs: writing the profile would replace it. write it elsewhere\n$")

# A resumed run reads the files it trained on from where it found them, whatever folder it resumes
# from, and refuses one whose bytes changed (another text of the same length trained on silently).
set(moved ${GRADFORMER_CLI_TEXT}/moved)
string(REPLACE "cat" "dog" other_book "${book}")  # the same length, other bytes
gradformer_cli_test("text: a run on a text named relative to its folder, stopped after a step"
  "-DARGS=train|--arch|decoder-only|--text|book.txt|${tiny_text}|--context|8|--steps|4|--stop-after|1|--out|${moved}/run|--quiet"
  -DCLEAN=${moved} -DWORKDIR=${moved}/first -DWRITE=${moved}/first/book.txt "-DWRITE_TEXT=${book}"
  "-DFILES=${moved}/run/model.safetensors" FIXTURE gradformer_cli_text_moved)
gradformer_cli_test("text: resumed from another folder, the run reads its text from where it found it"
  "-DARGS=train|--resume|${moved}/run/model.safetensors|--steps|4|--stop-after|2|--quiet" -DWORKDIR=${moved}/second
  "-DSTDERR_ABSENT=." REQUIRES "gradformer_cli_text_moved;gradformer_cli_text_moved_refused"
  FIXTURE gradformer_cli_text_moved_resumed)
gradformer_cli_test("text: a resume refuses a text whose bytes changed, naming it and the checkpoint"
  "-DARGS=train|--resume|${moved}/run/model.safetensors|--steps|4|--stop-after|3|--quiet"
  -DWRITE=${moved}/first/book.txt "-DWRITE_TEXT=${other_book}" -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer train: --text [^\n]*/moved/first/book.txt is not the file the run trained on: its bytes changed since [^\n]*/moved/run/model.safetensors was saved \\(fingerprint [0-9a-f]+, was [0-9a-f]+\\). name a file explicitly to go on with it\n$"
  REQUIRES gradformer_cli_text_moved_resumed FIXTURE gradformer_cli_text_moved_changed)
gradformer_cli_test("text: a resume goes on with a text named explicitly"
  "-DARGS=train|--resume|${moved}/run/model.safetensors|--text|${moved}/first/book.txt|--steps|4|--quiet"
  "-DSTDERR_ABSENT=." "-DSTDOUT=trained 2 steps" REQUIRES gradformer_cli_text_moved_changed)
gradformer_cli_test("text: a resume refuses --data for a run that read a text"
  "-DARGS=train|--resume|${moved}/run/model.safetensors|--data|${moved}/first/book.txt|--steps|4" -DEXIT=2
  ${one_error_line} "-DSTDERR=^gradformer train: --data names [^\n]*book.txt, but the resumed run read no such file\n$"
  REQUIRES gradformer_cli_text_moved FIXTURE gradformer_cli_text_moved_refused)
# (One after another: a resume that trains locks the run's folder, and the refusal above would then
# meet the lock instead: it runs first, as a fixture of the resumes.)
