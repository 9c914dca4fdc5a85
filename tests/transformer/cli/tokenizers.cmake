# gradformer tokenize and learn-bpe as a user runs them: text to ids and back byte for byte with each
# tokenizer (the bytes, one learn-bpe wrote, a Hugging Face tokenizer.json, GPT-2's, a checkpoint's),
# the pieces of a tokenizer learned on a text small enough to work out by hand, GPT-2's ids checked
# against its fixture (made by OpenAI's encoder.py: data/gpt2_reference), and every usage error
# (status 2) and data error (status 1).
set(GRADFORMER_TOK_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-tokenize)
set(gpt2_dir ${CMAKE_CURRENT_SOURCE_DIR}/data/gpt2_reference)
set(aaab ${GRADFORMER_TOK_DIR}/aaab)

# --- learn-bpe on "aaab aaab", by hand: the pre-tokens "aaab" and " aaab". Pair counts: a a 4, a b 2,
# space a 1: merge 1 is "aa". Then aa a 2, a b 2, space aa 1: a tie, won by the pair of smaller ids (a
# is 97, aa 256): merge 2 is "ab". Then aa ab 2, space aa 1: merge 3 is "aaab". 263 tokens: the 4
# specials, 256 bytes, 3 merged; "aaab aaab" is then aaab (id 4 + 258), Ġ (the space, 4 + 32), aaab:
# 3 tokens for 9 bytes. Asked for 270, a fourth merge " aaab" (space aaab 1) leaves no pair: 264.
gradformer_cli_test("learn-bpe on 'aaab aaab' learns aa, ab, aaab: 263 tokens, 3 of 9 bytes"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|--out|${aaab}.json|--force" -DCLEAN=${GRADFORMER_TOK_DIR}
  -DWRITE=${aaab}.txt "-DWRITE_TEXT=aaab aaab" "-DSTDERR_ABSENT=." "-DFILES=${aaab}.json"
  "-DSTDOUT=^learned 3 merges from 9 bytes in 1 file \\([0-9]+.[0-9][0-9] s\\): 263 tokens \\(4 specials, 256 bytes, 3 merged\\), 0.333 tokens per byte of the text. wrote [^\n]*/aaab.json\n$"
  FIXTURE gradformer_tok_aaab)
gradformer_cli_test("tokenize --pieces with the learned tokenizer: aaab Ġ aaab"
  "-DARGS=tokenize|--tokenizer|${aaab}.json|--pieces" -DSTDIN=${aaab}.txt "-DSTDOUT=^aaab Ġ aaab\n$" "-DSTDERR_ABSENT=."
  REQUIRES gradformer_tok_aaab)
gradformer_cli_test("tokenize with the learned tokenizer: ids 262 36 262"
  "-DARGS=tokenize|--tokenizer|${aaab}.json" -DSTDIN=${aaab}.txt "-DSTDOUT=^262 36 262\n$" REQUIRES gradformer_tok_aaab)
gradformer_cli_test("tokenize --decode with the learned tokenizer gives the text, nothing added"
  "-DARGS=tokenize|--tokenizer|${aaab}.json|--decode" -DWRITE=${aaab}-ids.txt "-DWRITE_TEXT=262 36|262|"
  -DSTDIN=${aaab}-ids.txt "-DSTDOUT=^aaab aaab$" REQUIRES gradformer_tok_aaab)
gradformer_cli_test("learn-bpe stops short when no pair is left, and says so: 264 of 270"
  "-DARGS=learn-bpe|--vocab-size|270|${aaab}.txt|--out|${aaab}-270.json|--force" "-DFILES=${aaab}-270.json"
  "-DSTDOUT=^learned 4 merges from 9 bytes in 1 file \\([0-9.]+ s\\): 264 tokens \\(4 specials, 256 bytes, 4 merged\\), short of the 270 asked: no pair of neighbouring tokens is left, 0.222 tokens per byte of the text. wrote "
  REQUIRES gradformer_tok_aaab FIXTURE gradformer_tok_aaab_270)
gradformer_cli_test("tokenize --pieces after the fourth merge: aaab Ġaaab"
  "-DARGS=tokenize|--tokenizer|${aaab}-270.json|--pieces" -DSTDIN=${aaab}.txt "-DSTDOUT=^aaab Ġaaab\n$"
  REQUIRES gradformer_tok_aaab_270)
gradformer_cli_test("learn-bpe --specials puts <sep> after the four specials: ids shift by one"
  "-DARGS=learn-bpe|--vocab-size|264|--specials|<sep>|${aaab}.txt|--out|${aaab}-sep.json|--force"
  "-DSTDOUT=: 264 tokens \\(5 specials, 256 bytes, 3 merged\\)" REQUIRES gradformer_tok_aaab FIXTURE gradformer_tok_aaab_sep)
