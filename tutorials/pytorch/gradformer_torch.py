"""A gradformer checkpoint in PyTorch and back (chapter 14).

    python3 gradformer_torch.py CHECKPOINT PAIRS.tsv OUT_DIR [--gradformer PROGRAM]

Loads the encoder-decoder of CHECKPOINT into PyTorch's own layers (nn.TransformerEncoderLayer,
nn.TransformerDecoderLayer), scores each source<TAB>target pair of PAIRS.tsv (teacher-forced
log P(target | source), as `gradformer score` does) and translates the first source greedily. Then it
saves the PyTorch model's state dict to OUT_DIR/state_dict.safetensors (tensors only, as any PyTorch
user would have it) with the two vocabularies as OUT_DIR/src.vocab and OUT_DIR/tgt.vocab.

With --gradformer (the path of the gradformer program) it also checks both directions: PyTorch's
scores against `gradformer score` on the checkpoint (they agree to float32 rounding), then
`gradformer import` of the saved state dict, whose `gradformer score` must print exactly what the
original checkpoint's did. Exits 1 if a check fails.

Needs only PyTorch: the safetensors format (an 8-byte little-endian header length, a JSON header,
then the raw little-endian data) is read and written by hand below, without the safetensors package.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

import torch
from torch import nn

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "BOOL": torch.bool}


def read_safetensors(path):
    """-> ({name: tensor}, {metadata key: string})"""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=DTYPES[entry["dtype"]])
        tensors[name] = flat.reshape(entry["shape"])
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    """Every tensor as its own copy (a tied matrix under each of its names), in name order."""
    names = {dtype: name for name, dtype in DTYPES.items()}
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the header padded to a multiple of 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


class Gradformer(nn.Module):
    """gradformer's encoder-decoder from PyTorch's layers; its parameter names are the checkpoint's."""

    def __init__(self, c):
        super().__init__()
        d, self.d = c["d_model"], c["d_model"]
        self.src_embed = nn.Embedding(c["src_vocab"], d)
        self.tgt_embed = nn.Embedding(c["tgt_vocab"], d)
        layer = dict(d_model=d, nhead=c["heads"], dim_feedforward=c["d_ff"], dropout=0.0, activation=c["activation"],
                     batch_first=True, norm_first=c["pre_ln"])
        # Post-LN (the paper's) has no final LayerNorm; pre-LN ends each stack with one ("encoder.norm").
        final = (lambda: nn.LayerNorm(d)) if c["pre_ln"] else (lambda: None)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer), c["layers"], norm=final(),
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), c["layers"], norm=final())
        self.generator = nn.Linear(d, c["tgt_vocab"])
        if c["learned_positions"]:
            self.positional_encoding = nn.Embedding(c["max_len"], d)  # stored: positional_encoding.weight
        else:  # the sinusoids of section 3.5, a constant that is not stored
            self.positional_encoding = None
            pos = torch.arange(c["max_len"]).unsqueeze(1)
            freq = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))  # 1 / 10000^(2i/d)
            pe = torch.zeros(c["max_len"], d)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
            self.register_buffer("pe", pe, persistent=False)
        if c["tied"]:  # one matrix for both embeddings and the output projection
            self.tgt_embed.weight = self.generator.weight = self.src_embed.weight

    def embed(self, table, ids):  # ids [B, T] -> [B, T, d]: E[id] * sqrt(d) + PE[pos]
        pe = self.positional_encoding.weight if self.positional_encoding is not None else self.pe
        return table(ids) * math.sqrt(self.d) + pe[: ids.size(1)]

    def forward(self, src, tgt_in):  # -> logits [B, T, V_tgt]
        pad = src == 0  # PyTorch's masks are True where attention is NOT allowed (gradformer's: allowed)
        memory = self.encoder(self.embed(self.src_embed, src), src_key_padding_mask=pad)
        t = tgt_in.size(1)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        out = self.decoder(self.embed(self.tgt_embed, tgt_in), memory, tgt_mask=causal, memory_key_padding_mask=pad)
        return self.generator(out)


def load(path):
    """The checkpoint as (model in eval mode, configuration, source vocabulary, target vocabulary)."""
    tensors, meta = read_safetensors(path)
    c = {k: int(meta["config." + k]) for k in ("src_vocab", "tgt_vocab", "d_model", "d_ff", "heads", "layers", "max_len")}
    c["pre_ln"] = meta["config.norm"] == "pre"
    c["tied"] = meta["config.tie_embeddings"] == "true"
    c["activation"] = meta.get("config.activation", "relu")
    c["learned_positions"] = meta.get("config.positions", "sinusoidal") == "learned"
    c["source_eos"] = meta.get("data.source_eos", "true") == "true"  # absent: an older checkpoint, always true
    c["dtype"] = tensors["src_embed.weight"].dtype
    state = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}  # Adam's moments stay behind
    if c["tied"]:  # stored once, as src_embed.weight
        state["tgt_embed.weight"] = state["generator.weight"] = state["src_embed.weight"]
    model = Gradformer(c).to(c["dtype"])
    model.load_state_dict(state)  # strict: every name and shape must match
    vocab = lambda key: meta[key].split("\n")[:-1]  # one token a line, in id order: <pad> <s> </s> <unk> ...
    return model.eval(), c, vocab("vocab.source"), vocab("vocab.target")


def source_ids(words, ids, source_eos):
    # Unknown words are <unk> (3); gradformer trains with </s> (2) after every source sentence.
    return [ids.get(w, 3) for w in words] + ([2] if source_eos else [])


