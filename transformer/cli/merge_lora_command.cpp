// gradformer merge-lora: a checkpoint fine-tuned with LoRA adapters (train --task sft --lora-rank R)
// written with each adapter folded into its weight (transformer/store/merge_lora.h).
#include <iostream>

#include "tensor/support/files.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/store/merge_lora.h"

namespace gradformer {

int merge_lora_command(int argc, char** argv) {
  Flags f("merge-lora",
          "Fold a checkpoint's LoRA adapters (train --task sft --lora-rank R) into the weights they sit beside,\n"
          "W + (alpha / rank) B A, and write the model without them: as fast as before fine-tuning, and the\n"
          "same answers (up to float32 rounding). generate, chat and score read either file; the merged one\n"
          "keeps the configuration, the tokenizer and the chat template, but no optimizer or training state,\n"
          "so it cannot be resumed.");
  f.add("--checkpoint", "", "the checkpoint with adapters (required)");
  f.add("--out", "", "where to write the merged checkpoint (required)");
  f.add_switch("--force", "replace --out if it exists");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint"), f.require("--out");
  if (same_file(f.text("--checkpoint"), f.text("--out")))
    throw UsageError(message("merge-lora: --out ", f.text("--out"), " is the checkpoint to merge, ",
                             f.text("--checkpoint"), ": write the merged model elsewhere"));
  check_output_flag("merge-lora", "--out", f.text("--out"), f.on("--force"));
  merge_lora_checkpoint(f.text("--checkpoint"), f.text("--out"));
  std::cout << "merged the LoRA adapters of " << f.text("--checkpoint") << " into " << f.text("--out") << "\n";
  return 0;
}

}  // namespace gradformer
