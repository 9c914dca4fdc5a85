"""gdb pretty-printers for gradformer: a Tensor, a Variable and a Shape shown as a learner thinks of them.

    (gdb) source tutorials/debug/gradformer_gdb.py          # or: gdb -x tutorials/debug/gradformer_gdb.py --args ./program
    (gdb) print x
    $1 = Tensor [2, 3] float32, strides [3, 1], offset 0, contiguous = [[0, 1, 2], [3, 4, 5]]
    (gdb) print loss
    $2 = Variable [] float32 = 1.2345, grad_fn=cross_entropy, grad [] float32 = 1

They read the objects' fields (no function is called in the program), so they work in a core dump
and in an optimised build, as long as the variable itself is not optimised away.
"""
import gdb

DTYPES = {0: ("float32", "float", 4), 1: ("float64", "double", 8), 2: ("int64", "long", 8), 3: ("bool", "bool", 1)}
SHOWN = 12  # values printed at most; "..." marks the rest


def _pointee(shared_ptr):
    """The raw pointer inside a std::shared_ptr (libstdc++ or libc++)."""
    for field in ("_M_ptr", "__ptr_"):
        try:
            return shared_ptr[field]
        except gdb.error:
            pass
    raise gdb.error("unknown std::shared_ptr layout")


def _dims(shape):
    rank = int(shape["rank_"])
    elems = shape["dims_"]
    try:
        elems = elems["_M_elems"]  # libstdc++'s std::array
    except gdb.error:
        elems = elems["__elems_"]  # libc++'s
    return [int(elems[i]) for i in range(rank)]


def _contiguous(dims, strides):
    expected = 1
    for size, stride in reversed(list(zip(dims, strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _format(value, dtype):
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in ("float32", "float64"):
        return "%.4g" % float(value)
    return str(int(value))


def _nested(values, dims, truncated):
    """[[0, 1], [2, 3]] from row-major values; a flat list with ... when truncated."""
    if truncated or not dims:
        return ("[" + ", ".join(values) + ", ...]") if truncated else (values[0] if values else "")
    def build(level, start):
        if level == len(dims) - 1:
            return "[" + ", ".join(values[start:start + dims[level]]) + "]", start + dims[level]
        parts = []
        for _ in range(dims[level]):
            part, start = build(level + 1, start)
            parts.append(part)
        return "[" + ", ".join(parts) + "]", start
    return build(0, 0)[0]


def tensor_summary(val):
    storage = _pointee(val["storage_"])
    if int(storage) == 0:
        return "Tensor (undefined)"
    dims, strides = _dims(val["shape_"]), _dims(val["strides_"])
    offset = int(val["offset_"])
    name, ctype, _ = DTYPES.get(int(val["dtype_"]), ("dtype %d" % int(val["dtype_"]), "char", 1))
    numel = 1
    for d in dims:
        numel *= d
    base = storage.dereference()["data_"].cast(gdb.lookup_type(ctype).pointer())
    values = []
    for flat in range(min(numel, SHOWN)):  # walk the first elements in row-major order
        index, rest = offset, flat
        for size, stride in reversed(list(zip(dims, strides))):
            index += (rest % size) * stride
            rest //= size
        values.append(_format((base + index).dereference(), name))
    layout = "contiguous" if _contiguous(dims, strides) else "not contiguous (a view)"
    shape = "[" + ", ".join(map(str, dims)) + "]"
    return "Tensor %s %s, strides [%s], offset %d, %s = %s" % (
        shape, name, ", ".join(map(str, strides)), offset, layout, _nested(values, dims, numel > SHOWN))


class TensorPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        return tensor_summary(self.val)


class ShapePrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        return "[" + ", ".join(map(str, _dims(self.val))) + "]"


def node_field(node, name):
    """A field of the Node that `node` (a pointer to a Node or a LambdaNode<...>) points at, read at
    its offset. Dereferencing the pointer would make gdb look up the object's dynamic type, a
    LambdaNode of a lambda whose RTTI symbol it cannot match, and print a warning each time."""
    field = next(f for f in gdb.lookup_type("gradformer::Node").fields() if f.name == name)
    char_p = gdb.lookup_type("char").pointer()
    return (node.cast(char_p) + field.bitpos // 8).cast(field.type.pointer()).dereference()


def _op_name(node):
    """The op that made a value. A Release library has no debug information for Node (gcc emits a
    polymorphic class's only where its destructor is defined), so then read op_, Node's first field,
    just past the vtable pointer."""
    try:
        return node_field(node, "op_").string()
    except (gdb.error, StopIteration):
        char_pp = gdb.lookup_type("char").const().pointer().pointer()
        return (node.cast(char_pp) + 1).dereference().string()


def variable_summary(impl):
    """A VariableImpl (what a Variable points at): its value, how it was made, its gradient."""
    value = tensor_summary(impl["value"]).replace("Tensor ", "Variable ", 1)
    node = _pointee(impl["grad_fn"])
    origin = "grad_fn=" + _op_name(node) if int(node) != 0 else "leaf"
    if bool(impl["requires_grad"]):
        origin += ", requires_grad"
    grad = impl["grad"]
    shown_grad = "no grad yet" if int(_pointee(grad["storage_"])) == 0 else "grad " + tensor_summary(grad)[len("Tensor "):]
    return "%s, %s, %s" % (value, origin, shown_grad)


class VariablePrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        impl = _pointee(self.val["impl_"])
        return "Variable (undefined)" if int(impl) == 0 else variable_summary(impl.dereference())


class VariableImplPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        return variable_summary(self.val)


def _lookup(val):
    t = val.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_REF:
        t = t.target().strip_typedefs()
    name = t.unqualified().tag
    return {"gradformer::Tensor": TensorPrinter, "gradformer::Variable": VariablePrinter,
            "gradformer::VariableImpl": VariableImplPrinter, "gradformer::Shape": ShapePrinter}.get(name, lambda v: None)(val) if name else None


gdb.pretty_printers.append(_lookup)