gradformer_cli_test("tokenize with <sep> in front: ids 263 37 263, and 4 is <sep>"
  "-DARGS=tokenize|--tokenizer|${aaab}-sep.json" -DSTDIN=${aaab}.txt "-DSTDOUT=^263 37 263\n$" REQUIRES gradformer_tok_aaab_sep)
gradformer_cli_test("tokenize --decode of a special writes its name"
  "-DARGS=tokenize|--tokenizer|${aaab}-sep.json|--decode" -DWRITE=${aaab}-sep-ids.txt "-DWRITE_TEXT=263 4 2"
  -DSTDIN=${aaab}-sep-ids.txt "-DSTDOUT=^aaab<sep></s>$" REQUIRES gradformer_tok_aaab_sep)
# An existing --out is replaced with --force alone, as average, import and trace --html replace theirs.
gradformer_cli_test("learn-bpe without --force refuses an existing --out, status 2, the file left as it was"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|--out|${aaab}-kept.json" -DWRITE=${aaab}-kept.json
  "-DWRITE_TEXT=an old file" -DEXIT=2 ${one_error_line} "-DFILES=${aaab}-kept.json"
  "-DSTDERR=^gradformer learn-bpe: --out [^ ]*aaab-kept.json exists. give --force to replace it\n$" REQUIRES gradformer_tok_aaab)
gradformer_cli_test("learn-bpe --out /dev/null is status 2: a device is never replaced, --force or not"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|--out|/dev/null|--force" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer learn-bpe: --out /dev/null: a device, not a regular file. not replacing it\n$" REQUIRES gradformer_tok_aaab)
gradformer_cli_test("learn-bpe --force replaces an existing --out"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|--out|${aaab}-replaced.json|--force" -DWRITE=${aaab}-replaced.json
  "-DWRITE_TEXT=an old file" "-DSTDOUT=^learned 3 merges" REQUIRES gradformer_tok_aaab FIXTURE gradformer_tok_aaab_replaced)
gradformer_cli_test("tokenize with the replaced --out reads the new tokenizer"
  "-DARGS=tokenize|--tokenizer|${aaab}-replaced.json" -DSTDIN=${aaab}.txt "-DSTDOUT=^262 36 262\n$"
  REQUIRES gradformer_tok_aaab_replaced)
gradformer_cli_test("learn-bpe on two files counts both"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|${aaab}.txt|--out|${aaab}-twice.json|--force"
  "-DSTDOUT=^learned 3 merges from 18 bytes in 2 files .*: 263 tokens .*, 0.333 tokens per byte" REQUIRES gradformer_tok_aaab)

# --- round trips: tokenize | tokenize --decode gives the input back byte for byte.
set(spaced_text "first line|^a tab, then   three spaces|  two spaces first, two after  ||a blank line above^ and a tab|")
function(gradformer_round_trip name tokenizer)
  add_test(NAME "gradformer program: tokenize round trip: ${name}"
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gradformer> "-DTOKENIZER=${tokenizer}"
                   "-DDIR=${GRADFORMER_TOK_DIR}-round-trip/${name}" ${ARGN}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenize_round_trip.cmake)
endfunction()
gradformer_round_trip("bytes, newlines tabs and runs of spaces" "--bytes" "-DTEXT=${spaced_text}")
gradformer_round_trip("bytes, a file not ending in a newline" "--bytes" "-DTEXT=no newline at the end  ")
gradformer_round_trip("bytes, the README (not ASCII)" "--bytes" -DINPUT=${PROJECT_SOURCE_DIR}/README.md)
gradformer_round_trip("gpt2, newlines tabs and runs of spaces" "--gpt2|${gpt2_dir}" "-DTEXT=${spaced_text}")
gradformer_round_trip("gpt2, Hello world is GPT-2's ids" "--gpt2|${gpt2_dir}" "-DTEXT=Hello world"
  "-DIDS=39 68 266 78 259 291 297")
# The same tokenizer under the hub's names (vocab.json, merges.txt), which COMMANDS.md tells to download.
set(gpt2_hub_names ${CMAKE_CURRENT_BINARY_DIR}/gpt2-hub-names)
configure_file(${gpt2_dir}/encoder.json ${gpt2_hub_names}/vocab.json COPYONLY)
configure_file(${gpt2_dir}/vocab.bpe ${gpt2_hub_names}/merges.txt COPYONLY)
gradformer_round_trip("gpt2 under the hub's file names, Hello world is GPT-2's ids" "--gpt2|${gpt2_hub_names}"
  "-DTEXT=Hello world" "-DIDS=39 68 266 78 259 291 297")
