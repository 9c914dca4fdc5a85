# One training step of the copy task, walked in gdb: the batch, the embeddings, each sub-layer
# (self-attention, feed-forward, the decoder's cross-attention), the loss, each node of the backward
# pass as the engine runs it, and Adam's update, every tensor shown by the pretty-printers.
#
# From the repository's root, with a Debug build of the gradformer program in build-debug (README,
# "Running a chapter, and stepping through it"):
#
#   GRADFORMER_THREADS=1 GRADFORMER_MATMUL=portable gdb -batch -x tutorials/debug/gradformer_gdb.py \
#     -x tutorials/debug/one_step.gdb --args ./build-debug/transformer/gradformer train --task copy \
#     --steps 1 --warmup 1 --batch-size 2 --d-model 16 --d-ff 32 --heads 2 --layers 1 --out runs/one-step --force
#
# The sizes make the shapes easy to read: B = 2 sequences, the copy task's S = 10 source and T = 9
# target positions, d_model 16, a vocabulary of 11, so the logits are [2, 9, 11]. --warmup 1 gives
# the first step the full learning rate (0.5 / sqrt(16) = 0.125), so Adam's update shows in the
# printed digits. Without -batch, gdb stays open when the run has ended.
#
# Every stop is a breakpoint on a function's name (not on a line, which moves as the code changes);
# its `commands` print what the function was given and, through `after-return`, what it gave back,
# then `continue`. Adam's update disables them all: the run then ends as usual (a checkpoint, the
# validation loss, the copy-task evaluation, which call the same functions again).

set width 0
set height 0
set pagination off
set confirm off

python
if "node_field" not in globals():
    raise gdb.GdbError("one_step.gdb: load the pretty-printers first: gdb -x tutorials/debug/gradformer_gdb.py "
                       "-x tutorials/debug/one_step.gdb --args ...")


class _PrintAs(gdb.Command):
    """print-as NAME EXPRESSION: prints "  NAME = value", the value through the pretty-printers."""

    def __init__(self):
        super().__init__("print-as", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        name, _, expression = arg.strip().partition(" ")
        print("  %-8s = %s" % (name, gdb.parse_and_eval(expression)))


class _AtReturn(gdb.FinishBreakpoint):
    """Where the current function returns: sets $returned to its value, runs a command, goes on."""

    def __init__(self, command):
        super().__init__(gdb.newest_frame(), internal=True)
        self.silent = True
        self.command = command

    def stop(self):
        if self.return_value is not None:
            gdb.set_convenience_variable("returned", self.return_value)
        gdb.execute(self.command)
        return False  # run the command, do not stop

    def out_of_scope(self):
        pass


class _AfterReturn(gdb.Command):
    """after-return COMMAND: when the current function returns, sets $returned to what it returned
    and runs COMMAND. For a breakpoint's command list, which a `finish` would end."""

    def __init__(self):
        super().__init__("after-return", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        _AtReturn(arg)


class _NodeOp(gdb.Function):
    """$node_op(node): the name of the op ("matmul") of the node that `node` points at, read without
    dereferencing the pointer (node_field in gradformer_gdb.py says why)."""

    def __init__(self):
        super().__init__("node_op")

    def invoke(self, node):
        return node_field(node, "op_")


_PrintAs()
_AfterReturn()
_NodeOp()
end

# ---- the batch: the copy task's token ids, each a Tensor [B, S] or [B, T] (teacher forcing: the
# decoder reads tgt_in, <s> then the sequence, and must predict tgt_out, the sequence shifted by one)
break gradformer::teacher_forced_logits
commands
  silent
  echo \n== the batch ==\n
  print-as src batch.src
  print-as tgt_in batch.tgt_in
  print-as tgt_out batch.tgt_out
  continue
end

# ---- the embedding: each id's row of the table [vocab, d_model]; then times sqrt(d_model), plus
# the positions' sinusoids (and dropout)
break gradformer::Embedding::forward
commands
  silent
  if $_any_caller_matches(".*embed_source", 2)
    echo \n== embedding (source) ==\n
  else
    echo \n== embedding (target) ==\n
  end
  print-as ids ids
  print-as table weight
  after-return print-as rows $returned
  continue
end

break gradformer::PositionalEncoding::forward
commands
  silent
  echo \n== positions: x * sqrt(d_model) + PE ==\n
  print-as x x
  after-return print-as x+PE $returned
  continue
end

# ---- each sub-layer. One MultiheadAttention::forward serves them all: self-attention when query and
# key are the same Variable, cross-attention when the keys are the encoder's output (the memory).
break gradformer::MultiheadAttention::forward
commands
  silent
  if $_any_caller_matches(".*EncoderLayer", 4)
    echo \n== encoder layer: self-attention ==\n
  else
    if &query == &key
      echo \n== decoder layer: masked self-attention ==\n
    else
      echo \n== decoder layer: cross-attention ==\n
    end
  end
  print-as query query
  if &query != &key
    print-as memory key
  end
  print-as mask mask
  after-return print-as output $returned.output
  continue
end

break gradformer::feed_forward
commands
  silent
  if $_any_caller_matches(".*EncoderLayer", 4)
    echo \n== encoder layer: feed-forward ==\n
  else
    echo \n== decoder layer: feed-forward ==\n
  end
  print-as x x
  print-as W_1 linear1.weight
  after-return print-as output $returned
  continue
end

# ---- the loss: the logits [B, T, vocab] against tgt_out [B, T]
break gradformer::cross_entropy
commands
  silent
  echo \n== loss: cross_entropy ==\n
  print-as logits logits
  print-as target target
  after-return print-as loss $returned
  continue
end

# ---- the backward pass: Engine::run orders the nodes, seeds dL/dL = 1, and calls each node's
# backward function, LambdaNode<...>::apply (one breakpoint, a location per op), with dL/d(its output)
break gradformer::Engine::run
commands
  silent
  echo \n== backward: Engine::run ==\n
  print-as seed seed
  set $node = 0
  continue
end

break gradformer::LambdaNode::apply
commands
  silent
  set $node = $node + 1
  printf "== backward node %d: %s ==\n", $node, $node_op(this)
  print-as dL/dout grad_output
  continue
end

# ---- Adam's update, shown on the last parameter, the output projection's bias [vocab]: its value and
# gradient before; after, the value moved (at step 1 by the learning rate, whatever the gradient's
# size: m / sqrt(v) is then the gradient's sign) and the moments m = 0.1 g and v = 0.02 g^2.
break gradformer::Adam::update
commands
  silent
  echo \n== Adam's update ==\n
  print-as lr lr_
  set $last = params_.size() - 1
  set $param = params_[$last]
  set $m = m_[$last]
  set $v = v_[$last]
  print-as bias $param
  after-return echo \n== after Adam's update ==\n
  after-return print-as bias $param
  after-return print-as m $m
  after-return print-as v $v
  disable
  continue
end

run
