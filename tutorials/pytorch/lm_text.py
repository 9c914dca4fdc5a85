"""gradformer's decoder-only language model of a text file, in PyTorch (chapter 16).

    python3 lm_text.py TEXT --gradformer PROGRAM [--bytes | --tokenizer TOK.json | --checkpoint MODEL]
                      [--steps 200] [--context 128] [--batch-size 64] [--d-model 128] [--layers 4] ...

The same model as `gradformer train --arch decoder-only --text TEXT` (transformer/model/decoder_only.h),
from PyTorch's own layers, trained on the same tokens in the same way, so that the two can be set
side by side: same data, same steps, same sizes; only the random numbers differ.

- The model: ids -> embedding * sqrt(d_model) + positions (sinusoidal, or learned N(0, 0.02)) ->
  dropout -> N nn.TransformerEncoderLayer under a causal mask (pre-LN by default, then a final
  LayerNorm) -> logits through the embedding matrix (tied, no bias) or a separate matrix. gradformer's
  initialisation: every matrix Xavier-uniform, attention biases 0. The flags' defaults are
  gradformer's defaults for decoder-only text (transformer/train/options.cpp). It prints the number
  of parameters, which must be what `gradformer params` / the training run print for the same sizes
  (--expect-params N checks it and exits 1 if not).
- The tokens: gradformer tokenizes (`PROGRAM tokenize --bytes`, `--tokenizer TOK.json` a file
  learn-bpe wrote, or `--checkpoint MODEL` the tokenizer a gradformer run learned and saved), so both
  read the same ids. As gradformer does, the text's bytes are split before tokenizing: the last
  --held-out fraction of the bytes (default 0.1, gradformer's: keep the two equal) is the validation
  tail, moved forward to a character's first byte, and each part is tokenized on its own.
- Training: each step batch-size random blocks of context + 1 consecutive training tokens (inputs
  block[:-1], targets block[1:]); mean cross-entropy over the batch's tokens (--label-smoothing);
  the global gradient norm clipped to --clip; Adam(0.9, 0.98, 1e-9) at
  lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (the paper's schedule, nn/schedule.h).
- Validation: the held-out tokens cut into consecutive blocks of context + 1 tokens overlapping by
  one (every token but the first predicted once), without dropout. Prints the loss (nats per
  token), the perplexity e^loss and the bits per byte: total nats / (ln 2 * the bytes the predicted
  tokens stand for), which does not depend on the tokenizer. Then tokens/s of training, the wall
  seconds, and a greedy continuation of --prompt (--sample tokens, decoded by gradformer).

Needs only PyTorch (and the gradformer program). Threads: --threads (default 2), and OMP_WAIT_POLICY
PASSIVE unless set. The first line names the BLAS library PyTorch loaded: a distribution's PyTorch may
use netlib's reference BLAS, several times slower than OpenBLAS (libopenblas0-pthread replaces it),
which reads its own environment variables (OPENBLAS_*): this script leaves them as they are.
"""
import argparse
import math
import os
import subprocess
import sys
import time

# OpenMP threads that wait for work by spinning (GNU OpenMP's default) make two threads many times
# slower than one when other programs share the cores; waiting passively costs little. Read when
# torch loads OpenMP, so set here, unless the caller chose.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from torch import nn  # noqa: E402


# ---- tokens, through gradformer ------------------------------------------------------------------


def tokenizer_flags(args):
    if args.tokenizer:
        return ["--tokenizer", args.tokenizer]
    if args.checkpoint:
        return ["--checkpoint", args.checkpoint]
    return ["--bytes"]