gradformer_round_trip("gpt2, two newlines are GPT-2's ids" "--gpt2|${gpt2_dir}" "-DTEXT=a||b" "-DIDS=64 198 198 65")
gradformer_round_trip("gpt2, an empty text is no ids" "--gpt2|${gpt2_dir}" "-DTEXT=" "-DIDS=")
gradformer_round_trip("learned, newlines tabs and runs of spaces" "--tokenizer|${aaab}.json" "-DTEXT=${spaced_text}")
set_tests_properties("gradformer program: tokenize round trip: learned, newlines tabs and runs of spaces"
                     PROPERTIES FIXTURES_REQUIRED gradformer_tok_aaab)
add_test(NAME "gradformer program: tokenize --bytes: every byte value, NUL and 0xFF included, both ways"
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gradformer> -DDIR=${GRADFORMER_TOK_DIR}-round-trip/every-byte
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenize_bytes.cmake)
# A text of its own, learned from and cut by what was learned from it: 400 tokens of this repository's
# run_cli.cmake (ASCII), then its round trip.
set(learned_cli ${GRADFORMER_TOK_DIR}-run-cli.json)
gradformer_cli_test("learn-bpe --vocab-size 400 on run_cli.cmake"
  "-DARGS=learn-bpe|--vocab-size|400|${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake|--out|${learned_cli}|--force"
  "-DSTDOUT=^learned [0-9]+ merges from [0-9]+ bytes in 1 file .*: 400 tokens \\(4 specials, 256 bytes, 140 merged\\), 0.[0-9]+ tokens per byte"
  "-DFILES=${learned_cli}" FIXTURE gradformer_tok_run_cli)
gradformer_round_trip("learned on run_cli.cmake, run_cli.cmake" "--tokenizer|${learned_cli}"
  -DINPUT=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake)
set_tests_properties("gradformer program: tokenize round trip: learned on run_cli.cmake, run_cli.cmake"
                     PROPERTIES FIXTURES_REQUIRED gradformer_tok_run_cli)

# --- the bytes and GPT-2's, on small cases worked out by hand or taken from GPT-2's fixture.
set(tok_inputs ${GRADFORMER_TOK_DIR}-inputs)
gradformer_cli_test("tokenize --bytes: id 4 + each byte, the newline too" "-DARGS=tokenize|--bytes"
  -DWRITE=${tok_inputs}/hi.txt "-DWRITE_TEXT=hi|" -DSTDIN=${tok_inputs}/hi.txt "-DSTDOUT=^108 109 14\n$")
gradformer_cli_test("tokenize --bytes --pieces shows the newline as Ċ" "-DARGS=tokenize|--bytes|--pieces"
  -DWRITE=${tok_inputs}/hi-pieces.txt "-DWRITE_TEXT=hi |" -DSTDIN=${tok_inputs}/hi-pieces.txt "-DSTDOUT=^h i Ġ Ċ\n$")
gradformer_cli_test("tokenize of an empty input is an empty line" "-DARGS=tokenize|--bytes"
  -DWRITE=${tok_inputs}/empty.txt "-DWRITE_TEXT=" -DSTDIN=${tok_inputs}/empty.txt "-DSTDOUT=^\n$")
gradformer_cli_test("tokenize --decode of an empty input writes nothing" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/empty-ids.txt "-DWRITE_TEXT=" -DSTDIN=${tok_inputs}/empty-ids.txt "-DSTDOUT=^$" "-DSTDERR_ABSENT=.")
gradformer_cli_test("tokenize --decode reads ids separated by any whitespace" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/spread-ids.txt "-DWRITE_TEXT=  108|^109 ||14" -DSTDIN=${tok_inputs}/spread-ids.txt "-DSTDOUT=^hi\n$")
gradformer_cli_test("tokenize --gpt2 --pieces: GPT-2's tokens of Hello world" "-DARGS=tokenize|--gpt2|${gpt2_dir}|--pieces"
  -DWRITE=${tok_inputs}/hello.txt "-DWRITE_TEXT=Hello world" -DSTDIN=${tok_inputs}/hello.txt "-DSTDOUT=^H e ll o Ġw or ld\n$")

# --- a checkpoint's tokenizer: the tiny models' words (the copy task's are 4 .. 10, ids 4 .. 10).
set(copy_model ${GRADFORMER_CLI_DIR}/model.safetensors)
gradformer_cli_test("tokenize --checkpoint of a model of words: its ids, an unknown word <unk>, newlines cut words"
  "-DARGS=tokenize|--checkpoint|${copy_model}" -DWRITE=${tok_inputs}/copy.txt "-DWRITE_TEXT=4 5|10^99|"
  -DSTDIN=${tok_inputs}/copy.txt "-DSTDOUT=^4 5 10 3\n$" REQUIRES gradformer_cli_model)
