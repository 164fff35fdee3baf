#!/usr/bin/python3
"""stablehlo_oracle.py - runs ONNX test data through StableHLO's interpreter.

A helper of check_stablehlo.sh (a developer tool, not part of CI).
  wrap MODEL.mlir DATASET_DIR OUT.mlir
      Renames the model's @main to @o2m_model and adds a @main that calls it
      on the data set's inputs as "stablehlo.constant"s in hex form
      (stablehlo-translate --interpret runs @main; its --args is a single
      command-line argument, limited to 128 KiB). The model's argument types
      must be the inputs' own, static, types.
  compare STDOUT DATASET_DIR
      Reads what `stablehlo-translate --interpret --interpreter-print-dense`
      printed, a line per result, in MLIR's own attribute syntax:
        dense<[[1.000000e+00, 0x7FC00000], ...]> : tensor<2x2xf32>
        dense<"0x0000803F..."> : tensor<101xf32>     (over 100 elements)
        dense<5> : tensor<2x3xi64>   dense<> : tensor<0xi1>   (splat, empty)
        dense<[(1.0,2.0), ...]> : tensor<2xcomplex<f32>>   dense<[true, ...]>
      and compares the results with output_K.pb in order: shapes and element
      types exact; floats (each complex part) |a - e| <= 1e-7 + 1e-3 * |e|,
      NaN equal to NaN, infinities equal by sign; integers and bools exact.
      Prints "ok" or the first difference.
  The float8, float4, 4- and 2-bit dtypes (17-26), which this onnx (1.12)
  cannot decode, are decoded here from raw_data or int32_data (see SMALL).
  check TEST_DIR
      Only whether the oracle can run the test at all (exit 0 or 2).
Exit status: 0 ok; 1 failure (a line on stdout); 2 the oracle cannot run the
test: an input or output is a sequence or an optional, or has a dtype with no
MLIR element type (a string); check_stablehlo.sh skips it.
"""
import glob
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7

# ONNX dtype -> MLIR element type (onnx's to_array gives bf16 as float32).
T = onnx.TensorProto
TYPES = {T.FLOAT: "f32", T.DOUBLE: "f64", T.FLOAT16: "f16", T.BFLOAT16: "bf16",
         T.BOOL: "i1", T.INT8: "i8", T.INT16: "i16", T.INT32: "i32", T.INT64: "i64",
         T.UINT8: "ui8", T.UINT16: "ui16", T.UINT32: "ui32", T.UINT64: "ui64",
         T.COMPLEX64: "complex<f32>", T.COMPLEX128: "complex<f64>"}
FLOAT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}


# ---- the small dtypes (17-26) -----------------------------------------------
# In a TensorProto: raw_data, or else int32_data with an entry per byte; the
# 8-bit types a byte per element, the 4-bit ones two to a byte (first element
# in the low nibble), the 2-bit ones four (first in the lowest bits). In MLIR
# (hex dense literals, in and out) every such element has a byte of its own,
# its bit pattern in the low bits. Here they are kept as bit patterns (uint8)
# and turned into values (float64 or int64) by SMALL_VALUES.

def minifloat(e, m, bias, special):
    """Every value of a float format with e exponent and m mantissa bits
    (a sign bit too, but for e8m0), indexed by bit pattern. special: "ieee"
    (all-ones exponent: inf, or NaN), "fn" (only S.1111.111 is NaN), "fnuz"
    (only 0x80, the negative zero, is NaN), "" (no inf or NaN), "e8m0"
    (2^(bits-127), no sign, 0xFF NaN)."""
    if special == "e8m0":
        return np.array([2.0 ** (b - 127) for b in range(255)] + [np.nan])
    vals = []
    for b in range(1 << (1 + e + m)):
        s, x, f = b >> (e + m), (b >> m) & ((1 << e) - 1), b & ((1 << m) - 1)
        v = (f / 2.0 ** m if x == 0 else 1 + f / 2.0 ** m) * 2.0 ** (max(x, 1) - bias)
        if special == "ieee" and x == (1 << e) - 1:
            v = np.inf if f == 0 else np.nan
        elif special == "fn" and x == (1 << e) - 1 and f == (1 << m) - 1:
            v = np.nan
        elif special == "fnuz" and b == 1 << (e + m):
            v = np.nan
        vals.append(-v if s else v)
    return np.array(vals)


