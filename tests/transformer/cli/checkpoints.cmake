# Checkpoints a hostile tester crafted, and average and import's refusals, as a user meets them.
# The crafted files are the checkpoint fuzz harness's regression inputs (tests/fuzz/corpus/checkpoint):
# small files whose metadata asks for a model far larger than their tensors. Each used to be built
# (3.1 GB and 8 s for translate, 6.2 GB with config.dtype float64, 1 to 1.6 GB for generate and
# classify) before the tensors were found not to fit; now the reader compares every tensor with
# what the configuration implies first, and the refusal is one line naming the tensor, its shape
# by the configuration and its shape in the file.
set(crafted ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/checkpoint)
set(GRADFORMER_CLI_CKPT ${CMAKE_CURRENT_BINARY_DIR}/cli-run-checkpoints)

gradformer_cli_test("translate refuses a checkpoint claiming d_model 8192 over width-2 tensors, naming the tensor, status 1"
  "-DARGS=translate|--checkpoint|${crafted}/d_model-8192-builds-3GB.safetensors" -DSTDIN=${crafted}/post_f32.safetensors
  -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer translate: error: [^\n]*d_model-8192-builds-3GB.safetensors: the tensors do not fit the stored configuration: mismatched: src_embed.weight is \\[5, 8192\\] float32 by the configuration, \\[5, 2\\] float32 in the file. mismatched: tgt_embed.weight is \\[5, 8192\\] float32 by the configuration, \\[5, 2\\] float32 in the file. ")
gradformer_cli_test("translate refuses d_model 8192 and config.dtype float64 over float32 tensors, naming both dtypes, status 1"
  "-DARGS=translate|--checkpoint|${crafted}/d_model-8192-float64-builds-6GB.safetensors" -DSTDIN=${crafted}/post_f32.safetensors
  -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer translate: error: [^\n]*: the tensors do not fit the stored configuration: mismatched: src_embed.weight is \\[5, 8192\\] float64 by the configuration, \\[5, 2\\] float32 in the file. ")
gradformer_cli_test("generate refuses a decoder-only checkpoint claiming d_model 8192, status 1"
  "-DARGS=generate|--checkpoint|${crafted}/decoder-only-d_model-8192-builds-1GB.safetensors|--prompt|a" -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer generate: error: [^\n]*: the tensors do not fit the stored configuration: mismatched: embed.weight is \\[5, 8192\\] float32 by the configuration, \\[5, 2\\] float32 in the file. ")
gradformer_cli_test("classify refuses an encoder-only checkpoint claiming d_model 8192, status 1"
  "-DARGS=classify|--checkpoint|${crafted}/encoder-only-d_model-8192-builds-1.6GB.safetensors" -DSTDIN=${crafted}/post_f32.safetensors
  -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer classify: error: [^\n]*: the tensors do not fit the stored configuration: mismatched: tok_embed.weight is \\[6, 8192\\] float32 by the configuration, \\[6, 2\\] float32 in the file. ")
# The valid seeds they were made from load, each with its own command.
gradformer_cli_test("generate takes the decoder-only seed the crafted checkpoint was made from"
  "-DARGS=generate|--checkpoint|${crafted}/decoder_only_learned.safetensors|--prompt|a|--max-tokens|2" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^a[^
]*
$")
gradformer_cli_test("classify takes the encoder-only seed the crafted checkpoint was made from"
  "-DARGS=classify|--checkpoint|${crafted}/encoder_only_classifier.safetensors" -DWRITE=${GRADFORMER_CLI_CKPT}-sentences.txt
  "-DWRITE_TEXT=a|a a|" -DSTDIN=${GRADFORMER_CLI_CKPT}-sentences.txt "-DSTDERR_ABSENT=." "-DSTDOUT=^(no|yes)
(no|yes)
$")

# average reads its inputs as the loaders do: what translate refuses, average refuses, and writes nothing.
gradformer_cli_test("average refuses a checkpoint translate refuses, writing nothing, status 1"
  "-DARGS=average|${crafted}/d_model-8192-builds-3GB.safetensors|${crafted}/d_model-8192-builds-3GB.safetensors|--out|${GRADFORMER_CLI_CKPT}/average.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_CLI_CKPT}/average.safetensors"
  "-DSTDERR=^gradformer average: error: average: [^\n]*d_model-8192-builds-3GB.safetensors: the tensors do not fit the stored configuration: mismatched: src_embed.weight is \\[5, 8192\\] float32 by the configuration, \\[5, 2\\] float32 in the file. ")
# The average has no optimizer or training state: written over one of its inputs, it would leave a
# run that cannot be resumed. ./model-step-3.safetensors and model-step-3.safetensors are one file.
gradformer_cli_test("average --out one of its inputs is status 2 naming the file"
  "-DARGS=average|model-step-2.safetensors|model-step-3.safetensors|--out|./model-step-3.safetensors|--force"
  -DWORKDIR=${GRADFORMER_KEPT_DIR} -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer average: --out ./model-step-3.safetensors is model-step-3.safetensors, one of the checkpoints to average: the average \\(no optimizer or training state\\) would replace it. write it elsewhere\n$"
  REQUIRES gradformer_cli_kept)
gradformer_cli_test("average --run --out into the run's own kept checkpoint is status 2"
  "-DARGS=average|--run|${GRADFORMER_KEPT_DIR}|--out|${GRADFORMER_KEPT_DIR}/../cli-run-kept/model-step-2.safetensors|--force"
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer average: --out [^\n]* is [^\n]*model-step-2.safetensors, one of the checkpoints to average"
  REQUIRES gradformer_cli_kept)

# import: a layer index no model may have (found by the checkpoint fuzz harness under UBSan: one
# more than 2^63 - 1 overflowed), and a small state dict whose names ask for 21 layers of d_model
# 1024, refused before those layers are built.
gradformer_cli_test("import of a tensor with layer index 2^63 - 1 names the tensor, status 1"
  "-DARGS=import|--weights|${crafted}/import-layer-index-2e63-overflows.safetensors|--src-vocab|s|--tgt-vocab|t|--heads|1|--source-eos|yes|--out|${GRADFORMER_CLI_CKPT}/imported.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_CLI_CKPT}/imported.safetensors"
  "-DSTDERR=^gradformer import: error: [^\n]*import-layer-index-2e63-overflows.safetensors: tensor encoder.layers.9223372036854775807.norm1.weight has layer index 9223372036854775807, but a model has at most 1024 layers\n$")
gradformer_cli_test("import of a small state dict naming layer 20 of d_model 1024 lists the missing tensors, status 1"
  "-DARGS=import|--weights|${crafted}/import-layer-20-of-d_model-1024-builds-1GB.safetensors|--src-vocab|${GRADFORMER_CLI_CKPT}-five.vocab|--tgt-vocab|${GRADFORMER_CLI_CKPT}-five.vocab|--heads|1|--source-eos|yes|--out|${GRADFORMER_CLI_CKPT}/imported.safetensors|--force"
  -DWRITE=${GRADFORMER_CLI_CKPT}-five.vocab "-DWRITE_TEXT=<pad>|<s>|</s>|<unk>|a|"
  -DEXIT=1 ${one_error_line} "-DNO_FILES=${GRADFORMER_CLI_CKPT}/imported.safetensors"
  "-DSTDERR=^gradformer import: error: [^\n]*: the tensors are not those of an encoder-decoder with d_model 1024, d_ff 1, 21 layers, post-LN, tied embeddings: missing: encoder.layers.0.self_attn.in_proj_weight \\[3072, 1024\\]. ")
# The wrong architecture is a usage error naming it, with the article English wants.
gradformer_cli_test("generate with an encoder-only checkpoint names its architecture, status 2"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_OWN}/mlm/model.safetensors" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer generate: [^\n]*mlm/model.safetensors is an encoder-only checkpoint. generate needs a decoder-only one"
  REQUIRES gradformer_cli_own_mlm)
