"""GPT-2 small's training step in PyTorch: the peer of BM_Gpt2SmallStep (bench_training_step) and
gpt2_step_memory (bench/gpt2_step.h describes the step), for comparing time and memory side by side.

The same model written plainly: token and learned position embeddings (n_ctx 1024), 12 pre-LN blocks
(LayerNorm eps 1e-5; attention as one [d, 3d] projection, matmul, causal mask, softmax, dropout on
the weights, matmul, output projection; feed-forward Linear, GELU's tanh form, dropout, Linear;
dropout 0.1 after each sublayer and on the embeddings, as gradformer's encoder layer has them), a
final LayerNorm, the output tied to the embedding with no bias. Its parameter count is checked
against `gradformer params --preset gpt2-small`'s: 124,439,808. A step: zero_grad (set to none, as
gradformer's), mean cross-entropy over 4 x 256 random targets, backward, Adam (no weight decay,
betas 0.9 and 0.999). Prints the resident memory (RSS) before the model and after each stage, the
peak (getrusage's ru_maxrss), the bytes malloc holds (mallinfo2, glibc), and the median time of the steps after the first.

Needs PyTorch (Debian's: apt-get install -y python3-torch libopenblas0-pthread, run with
/usr/bin/python3). PyTorch on Debian calls OpenBLAS for its matrix products: set OPENBLAS_CORETYPE
to the widest kernel your CPU runs (SkylakeX on AVX-512), or it may run a narrower one. THREADS sets
torch.set_num_threads (default 2); with THREADS=1 OpenBLAS still uses its own threads unless
OPENBLAS_NUM_THREADS says otherwise.

Usage: OPENBLAS_CORETYPE=SkylakeX THREADS=2 /usr/bin/python3 bench/torch_gpt2_step.py [steps=10] [--held]
  --held: also list what autograd saved for backward in the last step (storages, by shape).
  --profile: run one more step under torch.profiler and print its table of ops by their own time.
"""
import ctypes
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

V, N_CTX, D, LAYERS, HEADS, D_FF, DROPOUT = 50257, 1024, 768, 12, 12, 3072, 0.1
BATCH, CONTEXT = 4, 256
GRADFORMER_PARAMETERS = 124_439_808  # gradformer params --preset gpt2-small


def rss_now_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2: ten size_t fields
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def malloc_in_use_mib():
    """The bytes malloc has handed out and not been given back (heap and mmap'ed blocks); -1 without glibc 2.33+."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return -1
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20


def report(stage):
    print(f"{stage:34s} rss {rss_now_mib():8.1f} MiB  peak {rss_peak_mib():8.1f} MiB  "
          f"malloc in use {malloc_in_use_mib():8.1f} MiB", flush=True)


class Block(nn.Module):
    """x + Sublayer(LayerNorm(x)) twice: causal self-attention, then the feed-forward network."""

    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D, eps=1e-5), nn.LayerNorm(D, eps=1e-5)
        self.in_proj = nn.Linear(D, 3 * D)  # W^Q, W^K, W^V in one product
        self.out_proj = nn.Linear(D, D)
        self.linear1, self.linear2 = nn.Linear(D, D_FF), nn.Linear(D_FF, D)
        self.attn_drop, self.drop1, self.drop, self.drop2 = (nn.Dropout(DROPOUT) for _ in range(4))

    def attention(self, x, mask):  # x [B, T, d], mask [T, T] bool (True: may attend)
        B, T, _ = x.shape
        q, k, v = self.in_proj(x).split(D, dim=2)
        q, k, v = (t.view(B, T, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))  # [B, H, T, d_k]
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // HEADS)  # [B, H, T, T]
        weights = self.attn_drop(scores.masked_fill(~mask, float("-inf")).softmax(-1))
        heads = (weights @ v).transpose(1, 2).reshape(B, T, D)  # Concat(head_1, ..., head_h)
        return self.out_proj(heads)

    def forward(self, x, mask):
        h = x + self.drop1(self.attention(self.norm1(x), mask))
        ffn = self.linear2(self.drop(F.gelu(self.linear1(self.norm2(h)), approximate="tanh")))
        return h + self.drop2(ffn)


class Gpt2Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.positions = nn.Embedding(N_CTX, D)
        self.drop = nn.Dropout(DROPOUT)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D, eps=1e-5)
        # gradformer's initialisation (DecoderOnly::reset_parameters): matrices Xavier-uniform,
        # positions N(0, 0.02), attention biases 0; feed-forward biases and LayerNorms PyTorch's own.
        for name, p in self.named_parameters():
            if p.dim() >= 2 and name != "positions.weight":
                nn.init.xavier_uniform_(p)
        nn.init.normal_(self.positions.weight, 0.0, 0.02)
        for block in self.blocks:
            nn.init.zeros_(block.in_proj.bias)
            nn.init.zeros_(block.out_proj.bias)

    def forward(self, ids):  # ids [B, T] -> logits [B, T, V]
        T = ids.size(1)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        x = self.drop(self.embed(ids) + self.positions.weight[:T])
        for block in self.blocks:
            x = block(x, mask)
        return self.norm(x) @ self.embed.weight.t()  # tied output projection, no bias


class SavedForBackward:
    """Counts the tensors autograd saves for backward (saved_tensors_hooks), each storage once,
    parameters left out, by dtype and shape: gpt2_step_memory --held's list for PyTorch."""

    def __init__(self, model):
        self.seen = {p.storage().data_ptr() for p in model.parameters()}
        self.by_shape = {}

    def pack(self, t):
        key = t.storage().data_ptr()
        if key not in self.seen:
            self.seen.add(key)
            count, nbytes = self.by_shape.get((str(t.dtype), tuple(t.shape)), (0, 0))
            self.by_shape[(str(t.dtype), tuple(t.shape))] = (count + 1, nbytes + t.storage().nbytes())
        return t

    def report(self):
        for (dtype, shape), (count, nbytes) in sorted(self.by_shape.items()):
            print(f"  saved for backward, {dtype:14s} {str(list(shape)):24s} {count:5d} tensors {nbytes / 2**20:8.1f} MiB")
        total = sum(nbytes for _, nbytes in self.by_shape.values())
        print(f"  saved for backward in all {total / 2**20:8.1f} MiB")