def log_prob(model, src, target):
    """Teacher-forced log P(target + </s> | source): the decoder reads <s> + target."""
    with torch.no_grad():
        logits = model(torch.tensor([src]), torch.tensor([[1] + target]))
        logp = torch.log_softmax(logits.double(), -1)[0]
    return sum(logp[i, token].item() for i, token in enumerate(target + [2]))


def greedy(model, src, steps):
    """Greedy decoding from <s> (1) until </s> (2) or `steps` tokens; the ids after <s>."""
    out = [1]
    with torch.no_grad():
        while len(out) <= steps:
            next_id = model(torch.tensor([src]), torch.tensor([out]))[0, -1].argmax().item()
            if next_id == 2:
                break
            out.append(next_id)
    return out[1:]


def gradformer_score(program, checkpoint, pairs):
    return subprocess.run([program, "score", "--checkpoint", checkpoint, "--data", pairs], check=True,
                          capture_output=True, text=True).stdout


def main():
    args = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    args.add_argument("checkpoint")
    args.add_argument("pairs")
    args.add_argument("out_dir")
    args.add_argument("--gradformer", help="the gradformer program: also check both directions against it")
    a = args.parse_args()

    model, c, src_vocab, tgt_vocab = load(a.checkpoint)
    print(f"PyTorch {torch.__version__}: {a.checkpoint} loaded into nn.TransformerEncoderLayer/DecoderLayer, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    print(f"every source ends in </s>: {'yes' if c['source_eos'] else 'no'} (the checkpoint's data.source_eos)")
    src_ids, tgt_ids = ({w: i for i, w in enumerate(v)} for v in (src_vocab, tgt_vocab))
    with open(a.pairs, encoding="utf-8") as f:
        pairs = [line.rstrip("\r\n").split("\t") for line in f if line.strip()]
    scores = [log_prob(model, source_ids(s.split(), src_ids, c["source_eos"]), [tgt_ids.get(w, 3) for w in t.split()])
              for s, t in pairs]
    # The same pairs fed the other way (the </s> left out, or added): what a reimplementation that
    # gets the convention wrong computes.
    other = [log_prob(model, source_ids(s.split(), src_ids, not c["source_eos"]), [tgt_ids.get(w, 3) for w in t.split()])
             for s, t in pairs]
    first_source = pairs[0][0].split()
    # As gradformer translate: at most twice the source plus 10 tokens, and <s> and <pad> not shown.
    steps = min(c["max_len"] - 1, 2 * len(first_source) + 10)
    translation = " ".join(tgt_vocab[i] for i in greedy(model, source_ids(first_source, src_ids, c["source_eos"]), steps)
                           if i > 1)
    print(f"greedy translation: {' '.join(first_source)} -> {translation}")

    failed = False
    if a.gradformer:
        expected = [float(line.split("\t")[0]) for line in gradformer_score(a.gradformer, a.checkpoint, a.pairs).split("\n") if line]
        print("log P(target | source), PyTorch and gradformer score:")
        for (s, t), mine, theirs in zip(pairs, scores, expected):
            print(f"  {mine:11.6f} {theirs:11.6f}   {s} -> {t}")
        worst = max(abs(m - e) / max(abs(e), 1e-12) for m, e in zip(scores, expected))
        print(f"largest relative difference: {worst:.1e}")
        failed |= worst > 1e-5
        theirs = subprocess.run([a.gradformer, "translate", "--checkpoint", a.checkpoint], input=pairs[0][0] + "\n",
                                check=True, capture_output=True, text=True).stdout.strip()
        print(f"gradformer translate: {'the same' if theirs == translation else 'OTHER: ' + theirs}")
        failed |= theirs != translation
    else:
        for (s, t), mine in zip(pairs, scores):
            print(f"  {mine:11.6f}   {s} -> {t}")
    print(f"{'without' if c['source_eos'] else 'with'} the source's </s>: {', '.join(f'{x:.6f}' for x in other)}, "
          f"largest relative difference {max(abs(x - y) / abs(y) for x, y in zip(other, scores)):.1e}")

    os.makedirs(a.out_dir, exist_ok=True)
    weights = os.path.join(a.out_dir, "state_dict.safetensors")
    state = model.state_dict()  # a tied matrix under all three of its names
    write_safetensors(weights, state, {"format": "pt"})
    for name, vocab in (("src.vocab", src_vocab), ("tgt.vocab", tgt_vocab)):
        with open(os.path.join(a.out_dir, name), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in vocab))
    print(f"saved {weights}: the state dict, {len(state)} tensors, no gradformer metadata; and src.vocab, tgt.vocab")

    if a.gradformer:
        imported = os.path.join(a.out_dir, "imported.safetensors")
        subprocess.run([a.gradformer, "import", "--weights", weights, "--src-vocab", os.path.join(a.out_dir, "src.vocab"),
                        "--tgt-vocab", os.path.join(a.out_dir, "tgt.vocab"), "--heads", str(c["heads"]),
                        "--max-len", str(c["max_len"]), "--activation", c["activation"],
                        "--source-eos", "yes" if c["source_eos"] else "no", "--out", imported, "--force"],
                       check=True, capture_output=True)
        same = gradformer_score(a.gradformer, imported, a.pairs) == gradformer_score(a.gradformer, a.checkpoint, a.pairs)
        print(f"gradformer import of the state dict: gradformer score prints "
              f"{'the same' if same else 'OTHER'} {len(pairs)} lines as with the original checkpoint")
        failed |= not same
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