def run_gradformer(args, extra, data):
    """PROGRAM tokenize FLAGS EXTRA < data -> stdout bytes; exits with gradformer's message on failure."""
    command = [args.gradformer, "tokenize"] + tokenizer_flags(args) + extra
    done = subprocess.run(command, input=data, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"lm_text.py: {' '.join(command)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def encode(args, data):
    return [int(word) for word in run_gradformer(args, [], data).split()]


def decode(args, ids):
    return run_gradformer(args, ["--decode"], " ".join(map(str, ids)).encode())


def held_out_start(data, fraction):
    """As gradformer's held_out_start: the last fraction of the bytes (rounded down) is held out, the
    cut moved forward past UTF-8 continuation bytes (10xxxxxx) so that no character is cut in two."""
    millionths = round(fraction * 1_000_000)  # 0.1 -> n // 10 exactly, as gradformer's n / 10
    cut = len(data) - len(data) * millionths // 1_000_000
    while cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut += 1
    return cut


def vocabulary_size(args):
    """The tokenizer's ids: the 4 specials and the 256 bytes for --bytes; else the largest id that
    decodes (gradformer refuses an id beyond the vocabulary), found by bisection."""
    if not args.tokenizer and not args.checkpoint:
        return 4 + 256
    command = [args.gradformer, "tokenize"] + tokenizer_flags(args) + ["--decode"]
    ok = lambda i: subprocess.run(command, input=str(i).encode(), capture_output=True).returncode == 0
    low, high = 0, 1
    while ok(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if ok(middle) else (low, middle)
    return high


def blas_library():
    """The BLAS library PyTorch's matrix products use (netlib's reference BLAS is tens of times slower
    than OpenBLAS): the file this process loaded, from /proc/self/maps on Linux, else PyTorch's
    build setting BLAS_INFO."""
    torch.ones(2, 2) @ torch.ones(2, 2)
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "blas" in line.split()[-1].lower()})
    except OSError:
        paths = []
    if paths:
        return os.path.realpath(next((p for p in paths if "libblas" in p), paths[0]))
    info = [part for part in torch.__config__.show().split(", ") if "BLAS_INFO=" in part]
    return info[0].split("=")[-1] if info else "unknown"


def one_line(text):
    """The text on one line, as gradformer shows a sample: a line end as ⏎, a tab as \\t."""
    return text.decode("utf-8", errors="backslashreplace").replace("\n", "⏎").replace("\t", "\\t")


# ---- the model -----------------------------------------------------------------------------------


def sinusoidal(max_len, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d))   [max_len, d]"""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    rate = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(position * rate), torch.cos(position * rate)
    return pe.float()


class DecoderOnly(nn.Module):
    """gradformer's DecoderOnly (transformer/model/decoder_only.h) from PyTorch's layers."""

    def __init__(self, vocab, a):
        super().__init__()
        d, self.d = a.d_model, a.d_model
        self.embed = nn.Embedding(vocab, d)
        if a.positions == "learned":
            self.positions = nn.Parameter(torch.zeros(a.max_len, d))
        else:
            self.register_buffer("positions", sinusoidal(a.max_len, d))
        self.dropout = nn.Dropout(a.dropout)
        layer = nn.TransformerEncoderLayer(d, a.heads, a.d_ff, a.dropout, activation=a.activation, batch_first=True,
                                           norm_first=a.norm == "pre")
        # Pre-LN ends the stack with a LayerNorm (GPT-2's ln_f); post-LN (the paper's) has none.
        self.decoder = nn.TransformerEncoder(layer, a.layers, norm=nn.LayerNorm(d) if a.norm == "pre" else None,
                                             enable_nested_tensor=False)
        self.generator = nn.Linear(d, vocab, bias=False)
        if a.tie == "yes":
            self.generator.weight = self.embed.weight  # P(u) = softmax(h_n W_e^T)
        self.reset_parameters(a.positions == "learned")

    def reset_parameters(self, learned):
        """gradformer's: matrices Xavier-uniform, attention biases 0, feed-forward biases PyTorch's
        Linear default (as built), LayerNorms 1 and 0 (as built), learned positions N(0, 0.02)."""
        for name, p in self.named_parameters():
            if p.dim() >= 2 and name != "positions":
                nn.init.xavier_uniform_(p)
        for layer in self.decoder.layers:
            nn.init.zeros_(layer.self_attn.in_proj_bias)
            nn.init.zeros_(layer.self_attn.out_proj.bias)
        if learned:
            nn.init.normal_(self.positions, 0.0, 0.02)

    def forward(self, ids):
        """ids [B, T] -> logits [B, T, V]: position t's scores for token t + 1"""
        T = ids.size(1)
        h = self.dropout(self.embed(ids) * math.sqrt(self.d) + self.positions[:T])  # [B, T, d]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # position t sees 0..t
        return self.generator(self.decoder(h, mask=causal))


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())  # a tied matrix once