gradformer_cli_test("tokenize --checkpoint --side source --pieces" "-DARGS=tokenize|--checkpoint|${copy_model}|--side|source|--pieces"
  -DWRITE=${tok_inputs}/copy-source.txt "-DWRITE_TEXT=4 5|10^99|" -DSTDIN=${tok_inputs}/copy-source.txt "-DSTDOUT=^4 5 10 <unk>\n$" REQUIRES gradformer_cli_model)
gradformer_cli_test("tokenize --checkpoint --decode joins words by one space"
  "-DARGS=tokenize|--checkpoint|${copy_model}|--decode" -DWRITE=${tok_inputs}/copy-ids.txt "-DWRITE_TEXT=4 10|3"
  -DSTDIN=${tok_inputs}/copy-ids.txt "-DSTDOUT=^4 10 <unk>$" REQUIRES gradformer_cli_model)
# --decode reads its ids a block of 64 KiB at a time: 100,000 bytes of ids cross a block's end inside
# the word "10", and a model of words still puts one space between every two words, across blocks too.
string(REPEAT "4 10 " 20000 many_copy_ids)
gradformer_cli_test("tokenize --checkpoint --decode of ids longer than a block joins words across blocks"
  "-DARGS=tokenize|--checkpoint|${copy_model}|--decode" -DWRITE=${tok_inputs}/copy-many-ids.txt
  "-DWRITE_TEXT=${many_copy_ids}" -DSTDIN=${tok_inputs}/copy-many-ids.txt "-DSTDOUT=^4 10 4 10 .* 4 10$"
  "-DSTDOUT_ABSENT=104|4 4|10 10|[ ][ ]" REQUIRES gradformer_cli_model)
gradformer_cli_test("tokenize --checkpoint of a decoder-only model: its words"
  "-DARGS=tokenize|--checkpoint|${GRADFORMER_LM_DIR}/model.safetensors|--pieces" -DWRITE=${tok_inputs}/french.txt
  "-DWRITE_TEXT=le chat zzqqx|" -DSTDIN=${tok_inputs}/french.txt "-DSTDOUT=^le chat <unk>\n$" REQUIRES gradformer_cli_lm)
gradformer_cli_test("tokenize --checkpoint of an encoder-only model: its vocabulary's words"
  "-DARGS=tokenize|--checkpoint|${GRADFORMER_CLI_ENC}/mlm/model.safetensors|--pieces"
  -DWRITE=${tok_inputs}/french-mlm.txt "-DWRITE_TEXT=le chat zzqqx|" -DSTDIN=${tok_inputs}/french-mlm.txt
  "-DSTDOUT=^le chat <unk>\n$" REQUIRES gradformer_cli_encoder)
gradformer_cli_test("tokenize --side with a decoder-only checkpoint is status 2"
  "-DARGS=tokenize|--checkpoint|${GRADFORMER_LM_DIR}/model.safetensors|--side|source" -DWRITE=${tok_inputs}/french-side.txt "-DWRITE_TEXT=le|" -DSTDIN=${tok_inputs}/french-side.txt
  -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: --side is for an encoder-decoder checkpoint. [^ ]*model.safetensors is a decoder-only one, with one tokenizer\n$"
  REQUIRES gradformer_cli_lm)

# --- usage errors: status 2, one line.
gradformer_cli_test("tokenize --help lists its flags" "-DARGS=tokenize|--help"
  "-DSTDOUT=usage: gradformer tokenize.*byte for byte.*--checkpoint X.*--side X.*--tokenizer X.*--gpt2 X.*--bytes.*--decode.*--pieces")
gradformer_cli_test("learn-bpe --help lists its flags" "-DARGS=learn-bpe|--help"
  "-DSTDOUT=usage: gradformer learn-bpe \\[flags\\] FILE....*--vocab-size X.*--specials X.*--out X")