def small_int(width, signed):
    """Every value of a width-bit integer, indexed by bit pattern."""
    u = np.arange(1 << width, dtype=np.int64)
    return np.where(u >= 1 << (width - 1), u - (1 << width), u) if signed else u


# ONNX dtype -> (MLIR element type, bits per element, values by bit pattern)
SMALL = {17: ("f8E4M3FN", 8, minifloat(4, 3, 7, "fn")),
         18: ("f8E4M3FNUZ", 8, minifloat(4, 3, 8, "fnuz")),
         19: ("f8E5M2", 8, minifloat(5, 2, 15, "ieee")),
         20: ("f8E5M2FNUZ", 8, minifloat(5, 2, 16, "fnuz")),
         21: ("ui4", 4, small_int(4, False)),
         22: ("i4", 4, small_int(4, True)),
         23: ("f4E2M1FN", 4, minifloat(2, 1, 1, "")),
         24: ("f8E8M0FNU", 8, minifloat(8, 0, 127, "e8m0")),
         25: ("ui2", 2, small_int(2, False)),
         26: ("i2", 2, small_int(2, True))}
TYPES.update({dt: elem for dt, (elem, _, _) in SMALL.items()})
SMALL_WIDTH = {elem: w for elem, w, _ in SMALL.values()}
SMALL_VALUES = {elem: vals for elem, _, vals in SMALL.values()}


def small_bits(t):
    """The bit patterns (uint8, shaped) of a TensorProto of a SMALL dtype."""
    _, w, _ = SMALL[t.data_type]
    n = int(np.prod(t.dims, dtype=np.int64))
    data = t.raw_data or bytes(v & 0xFF for v in t.int32_data)
    b = np.frombuffer(data, np.uint8)
    bits = ((b[:, None] >> np.arange(0, 8, w, dtype=np.uint8)) & ((1 << w) - 1)).reshape(-1)
    if bits.size < n:
        raise Fail("%s holds %d elements, its dims %d" % (t.name, bits.size, n))
    return bits[:n].reshape(tuple(t.dims))


def to_array(t):
    """numpy_helper.to_array, with SMALL dtypes as their values."""
    if t.data_type in SMALL:
        return SMALL_VALUES[TYPES[t.data_type]][small_bits(t)]
    return numpy_helper.to_array(t)


class Skip(Exception):  # the oracle cannot run this test (exit 2)
    pass


class Fail(Exception):  # a failure of the model or its module (exit 1)
    pass


# ---- the data set -----------------------------------------------------------

def check_kinds(test_dir):
    """Raises Skip when a graph input (without initializer) or output of
    TEST_DIR/model.onnx is not a tensor, or has a dtype MLIR lacks. Reading
    the graph is how ONNX's own runner tells a SequenceProto or
    OptionalProto input_K.pb from a TensorProto one."""
    path = os.path.join(test_dir, "model.onnx")
    if not os.path.exists(path):
        return  # a hand-made data set: input_K.pb taken to be tensors
    g = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    ins = [v for v in g.input if v.name not in inits]
    for what, vs in (("input", ins), ("output", g.output)):
        for k, v in enumerate(vs):
            kind = v.type.WhichOneof("value")
            if kind != "tensor_type":
                raise Skip("%s %d '%s' is a %s" % (what, k, v.name, kind))
            dt = v.type.tensor_type.elem_type
            if dt not in TYPES:
                raise Skip("%s %d '%s' has dtype %s, which has no MLIR type"
                           % (what, k, v.name, T.DataType.Name(dt) if dt in T.DataType.values() else dt))