# ---- training and validation ---------------------------------------------------------------------


def noam(step, a):
    """lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), steps counted from 1"""
    return a.lr * a.d_model ** -0.5 * min(step ** -0.5, step * a.warmup ** -1.5)


def random_blocks(tokens, a, generator):
    """batch-size blocks of context + 1 tokens at random starts -> inputs, targets [B, context]"""
    starts = torch.randint(0, len(tokens) - a.context, (a.batch_size,), generator=generator)
    blocks = torch.stack([tokens[s:s + a.context + 1] for s in starts.tolist()])
    return blocks[:, :-1], blocks[:, 1:]


@torch.no_grad()
def validation_nats(model, tokens, context, blocks_per_batch=16):
    """Sum of -ln P(token) over every held-out token but the first: consecutive blocks of context + 1
    tokens overlapping by one; the last block may be shorter (evaluated on its own)."""
    model.eval()
    starts = list(range(0, len(tokens) - 1, context))
    full = [s for s in starts if s + context + 1 <= len(tokens)]
    total = 0.0
    for i in range(0, len(full), blocks_per_batch):
        blocks = torch.stack([tokens[s:s + context + 1] for s in full[i:i + blocks_per_batch]])
        logits = model(blocks[:, :-1])
        total += nn.functional.cross_entropy(logits.flatten(0, 1), blocks[:, 1:].flatten(), reduction="sum").item()
    if len(full) < len(starts):
        block = tokens[starts[-1]:].unsqueeze(0)
        total += nn.functional.cross_entropy(model(block[:, :-1])[0], block[0, 1:], reduction="sum").item()
    model.train()
    return total


@torch.no_grad()
def greedy(model, prompt, count, context):
    model.eval()
    ids = list(prompt)
    for _ in range(count):
        window = torch.tensor([ids[-context:]])
        ids.append(int(model(window)[0, -1].argmax()))
    return ids[len(prompt):]


# ---- the command line ----------------------------------------------------------------------------


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("text", help="the text file (any bytes with --bytes; UTF-8 for a byte-pair tokenizer)")
    p.add_argument("--gradformer", required=True, help="the gradformer program: it tokenizes and decodes")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bytes", action="store_true", help="every byte one token (the default)")
    source.add_argument("--tokenizer", help="a byte-pair tokenizer file `gradformer learn-bpe` wrote")
    source.add_argument("--checkpoint", help="the tokenizer of a gradformer model (what its run learned)")
    p.add_argument("--held-out", type=float, default=0.1, help="the fraction of the bytes held out (gradformer's: 0.1)")
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--d-ff", type=int, default=512)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--max-len", type=int, default=None,
                   help="positions the model has, at least --context (as gradformer: either follows the other "
                        "when only one is given; both 128 when neither is)")
    p.add_argument("--norm", choices=["pre", "post"], default="pre")
    p.add_argument("--tie", choices=["yes", "no"], default="yes", help="output matrix = the embedding")
    p.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    p.add_argument("--positions", choices=["sinusoidal", "learned"], default="sinusoidal")
    p.add_argument("--context", type=int, default=None, help="tokens per block (default: --max-len)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.5, help="the factor in front of the Noam schedule")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--clip", type=float, default=1.0, help="global gradient-norm clip (0: none)")
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--prompt", default="The ", help="the sample's beginning")
    p.add_argument("--sample", type=int, default=100, help="tokens to generate greedily (0: none)")
    p.add_argument("--expect-params", type=int, help="exit 1 unless the model has exactly this many parameters")
    p.add_argument("--count-only", action="store_true", help="print the model and its parameters, train nothing")
    a = p.parse_args()
    a.max_len = a.max_len or a.context or 128
    a.context = a.context or a.max_len
    if not 0 < a.held_out < 1:
        p.error(f"--held-out must be between 0 and 1, got {a.held_out}")
    if not 1 <= a.context <= a.max_len:
        p.error(f"--context must be from 1 to --max-len {a.max_len}, got {a.context}")
    if a.d_model % a.heads or a.d_model % 2:
        p.error(f"--d-model must be even and divisible by --heads, got {a.d_model} and {a.heads}")
    for name in ("steps", "batch_size", "warmup", "threads", "layers", "d_ff", "log_every"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(a, name)}")
    return a