gradformer_cli_test("--help lists tokenize and learn-bpe" -DARGS=--help "-DSTDOUT=\n  tokenize .*\n  learn-bpe ")
gradformer_cli_test("tokenize without a tokenizer is status 2, naming the four" "-DARGS=tokenize" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: say which tokenizer: --checkpoint FILE, --tokenizer FILE, --gpt2 DIR or --bytes\n$")
gradformer_cli_test("tokenize with two tokenizers is status 2, naming them" "-DARGS=tokenize|--bytes|--tokenizer|t.json"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer tokenize: one tokenizer at a time, but --tokenizer and --bytes were given\n$")
gradformer_cli_test("tokenize with three tokenizers names them" "-DARGS=tokenize|--gpt2|d|--bytes|--checkpoint|c"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer tokenize: one tokenizer at a time, but --checkpoint, --gpt2 and --bytes were given\n$")
gradformer_cli_test("tokenize --side without --checkpoint is status 2" "-DARGS=tokenize|--bytes|--side|source"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer tokenize: --side is for --checkpoint\n$")
gradformer_cli_test("tokenize --side sideways is status 2, naming the choices" "-DARGS=tokenize|--checkpoint|c|--side|sideways"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer tokenize: --side must be one of source, target. got 'sideways'\n$")
gradformer_cli_test("tokenize --decode --pieces is status 2" "-DARGS=tokenize|--bytes|--decode|--pieces"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer tokenize: --decode reads ids and --pieces prints tokens: give one of them\n$")
gradformer_cli_test("learn-bpe without files is status 2" "-DARGS=learn-bpe|--vocab-size|300|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: give the text files to learn from")
gradformer_cli_test("learn-bpe without --vocab-size is status 2" "-DARGS=learn-bpe|a.txt|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --vocab-size is required\n$")
gradformer_cli_test("learn-bpe without --out is status 2" "-DARGS=learn-bpe|a.txt|--vocab-size|300"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --out is required\n$")
gradformer_cli_test("learn-bpe --vocab-size 259 is status 2, naming the minimum" "-DARGS=learn-bpe|a.txt|--vocab-size|259|--out|o.json|--force"
  -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer learn-bpe: --vocab-size must be from 260 to 16777216 \\(its 4 specials and the 256 bytes at least, a model.s largest vocabulary at most\\), got 259\n$")
gradformer_cli_test("learn-bpe --vocab-size counts the extra specials" "-DARGS=learn-bpe|a.txt|--vocab-size|261|--specials|<sep>,<mask>|--out|o.json|--force"
  -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer learn-bpe: --vocab-size must be from 262 to 16777216 .*, got 261\n$")
gradformer_cli_test("learn-bpe --vocab-size past a model's largest vocabulary is status 2" "-DARGS=learn-bpe|a.txt|--vocab-size|16777217|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --vocab-size must be from 260 to 16777216 .*, got 16777217\n$")
gradformer_cli_test("learn-bpe --vocab-size abc is status 2" "-DARGS=learn-bpe|a.txt|--vocab-size|abc|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --vocab-size expects an integer, got 'abc'\n$")
gradformer_cli_test("learn-bpe --specials sep (not <sep>) is status 2" "-DARGS=learn-bpe|a.txt|--vocab-size|300|--specials|sep|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --specials sep: .*written <name> without spaces, got \"sep\"\n$")
gradformer_cli_test("learn-bpe --specials <pad> (one of the four) is status 2" "-DARGS=learn-bpe|a.txt|--vocab-size|300|--specials|<pad>|--out|o.json|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --specials <pad>: .*special token <pad> given twice\n$")
gradformer_cli_test("learn-bpe --out one of its files is status 2, the file left as it was"
  "-DARGS=learn-bpe|--vocab-size|300|${aaab}.txt|--out|${aaab}.txt|--force" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer learn-bpe: --out [^ ]*aaab.txt is [^ ]*aaab.txt, one of the texts to learn from: the tokenizer would replace it. write it elsewhere\n$"
  REQUIRES gradformer_tok_aaab)
gradformer_cli_test("learn-bpe --out a directory is status 2" "-DARGS=learn-bpe|--vocab-size|300|${aaab}.txt|--out|${GRADFORMER_TOK_DIR}|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: --out [^ ]*cli-tokenize: a directory, not a regular file. not replacing it\n$"
  REQUIRES gradformer_tok_aaab)

# --- data errors: status 1, one line naming the input.
gradformer_cli_test("tokenize --decode of a word is status 1, naming it and its place" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/word-ids.txt "-DWRITE_TEXT=108 x1 14" -DSTDIN=${tok_inputs}/word-ids.txt -DEXIT=1 ${one_error_line}
  "-DSTDOUT=^$" "-DSTDERR=^gradformer tokenize: error: standard input: id number 2, 'x1', is not an integer\n$")
gradformer_cli_test("tokenize --decode of an id past the vocabulary is status 1, naming it and the ids" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/big-ids.txt "-DWRITE_TEXT=108 109|260" -DSTDIN=${tok_inputs}/big-ids.txt -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: standard input: id number 3, 260, is not an id of the tokenizer \\(0 to 259\\)\n$")
gradformer_cli_test("tokenize --decode of a negative id is status 1" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/negative-ids.txt "-DWRITE_TEXT=-1" -DSTDIN=${tok_inputs}/negative-ids.txt -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: standard input: id number 1, -1, is not an id of the tokenizer \\(0 to 259\\)\n$")
gradformer_cli_test("tokenize --decode of an endless word is status 1 after 64 bytes of it" "-DARGS=tokenize|--bytes|--decode"
  -DSTDIN=/dev/zero -DEXIT=1 ${one_error_line} "-DSTDOUT=^$"
  "-DSTDERR=^gradformer tokenize: error: standard input: id number 1, '(\\\\0)+...', is longer than 64 bytes: not an id of the tokenizer\n$")
gradformer_cli_test("tokenize --decode of an id past int64 is status 1" "-DARGS=tokenize|--bytes|--decode"
  -DWRITE=${tok_inputs}/huge-ids.txt "-DWRITE_TEXT=99999999999999999999999" -DSTDIN=${tok_inputs}/huge-ids.txt -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: standard input: id number 1, 99999999999999999999999, is not an id of the tokenizer")
gradformer_cli_test("tokenize --gpt2 --decode: ids up to 656, 657 refused" "-DARGS=tokenize|--gpt2|${gpt2_dir}|--decode"
  -DWRITE=${tok_inputs}/gpt2-ids.txt "-DWRITE_TEXT=39 657" -DSTDIN=${tok_inputs}/gpt2-ids.txt -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: standard input: id number 2, 657, is not an id of the tokenizer \\(0 to 656\\)\n$")
gradformer_cli_test("tokenize with a byte-pair tokenizer refuses text that is not UTF-8, naming the byte offset"
  "-DARGS=tokenize|--gpt2|${gpt2_dir}" -DSTDIN=${GRADFORMER_READERS_DIR}/latin1.txt -DEXIT=1 ${one_error_line} "-DSTDOUT=^$"
  "-DSTDERR=^gradformer tokenize: error: standard input: not UTF-8 at byte offset 3 \\(byte 0xE9\\). a byte-pair tokenizer reads UTF-8 text \\(--bytes takes any bytes\\)\n$"
  REQUIRES gradformer_cli_reader_inputs)
gradformer_cli_test("tokenize with a model of words refuses text that is not UTF-8 (not <unk> silently)"
  "-DARGS=tokenize|--checkpoint|${copy_model}" -DSTDIN=${GRADFORMER_READERS_DIR}/latin1.txt -DEXIT=1 ${one_error_line}
  "-DSTDOUT=^$"
  "-DSTDERR=^gradformer tokenize: error: standard input: not UTF-8 at byte offset 3 \\(byte 0xE9\\). a model of words reads UTF-8 text \\(--bytes takes any bytes\\)\n$"
  REQUIRES "gradformer_cli_reader_inputs;gradformer_cli_model")
# Megabytes of text, read a piece at a time: its ids decode back to it exactly.
gradformer_cli_test("tokenize --gpt2 reads megabytes of text a piece at a time"
  "-DARGS=tokenize|--gpt2|${gpt2_dir}" -DSTDIN=${GRADFORMER_READERS_DIR}/book.txt "-DSTDOUT=^[0-9]+ [0-9]+ [0-9]+ "
  "-DSTDERR_ABSENT=." -DSAVE_STDOUT=${tok_inputs}/book-ids.txt REQUIRES gradformer_cli_reader_inputs
  FIXTURE gradformer_cli_tokenize_book)
gradformer_cli_test("tokenize --gpt2 --decode gives the megabytes back exactly"
  "-DARGS=tokenize|--gpt2|${gpt2_dir}|--decode" -DSTDIN=${tok_inputs}/book-ids.txt
  -DSAME_STDOUT_AS=${GRADFORMER_READERS_DIR}/book.txt REQUIRES gradformer_cli_tokenize_book)
gradformer_cli_test("tokenize --bytes takes the same text" "-DARGS=tokenize|--bytes"
  -DSTDIN=${GRADFORMER_READERS_DIR}/latin1.txt "-DSTDOUT=^103 101 106 237 36 50 14 56 36 57 14\n$" REQUIRES gradformer_cli_reader_inputs)
gradformer_cli_test("learn-bpe refuses a file that is not UTF-8, naming it and the byte offset"
  "-DARGS=learn-bpe|--vocab-size|300|${GRADFORMER_READERS_DIR}/latin1.txt|--out|${GRADFORMER_TOK_DIR}-latin1.json|--force"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_TOK_DIR}-latin1.json"
  "-DSTDERR=^gradformer learn-bpe: error: [^ ]*latin1.txt: not UTF-8 at byte offset 3 \\(byte 0xE9\\). learn-bpe learns from UTF-8 text\n$"
  REQUIRES gradformer_cli_reader_inputs)
gradformer_cli_test("learn-bpe on empty files is status 1" "-DARGS=learn-bpe|--vocab-size|300|${tok_inputs}/nothing.txt|--out|${tok_inputs}/nothing.json|--force"
  -DWRITE=${tok_inputs}/nothing.txt "-DWRITE_TEXT=" -DEXIT=1 ${one_error_line} "-DNO_FILES=${tok_inputs}/nothing.json"
  "-DSTDERR=^gradformer learn-bpe: error: no text to learn from: the file is empty\n$")
gradformer_cli_test("learn-bpe on two empty files says both are" "-DARGS=learn-bpe|--vocab-size|300|${tok_inputs}/nothing2.txt|${tok_inputs}/nothing2.txt|--out|${tok_inputs}/nothing2.json|--force"
  -DWRITE=${tok_inputs}/nothing2.txt "-DWRITE_TEXT=" -DEXIT=1 ${one_error_line} "-DNO_FILES=${tok_inputs}/nothing2.json"
  "-DSTDERR=^gradformer learn-bpe: error: no text to learn from: the 2 files are empty\n$")
gradformer_cli_test("learn-bpe of a missing file names it, status 1" "-DARGS=learn-bpe|--vocab-size|300|${tok_inputs}/missing.txt|--out|${tok_inputs}/o.json|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: error: [^ ]*missing.txt: cannot open for reading: No such file or directory\n$")
gradformer_cli_test("learn-bpe of a directory names it, status 1" "-DARGS=learn-bpe|--vocab-size|300|${CMAKE_CURRENT_SOURCE_DIR}|--out|${tok_inputs}/o.json|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: error: [^ ]*tests/transformer: a directory, not a text file\n$")
gradformer_cli_test("learn-bpe --out in a missing folder names it, status 1"
  "-DARGS=learn-bpe|--vocab-size|263|${aaab}.txt|--out|${tok_inputs}/no/such/folder/t.json|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer learn-bpe: error: [^ ]*no/such/folder/t.json: cannot create the temporary file [^ ]*t.json.tmp-[0-9]+-[0-9]+: No such file or directory\n$"
  REQUIRES gradformer_tok_aaab)
gradformer_cli_test("tokenize --tokenizer of a missing file names it, status 1" "-DARGS=tokenize|--tokenizer|${tok_inputs}/missing.json"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: [^ ]*missing.json: cannot open for reading: No such file or directory\n$")
gradformer_cli_test("tokenize --tokenizer of a file that is not one names it, status 1" "-DARGS=tokenize|--tokenizer|${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer tokenize: error: [^ ]*run_cli.cmake: ")
gradformer_cli_test("tokenize --gpt2 of a missing folder names it, status 1" "-DARGS=tokenize|--gpt2|${tok_inputs}/no-gpt2"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: [^ ]*no-gpt2: not a directory \\(--gpt2 takes the folder holding GPT-2's vocab.json and merges.txt, or encoder.json and vocab.bpe\\)\n$")
gradformer_cli_test("tokenize --gpt2 of a folder without GPT-2's files names both pairs, status 1" "-DARGS=tokenize|--gpt2|${CMAKE_CURRENT_SOURCE_DIR}/cli"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: [^ ]*cli: no GPT-2 tokenizer: neither vocab.json \\+ merges.txt \\(the hub's names\\) nor encoder.json \\+ vocab.bpe \\(the original release's\\). give their directory with --gpt2 DIR\n$")
gradformer_cli_test("tokenize --checkpoint of a missing file names it, status 1" "-DARGS=tokenize|--checkpoint|${tok_inputs}/missing.safetensors"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer tokenize: error: [^\n]*missing.safetensors")
gradformer_cli_test("tokenize with a directory for standard input says it cannot read it, status 1" "-DARGS=tokenize|--bytes"
  -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer tokenize: error: standard input: read failed: Is a directory\n$")
find_program(GRADFORMER_SH sh)
if(UNIX AND GRADFORMER_SH)
  gradformer_cli_test("tokenize with standard input closed says it cannot read it, status 1"
    -DPROGRAM=${GRADFORMER_SH} "-DARGS=-c|exec \"$0\" \"$@\" <&-|$<TARGET_FILE:gradformer>|tokenize|--bytes"
    -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=." "-DSTDERR=^gradformer tokenize: error: standard input: read failed: [^\n]+\n$")
endif()

# --- a checkpoint of a model that is not of words: source the bytes, target the tokenizer learned on
# "aaab aaab" (written by write_tokenizer_checkpoint.cpp). Each side's ids as above.
add_executable(write_tokenizer_checkpoint cli/write_tokenizer_checkpoint.cpp)
target_link_libraries(write_tokenizer_checkpoint PRIVATE gradformer_train gradformer_warnings)
set(bpe_model ${GRADFORMER_TOK_DIR}/bpe-model.safetensors)
add_test(NAME "gradformer program: tokenize: write a checkpoint with a bytes source and a learned target"
         COMMAND write_tokenizer_checkpoint ${bpe_model} ${aaab}.json)
set_tests_properties("gradformer program: tokenize: write a checkpoint with a bytes source and a learned target"
                     PROPERTIES FIXTURES_REQUIRED gradformer_tok_aaab FIXTURES_SETUP gradformer_tok_bpe_model)
gradformer_cli_test("tokenize --checkpoint: the target side is the learned tokenizer"
  "-DARGS=tokenize|--checkpoint|${bpe_model}" -DSTDIN=${aaab}.txt "-DSTDOUT=^262 36 262\n$" REQUIRES gradformer_tok_bpe_model)
gradformer_cli_test("tokenize --checkpoint --side source: the bytes"
  "-DARGS=tokenize|--checkpoint|${bpe_model}|--side|source" -DSTDIN=${aaab}.txt
  "-DSTDOUT=^101 101 101 102 36 101 101 101 102\n$" REQUIRES gradformer_tok_bpe_model)
gradformer_cli_test("tokenize --checkpoint --pieces of the learned target side" "-DARGS=tokenize|--checkpoint|${bpe_model}|--pieces"
  -DSTDIN=${aaab}.txt "-DSTDOUT=^aaab Ġ aaab\n$" REQUIRES gradformer_tok_bpe_model)
gradformer_round_trip("checkpoint, source side, newlines tabs and runs of spaces" "--checkpoint|${bpe_model}|--side|source"
  "-DTEXT=${spaced_text}")
set_tests_properties("gradformer program: tokenize round trip: checkpoint, source side, newlines tabs and runs of spaces"
                     PROPERTIES FIXTURES_REQUIRED gradformer_tok_bpe_model)
gradformer_round_trip("checkpoint, target side, newlines tabs and runs of spaces" "--checkpoint|${bpe_model}"
  "-DTEXT=${spaced_text}")
set_tests_properties("gradformer program: tokenize round trip: checkpoint, target side, newlines tabs and runs of spaces"
                     PROPERTIES FIXTURES_REQUIRED gradformer_tok_bpe_model)
foreach(flag --tokenizer --checkpoint)
  gradformer_cli_test("tokenize ${flag} of a directory names it, status 1" "-DARGS=tokenize|${flag}|${CMAKE_CURRENT_SOURCE_DIR}/cli"
    -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli.cmake -DEXIT=1 ${one_error_line}
    "-DSTDERR=^gradformer tokenize: error: [^ ]*tests/transformer/cli: a directory, but ${flag} takes a file\n$")
endforeach()

# --- a Hugging Face tokenizer.json (hub_tokenizer/, Llama 3's pipeline, written by hand), told from
# gradformer's own file by its content. "hi the1234<|eot_id|>": the added token first, then Llama 3's
# pre-tokens "hi", " the", "123", "4": "h i" makes hi (9); "Ġ t", "Ġt h", "Ġth e" make Ġthe (11);
# "1 2", "12 3" make 123 (13); 4 is 8; <|eot_id|> is 15.
set(hub_dir ${CMAKE_CURRENT_SOURCE_DIR}/cli/hub_tokenizer)
gradformer_cli_test("tokenize with a tokenizer.json: Llama 3's pre-tokens and its added token"
  "-DARGS=tokenize|--tokenizer|${hub_dir}/tokenizer.json" -DSTDIN=${hub_dir}/input.txt "-DSTDOUT=^9 11 13 8 15\n$"
  "-DSTDERR_ABSENT=.")
gradformer_cli_test("tokenize --pieces with a tokenizer.json shows the file's tokens"
  "-DARGS=tokenize|--tokenizer|${hub_dir}/tokenizer.json|--pieces" -DSTDIN=${hub_dir}/input.txt
  "-DSTDOUT=^hi Ġthe 123 4 <\\|eot_id\\|>\n$")
gradformer_cli_test("tokenize --decode with a tokenizer.json gives the text back"
  "-DARGS=tokenize|--tokenizer|${hub_dir}/tokenizer.json|--decode" -DWRITE=${CMAKE_CURRENT_BINARY_DIR}/cli-hub-tokenizer/ids.txt
  "-DWRITE_TEXT=9 11 13 8 15|" -DSTDIN=${CMAKE_CURRENT_BINARY_DIR}/cli-hub-tokenizer/ids.txt "-DSTDOUT=^hi the1234<\\|eot_id\\|>$")
