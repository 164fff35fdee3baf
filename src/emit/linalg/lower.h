/* lower.h - the Linalg emitter's toolkit: what every per-op lowering
 * (src/emit/linalg/lower_<family>.c) is written in.
 *
 * Owns: the lowering context (MLIR context, insertion block, value map,
 * type cache), creation of ops through the MLIR C API with attributes
 * given as text, constants, dims, tensor.empty, linalg.generic with a body
 * built by a callback, linalg named ops, and the per-op lowering table
 * (lower_rules.def). The emitter lowers the core form (src/transform):
 * every lowering handles the O2M_CORE_OPSET semantics of its op.
 *
 * Rules for lowerings:
 * - Read inputs with lw_in (NULL MlirValue where missing: check with
 *   mlirValueIsNull), types with lw_in_type/lw_out_type (the inferred
 *   o2m_types), attributes with lw_attr_*; set every present output with
 *   lw_set_out. Never print; fail with lw_unsupported (a form not lowered
 *   yet) or lw_error (a bad model).
 * - Dims may be dynamic: get sizes with lw_dim (a constant index when
 *   static, tensor.dim otherwise) and pass them to lw_empty.
 * - Signedness lives in the ONNX dtype, not the MLIR type (MLIR integers
 *   are signless): pick arith ops with lw_dtype_* (divsi vs divui, ...).
 */
#ifndef O2M_LOWER_H
#define O2M_LOWER_H

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>

#include "ir/ir.h"
#include "util/strmap.h"

typedef struct lw_value_slot {
  const o2m_value *key;
  MlirValue value;
} lw_value_slot;

/* A sequence or optional value unrolled (run/test, where the model is
 * specialized to its inputs): its elements as tensor values. An optional
 * tensor holds 0 or 1 of them; an optional sequence is `present` or not. */
typedef struct lw_seq {
  const o2m_value *key;
  int present; /* optionals: whether it holds a value; sequences: 1 */
  int n;
  MlirValue *elems;
} lw_seq;

typedef struct lw_ctx {
  o2m_model *model;
  o2m_diag *diag;
  o2m_arena scratch; /* freed when the module is done */
  MlirContext mc;
  MlirModule module;
  MlirBlock entry;   /* the function's entry block: constants go here */
  MlirBlock block;   /* where new ops are appended */
  MlirLocation loc;  /* location of the node being lowered */
  const o2m_node *node;
  lw_value_slot *values; /* o2m_value* -> MlirValue, open addressing */
  size_t values_cap, values_count;
  o2m_strmap types; /* type text -> MlirType (boxed) */
  /* Non-zero when the module goes to the JIT (run/test), whose pipeline
   * lowers Linalg to plain loops without tiling or vectorization: the
   * contractions and convolutions are then generics whose innermost loop
   * runs along contiguous rows of the output, instead of the named ops a
   * downstream compiler tiles and vectorizes itself. */
  int for_jit;
  /* Unrolled sequences and optionals (o2m_value* -> lw_seq), and the
   * structure of the runtime inputs when given (run: NULL otherwise,
   * where sequence and optional inputs are refused). */
  lw_seq *seqs;
  size_t seqs_count, seqs_cap;
  const struct o2m_io_value *inputs;
} lw_ctx;

typedef o2m_status (*lw_lower_fn)(lw_ctx *cx);