def train_step(model, adam, inputs, targets, report_stage, saved=None):
    """One step; its logits and graph are gone when it returns (as in gradformer's loop), not kept
    until the next step's forward pass replaces them."""
    adam.zero_grad(set_to_none=True)
    if saved is None:
        loss = F.cross_entropy(model(inputs).reshape(-1, V), targets.reshape(-1))
    else:
        with torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t):
            loss = F.cross_entropy(model(inputs).reshape(-1, V), targets.reshape(-1))
    report_stage("last step: after forward")
    if saved is not None:
        saved.report()
    loss.backward()
    report_stage("last step: after backward")
    adam.step()
    return loss.item()


def main():
    held, profile = "--held" in sys.argv[1:], "--profile" in sys.argv[1:]
    arguments = [a for a in sys.argv[1:] if a not in ("--held", "--profile")]
    steps = int(arguments[0]) if arguments else 10
    assert steps >= 2, f"steps must be at least 2, got {steps}"
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    torch.manual_seed(1)
    print(f"PyTorch {torch.__version__} GPT-2 small, batch {BATCH} x context {CONTEXT}, {steps} steps, "
          f"{torch.get_num_threads()} threads, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '')}")
    report("before the model")
    baseline = rss_now_mib()
    model = Gpt2Small()
    model.train()
    parameters = sum(p.numel() for p in model.parameters())
    print(f"parameters: {parameters}")
    assert parameters == GRADFORMER_PARAMETERS, f"{parameters} parameters, gradformer's model has {GRADFORMER_PARAMETERS}"
    report("model built")
    adam = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)
    report("Adam built")
    tokens = torch.randint(1, V, (BATCH, CONTEXT + 1))  # id 0 left out, as gradformer's <pad>
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    times = []
    for step in range(1, steps + 1):
        start = time.perf_counter()
        last = step == steps
        value = train_step(model, adam, inputs, targets, report if last else lambda stage: None,
                           SavedForBackward(model) if last and held else None)
        times.append((time.perf_counter() - start) * 1000)
        if step == 1:
            print(f"step 1 loss {value:.4f}")
            report("after step 1")
    report("after the last step")
    timed = sorted(times[1:])
    median = timed[len(timed) // 2]
    print(f"median step (steps 2-{steps}): {median:.1f} ms, {BATCH * CONTEXT / (median / 1000):.0f} tokens/s")
    print(f"peak rss {rss_peak_mib():.1f} MiB, above the baseline {rss_peak_mib() - baseline:.1f} MiB")
    if profile:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            train_step(model, adam, inputs, targets, lambda stage: None)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


if __name__ == "__main__":
    main()