def load_tensors(dataset, prefix):
    """input_K.pb / output_K.pb of a data set, in order of K."""
    files = glob.glob(os.path.join(dataset, prefix + "_*.pb"))
    files.sort(key=lambda f: int(re.search(r"_(\d+)\.pb$", f).group(1)))
    out = [onnx.load_tensor(f) for f in files]
    for f, t in zip(files, out):
        if t.data_type not in TYPES:
            raise Skip("%s has dtype %d, which has no MLIR type" % (os.path.basename(f), t.data_type))
    return out


def tensor_type(shape, elem):
    return "tensor<" + "".join("%dx" % d for d in shape) + elem + ">"


def dense_literal(t):
    """dense<...> : tensor<...> holding TensorProto t, in MLIR's hex form
    (little-endian raw data; i1 packed 8 to a byte, first element in bit 0)."""
    elem = TYPES[t.data_type]
    a = small_bits(t) if elem in SMALL_WIDTH else numpy_helper.to_array(t)
    ty = tensor_type(a.shape, elem)
    if a.size == 0:
        return "dense<> : " + ty
    if elem == "i1":
        raw = np.packbits(a.reshape(-1).astype(np.bool_), bitorder="little").tobytes()
    elif elem in SMALL_WIDTH:  # a byte per element
        raw = a.tobytes()
    elif elem == "bf16":
        raw = (a.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    else:
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    return 'dense<"0x%s"> : %s' % (raw.hex().upper(), ty)


# ---- the model's module -----------------------------------------------------

def balanced(s, i):
    """Index just past the bracket group opening at s[i]."""
    depth, q = 0, False
    for j in range(i, len(s)):
        c = s[j]
        if q:
            q = not (c == '"' and s[j - 1] != "\\")
        elif c == '"':
            q = True
        elif c in "(<[{":
            depth += 1
        elif c in ")>]}" and not (c == ">" and s[j - 1] == "-"):
            depth -= 1
            if depth == 0:
                return j + 1
    raise Fail("unbalanced brackets in @main's signature")


def split_top(s):
    """s split at commas outside brackets."""
    parts, start, j = [], 0, 0
    while j < len(s):
        if s[j] in "(<[{":
            j = balanced(s, j)
            continue
        if s[j] == ",":
            parts.append(s[start:j])
            start = j + 1
        j += 1
    parts.append(s[start:])
    return [p.strip() for p in parts if p.strip()]


def leading_type(s):
    """The type at the start of s ("tensor<2xf32> {attrs} loc(...)")."""
    s, j = s.strip(), 0
    while j < len(s) and not s[j].isspace() and s[j] not in "{,":
        j = balanced(s, j) if s[j] in "(<[" else j + 1
    return s[:j]


def main_signature(text):
    """(argument types, result types) of func.func @main."""
    m = re.search(r'func\.func\s+(?:(?:public|private|nested)\s+)?@"?main"?\s*\(', text)
    if not m:
        raise Fail("no func.func @main in the module")
    end = balanced(text, m.end() - 1)
    args = [leading_type(a.split(":", 1)[1]) for a in split_top(text[m.end():end - 1])]
    rest = text[end:]
    results = []
    r = re.match(r"\s*->\s*", rest)
    if r:
        j = r.end()
        if rest[j] == "(":
            k = balanced(rest, j)
            results = [leading_type(p) for p in split_top(rest[j + 1:k - 1])]
        else:
            results = [leading_type(rest[j:])]
    return args, results


def wrap(model_mlir, dataset, out):
    check_kinds(os.path.dirname(os.path.abspath(dataset)))
    inputs = load_tensors(dataset, "input")
    text = open(model_mlir).read()
    args, results = main_signature(text)
    if len(args) != len(inputs):
        raise Fail("@main takes %d arguments, the data set has %d inputs" % (len(args), len(inputs)))
    consts = []
    for k, (arg, t) in enumerate(zip(args, inputs)):
        lit = dense_literal(t)
        ty = lit.rsplit(" : ", 1)[1]
        if arg != ty:  # also a dynamic shape: func.call needs equal types
            raise Fail("argument %d is %s, the data set's input %d is %s" % (k, arg, k, ty))
        consts.append((lit, ty))
    # A fresh name, then every reference to @main renamed (a symbol name
    # continues with [A-Za-z0-9_$.], so @main_2 is left alone).
    name = "o2m_model"
    while re.search(r"@%s(?![\w$.])" % name, text):
        name += "_"
    text = re.sub(r'@(main|"main")(?![\w$.])', "@" + name, text)
    text = re.sub(r'sym_name = "main"', 'sym_name = "%s"' % name, text)

    res, n = ", ".join(results), len(results)
    lines = ["  func.func @main() -> (%s) {" % res]
    lines += ['    %%i%d = "stablehlo.constant"() <{value = %s}> : () -> %s' % (k, lit, ty)
              for k, (lit, ty) in enumerate(consts)]
    lines.append("    %sfunc.call @%s(%s) : (%s) -> (%s)" % (
        "%%r:%d = " % n if n else "", name,
        ", ".join("%%i%d" % k for k in range(len(consts))), ", ".join(args), res))
    lines.append(("    return " + ", ".join("%%r#%d" % k for k in range(n)) + (" : " + res if n else "")).rstrip())
    new_main = "\n".join(lines) + "\n  }\n"

    # Into the module: before its closing "}" (the last line that is just
    # "}", which skips trailing #loc aliases and a {-# dialect_resources #-}
    # block); for a file of bare functions, before such a block or at the end.
    body = re.sub(r"//.*", "", text).lstrip()
    if body.startswith("module"):
        ends = [m.start() for m in re.finditer(r"^}\s*$", text, re.M)]
        at = ends[-1] if ends else text.rindex("}")
    else:
        at = text.find("{-#") if "{-#" in text else len(text)
    with open(out, "w") as f:
        f.write(text[:at] + new_main + text[at:])


# ---- the interpreter's results ------------------------------------------------

TYPE_RE = re.compile(r"tensor<((?:\d+x)*)(.+)>$")
TOKEN_RE = re.compile(r"\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)|[^\s,\[\]()]+")


def parse_type(s):
    m = TYPE_RE.match(s.strip())
    if not m:
        raise Fail("cannot read the result type %s" % s.strip()[:80])
    return tuple(int(d) for d in m.group(1).split("x") if d), m.group(2)


def from_bits(u, base):
    """The floats of type base whose bit patterns are the integers u."""
    if base == "bf16":
        return (u.astype("<u4") << 16).view("<f4")
    w = FLOAT_BYTES[base]
    return u.astype("<u%d" % w).view("<f%d" % w)


def scalar(tok, base):
    """One printed element: a decimal, true/false, or (for floats) the bit
    pattern 0x... that MLIR prints for NaN, infinities and odd values."""
    if tok in ("true", "false"):
        return tok == "true"
    if base in SMALL_VALUES and base[0] == "f":  # a float8 or float4
        return float(SMALL_VALUES[base][int(tok, 16)] if tok.lower().startswith("0x") else tok)
    if base not in FLOAT_BYTES:
        return int(tok, 0)
    if tok.lower().startswith("0x"):
        return float(from_bits(np.array([int(tok, 16)], np.uint64), base)[0])
    return float(tok)  # also takes "nan", "inf", "-inf"


def parse_dense(line):
    """(shape, element type, flat numpy array) of `dense<...> : tensor<...>`."""
    body, ty = line.rsplit(" : ", 1)
    shape, elem = parse_type(ty)
    n = int(np.prod(shape, dtype=np.int64))
    body = body.strip()[len("dense<"):-1].strip()
    cplx = elem.startswith("complex")
    base = elem[8:-1] if cplx else elem
    if body.startswith('"0x'):  # raw little-endian data; i1 8 to a byte
        raw = bytes.fromhex(body[3:-1])
        if elem == "i1":
            if len(raw) == 1 and raw[0] in (0, 0xFF):  # MLIR's i1 splat
                vals = np.full(n, raw[0] != 0)
            else:
                vals = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")[:n].astype(np.bool_)
        else:
            if base in SMALL_WIDTH:  # a byte each, the bit pattern in its low bits
                u = np.frombuffer(raw, np.uint8) & ((1 << SMALL_WIDTH[base]) - 1)
                vals = SMALL_VALUES[base][u]
            elif base in FLOAT_BYTES:
                vals = from_bits(np.frombuffer(raw, "<u%d" % FLOAT_BYTES[base]), base)
            else:
                m = re.match(r"(u?)i(\d+)$", base)
                vals = np.frombuffer(raw, "<%s%d" % ("u" if m.group(1) else "i", int(m.group(2)) // 8))
            if cplx:
                pairs = vals.astype(np.float64).reshape(-1, 2)
                vals = np.empty(len(pairs), np.complex128)  # not re + 1j*im:
                vals.real, vals.imag = pairs[:, 0], pairs[:, 1]  # 1j*inf has a NaN
            if len(vals) == 1 and n != 1:
                vals = np.repeat(vals, n)
        return shape, elem, vals
    vals = []
    for m in TOKEN_RE.finditer(body):
        if m.group(1) is not None:
            vals.append(complex(scalar(m.group(1), base), scalar(m.group(2), base)))
        else:
            vals.append(scalar(m.group(0), base))
    if len(vals) == 1 and n != 1:
        vals = vals * n
    return shape, elem, np.array(vals, dtype=object)


def show(v):
    if isinstance(v, (complex, np.complexfloating)):
        im = show(v.imag)
        return "%s%s%sj" % (show(v.real), "" if im[0] == "-" else "+", im)
    if isinstance(v, (float, np.floating)):
        return "%.9g" % v
    return str(v).lower() if isinstance(v, (bool, np.bool_)) else str(v)


def compare(stdout, dataset):
    check_kinds(os.path.dirname(os.path.abspath(dataset)))
    expected = load_tensors(dataset, "output")
    lines = [l.strip() for l in open(stdout) if l.strip().startswith("dense<")]
    if len(lines) != len(expected):
        raise Fail("%d results, %d expected outputs" % (len(lines), len(expected)))
    for k, (line, t) in enumerate(zip(lines, expected)):
        e = to_array(t)
        want_ty = tensor_type(e.shape, TYPES[t.data_type])
        shape, elem, got = parse_dense(line)
        if tensor_type(shape, elem) != want_ty:
            raise Fail("output %d is %s, expected %s" % (k, tensor_type(shape, elem), want_ty))
        if got.size != e.size:
            raise Fail("output %d has %d elements, expected %d" % (k, got.size, e.size))
        e = e.reshape(-1)
        if e.dtype.kind in "fc":
            g = got.astype(e.dtype)  # rounded as the element type holds it
            parts = lambda x: np.stack([x.real, x.imag], -1) if x.dtype.kind == "c" else x[:, None]
            a, x = parts(g).astype(np.float64), parts(e).astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.abs(a - x) <= ATOL + RTOL * np.abs(x)
                bad = np.where(np.isnan(a) | np.isnan(x), ~(np.isnan(a) & np.isnan(x)),
                               np.where(np.isinf(a) | np.isinf(x), a != x, ~close)).any(-1)
        else:
            g = got.astype(e.dtype)
            bad = g != e
        if bad.any():
            i = int(np.argmax(bad))
            idx = ",".join(str(int(d)) for d in np.unravel_index(i, shape)) if shape else ""
            raise Fail("output %d element [%s]: expected %s, got %s" % (k, idx, show(e[i]), show(g[i])))
    print("ok")


def main(argv):
    commands = {"wrap": (wrap, 3), "compare": (compare, 2), "check": (check_kinds, 1)}
    if not argv or argv[0] not in commands or len(argv) != 1 + commands[argv[0]][1]:
        sys.stderr.write(__doc__)
        return 2
    try:
        commands[argv[0]][0](*argv[1:])
    except Skip as e:
        print(e)
        return 2
    except Fail as e:
        print(e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