/* ---- failures: messages name the node, op, domain and opset ------------ */
o2m_status lw_unsupported(lw_ctx *cx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
o2m_status lw_error(lw_ctx *cx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- values ------------------------------------------------------------ */
/* The MLIR value of an ONNX value: mapped, or a constant materialized in
 * the entry block for a known value / initializer. Null when neither. */
MlirValue lw_get(lw_ctx *cx, const o2m_value *v);
void lw_map(lw_ctx *cx, const o2m_value *v, MlirValue m);
/* The unrolled sequence or optional of a value, or NULL. */
const lw_seq *lw_seq_get(lw_ctx *cx, const o2m_value *v);
/* Maps v to a sequence or optional of n elements (copied). */
o2m_status lw_seq_map(lw_ctx *cx, const o2m_value *v, int present, int n, const MlirValue *elems);
/* Node input i (null MlirValue when missing or unknown). */
MlirValue lw_in(lw_ctx *cx, int i);
const o2m_type *lw_in_type(lw_ctx *cx, int i);
const o2m_type *lw_out_type(lw_ctx *cx, int i);
int lw_in_present(lw_ctx *cx, int i);
int lw_out_present(lw_ctx *cx, int i);
/* The known value of input i (constant folding facts), or NULL. */
const o2m_tensor *lw_in_known(lw_ctx *cx, int i);
/* Known integer input as int64s in scratch memory; count or -1. */
int64_t lw_in_known_ints(lw_ctx *cx, int i, int64_t **values);
/* Sets output i; a result whose MLIR type differs from the inferred type
 * only by static-vs-dynamic dims is cast (tensor.cast) to it. */
o2m_status lw_set_out(lw_ctx *cx, int i, MlirValue v);

/* ---- attributes of the node being lowered ------------------------------ */
const o2m_attr *lw_attr(lw_ctx *cx, const char *name);
int64_t lw_attr_int(lw_ctx *cx, const char *name, int64_t dflt);
float lw_attr_float(lw_ctx *cx, const char *name, float dflt);
/* NUL-terminated copy in scratch memory, or dflt. */
const char *lw_attr_string(lw_ctx *cx, const char *name, const char *dflt);
/* INTS: count and *values, -1 when absent. */
int lw_attr_ints(lw_ctx *cx, const char *name, const int64_t **values);

/* ---- types ------------------------------------------------------------- */
/* Element type of an ONNX dtype (signless integers, i1 for bool); a null
 * type for dtypes the emitter does not lower (strings, float8, 4-bit). */
MlirType lw_elem_type(lw_ctx *cx, o2m_dtype dtype);
/* tensor<...> of an inferred type (symbolic dims -> ?); null type when
 * not a ranked tensor of a lowerable dtype. */
MlirType lw_tensor_type(lw_ctx *cx, const o2m_type *t);
/* tensor<...> from sizes (-1 = dynamic). */
MlirType lw_tensor_type_of(lw_ctx *cx, o2m_dtype dtype, int rank,
                           const int64_t *sizes);
/* A type parsed from text, cached: "index", "tensor<4xi64>", ... */
MlirType lw_type(lw_ctx *cx, const char *text);
MlirType lw_index_type(lw_ctx *cx);
int lw_dtype_is_float(o2m_dtype d);
int lw_dtype_is_signed(o2m_dtype d); /* signed integers (not bool) */
int lw_dtype_is_unsigned(o2m_dtype d); /* unsigned integers and bool */

/* ---- ops --------------------------------------------------------------- */
/* Parses an attribute from text ("3 : i64", "[1, 2]", "#arith.fastmath<none>"). */
MlirAttribute lw_attr_parse(lw_ctx *cx, const char *text);
/* Creates op `name` at the end of cx->block with the given operands,
 * result types and attributes (`attrs` is a dictionary in MLIR syntax
 * without braces, e.g. "predicate = 2 : i64", or NULL), plus
 * `n_regions` empty regions. Returns the op (null on a bad attribute
 * text, with the diag filled). */
MlirOperation lw_op(lw_ctx *cx, const char *name, int n_operands,
                    const MlirValue *operands, int n_results,
                    const MlirType *results, const char *attrs,
                    int n_regions);
/* lw_op with one result; returns the result (null value on failure). */
MlirValue lw_op1(lw_ctx *cx, const char *name, int n_operands,
                 const MlirValue *operands, MlirType result,
                 const char *attrs);
/* Named attributes can also be passed ready-made. */
MlirOperation lw_op_attrs(lw_ctx *cx, const char *name, int n_operands,
                          const MlirValue *operands, int n_results,
                          const MlirType *results, int n_attrs,
                          const MlirNamedAttribute *attrs, int n_regions);

/* Scalar constants (arith.constant) at the current insertion point. */
MlirValue lw_const_index(lw_ctx *cx, int64_t v);
MlirValue lw_const_scalar(lw_ctx *cx, o2m_dtype dtype, double v);
MlirValue lw_const_int(lw_ctx *cx, MlirType type, int64_t v);
/* A tensor constant of given int64 values (1-D). */
MlirValue lw_const_i64_tensor(lw_ctx *cx, const int64_t *values, int n);
/* A constant tensor from a tensor in ONNX raw layout (cast to `type`'s
 * shape), in the entry block. */
MlirValue lw_const_tensor(lw_ctx *cx, const o2m_tensor *t);

/* Dim k of a ranked tensor value as an index value. */
MlirValue lw_dim(lw_ctx *cx, MlirValue tensor, int k);
/* tensor.empty of `type`; dims[k] gives the size of every dynamic dim k
 * (entries for static dims are ignored; dims may be NULL when static). */
MlirValue lw_empty(lw_ctx *cx, MlirType type, const MlirValue *dims);
/* tensor.empty + linalg.fill with a scalar. */
MlirValue lw_filled(lw_ctx *cx, MlirType type, const MlirValue *dims,
                    MlirValue scalar);
/* tensor.cast to `type` (no-op when equal). */
MlirValue lw_cast_tensor(lw_ctx *cx, MlirValue v, MlirType type);

/* ---- linalg ------------------------------------------------------------ */
/* An affine map of n_dims dims whose results are exprs[i] (>= 0: dim
 * index d<exprs[i]>, -1: the constant 0). */
MlirAttribute lw_affine_map(lw_ctx *cx, int n_dims, int n_results,
                            const int *exprs);
MlirAttribute lw_identity_map(lw_ctx *cx, int n_dims);

/* Builds a linalg.generic body: receives the block arguments (scalars of
 * the ins then the outs) and must fill `yields` (one per out) with values
 * it creates in cx->block (set to the body block during the call). */
typedef o2m_status (*lw_body_fn)(lw_ctx *cx, const MlirValue *args,
                                 MlirValue *yields, void *user);

typedef struct lw_generic_spec {
  int n_loops;
  const char *iterators; /* one char per loop: 'p' parallel, 'r' reduction */
  int n_ins, n_outs;
  const MlirValue *ins;
  const MlirAttribute *in_maps;
  const MlirValue *outs; /* init tensors */
  const MlirAttribute *out_maps;
  lw_body_fn body;
  void *user;
} lw_generic_spec;

/* Creates the linalg.generic; results[i] receives result i. */
o2m_status lw_generic(lw_ctx *cx, const lw_generic_spec *spec,
                      MlirValue *results);

/* A linalg named op (linalg.matmul, linalg.conv_2d_nchw_fchw, ...) with
 * its region filled; `attrs` as in lw_op. Returns result 0. */
MlirValue lw_named(lw_ctx *cx, const char *name, int n_ins,
                   const MlirValue *ins, MlirValue out, const char *attrs);

/* ---- scf.for ------------------------------------------------------------ */

enum { LW_FOR_MAX_CARRIED = 16 };

/* An scf.for being built: its op, the number of carried values and the
 * block its body left. */
typedef struct lw_for_loop {
  MlirOperation op;
  MlirBlock saved;
  int n;
} lw_for_loop;

/* Opens scf.for iv in [lb, ub) step 1 carrying n values (at most
 * LW_FOR_MAX_CARRIED) from init; *iv and carried[] receive the body's
 * arguments and cx->block becomes the body. Close with lw_for_end. */
o2m_status lw_for_begin(lw_ctx *cx, lw_for_loop *l, MlirValue lb, MlirValue ub, int n,
                        const MlirValue *init, MlirValue *iv, MlirValue *carried);
/* Yields next[] (NULL: the body failed, nothing is yielded) and returns to
 * the enclosing block; out[] (may be NULL) receives the loop's results. */
void lw_for_end(lw_ctx *cx, lw_for_loop *l, const MlirValue *next, MlirValue *out);

/* The same as one call: body receives the induction variable and the
 * carried values and sets the next ones. */
typedef o2m_status (*lw_for_body_fn)(lw_ctx *cx, MlirValue iv, const MlirValue *carried,
                                     MlirValue *next, void *user);
o2m_status lw_for(lw_ctx *cx, MlirValue lb, MlirValue ub, int n, const MlirValue *init,
                  lw_for_body_fn body, void *user, MlirValue *out);

/* ---- regions (scf.if, scf.for, scf.while bodies) ----------------------- */
/* Lowers every node of `g` into cx->block, in order (values of enclosing
 * graphs stay visible). */
o2m_status lw_lower_graph_nodes(lw_ctx *cx, const o2m_graph *g);

/* ---- the lowering table ------------------------------------------------- */
#define LOWER(op, fn) o2m_status fn(lw_ctx *cx);
#include "emit/linalg/lower_rules.def"
#undef LOWER

/* o2m_emit_linalg_module for a run on `inputs` (o2m_runtime_input
 * order; may be NULL when all are tensors): each element of a sequence or
 * optional input is one argument, each of an output one result, in order;
 * `outputs` (the graph's output count, may be NULL when all are tensors)
 * receives the structure of every output (kind, presence, count; no
 * tensors). */
struct o2m_io_value;
o2m_status o2m_emit_linalg_module_io(o2m_model *model, MlirContext mc, int for_jit,
                                     const struct o2m_io_value *inputs, struct o2m_io_value *outputs,
                                     MlirModule *out, o2m_diag *diag);

/* The lowering of a default-domain op, or NULL. */
lw_lower_fn lw_lowering_for(const char *domain, const char *op_type);

#endif