def main():
    a = arguments()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    with open(a.text, "rb") as f:
        data = f.read()
    cut = held_out_start(data, a.held_out)
    train, valid = torch.tensor(encode(a, data[:cut])), torch.tensor(encode(a, data[cut:]))
    if len(train) < a.context + 1 or len(valid) < 2:
        sys.exit(f"lm_text.py: {a.text} is too short: {len(train)} training tokens and {len(valid)} held out, "
                 f"context {a.context}")
    # The bytes the predicted validation tokens (all but the first) stand for: bits per byte's denominator.
    valid_bytes = len(decode(a, valid.tolist())) - len(decode(a, valid[:1].tolist()))
    vocab = vocabulary_size(a)
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads (OMP_WAIT_POLICY {os.environ['OMP_WAIT_POLICY']}), BLAS {blas_library()}")
    print(f"{a.text}, {len(data)} bytes, "
          f"{len(train)} training tokens, {len(valid)} held out ({valid_bytes} bytes predicted), vocabulary {vocab}")

    model = DecoderOnly(vocab, a)
    count = parameter_count(model)
    print(f"decoder-only: d_model {a.d_model}, d_ff {a.d_ff}, heads {a.heads}, layers {a.layers}, "
          f"context {a.context}, {count} parameters")
    if a.expect_params is not None and count != a.expect_params:
        print(f"parameters: {count}, but --expect-params says {a.expect_params}")
        return 1
    if a.count_only:
        return 0

    adam = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    generator = torch.Generator().manual_seed(a.seed)
    model.train()
    start = time.perf_counter()
    for step in range(1, a.steps + 1):
        inputs, targets = random_blocks(train, a, generator)
        loss = nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten(),
                                           label_smoothing=a.label_smoothing)
        adam.zero_grad()
        loss.backward()
        if a.clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        for group in adam.param_groups:
            group["lr"] = noam(step, a)
        adam.step()
        if step % a.log_every == 0 or step == a.steps:
            print(f"step {step}/{a.steps}: loss {loss.item():.3f}, {time.perf_counter() - start:.1f} s", flush=True)
    seconds = time.perf_counter() - start
    nats = validation_nats(model, valid, a.context)
    loss = nats / (len(valid) - 1)
    print(f"validation: loss {loss:.4f}, perplexity {math.exp(loss):.2f}, "
          f"bits per byte {nats / (math.log(2) * valid_bytes):.4f}")
    print(f"training: {a.steps} steps in {seconds:.1f} s, {a.steps * a.batch_size * a.context / seconds:.0f} tokens/s")
    if a.sample > 0:
        prompt = encode(a, a.prompt.encode())
        print("sample:", one_line(a.prompt.encode() + decode(a, greedy(model, prompt, a.sample, a.context))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
