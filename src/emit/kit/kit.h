/* kit.h - what every lowering emitter (src/emit/linalg, src/emit/tosa, ...)
 * is written in: the emitter kit shared by all targets.
 *
 * Owns: the lowering context (MLIR context, insertion block, value map,
 * type cache, the target being emitted), creation of ops through the MLIR
 * C API with attributes given as text, constants, dims, tensor.empty, the
 * lowering of a graph's nodes through the target's table, and the module
 * builder (kit_module.c: the unsupported-node report, func.func @main,
 * verification, printing). The emitters lower the core form
 * (src/transform): every lowering handles the O2M_CORE_OPSET semantics of
 * its op. Nothing here names a target's dialect except through lw_target.
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
 *   are signless): pick ops with lw_dtype_* (divsi vs divui, ...).
 */
#ifndef O2M_EMIT_KIT_H
#define O2M_EMIT_KIT_H

#include <stdio.h>

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>

#include "emit/emit.h"
#include "ir/ir.h"
#include "util/strmap.h"

struct lw_ctx;
typedef o2m_status (*lw_lower_fn)(struct lw_ctx *cx);

/* A row of a target's lowering table (NULL op_type ends it). */
typedef struct lw_lowering {
  const char *op_type;
  lw_lower_fn lower;
} lw_lowering;
/* The row of a default-domain op in a table, or NULL (the first row of an
 * op wins). */
lw_lower_fn lw_lowering_in(const lw_lowering *table, const char *domain, const char *op_type);

/* A lowering target: its name in messages, its lowering table, the
 * dialects it emits and how it writes a tensor constant. */
typedef struct lw_target {
  const char *name;                  /* "Linalg", "TOSA" */
  lw_lower_fn (*lowering_for)(const char *domain, const char *op_type);
  void (*load_dialects)(MlirContext mc);
  const char *const_op;              /* "arith.constant", "tosa.const" */
  const char *const_attr;            /* "value", "values" */
  /* NULL, or whether the target lowers this node of an op in its table
   * (0: a form it refuses, left to the transform layer's decompositions) */
  int (*keeps)(const o2m_node *n);
  /* Non-zero: unsigned dtypes are MLIR's unsigned integers (ui8, ...),
   * not signless ones (StableHLO spells signedness in its types). */
  int unsigned_types;
  /* Non-zero: every tensor constant is a dense literal, never a
   * dense_resource blob (StableHLO's interpreter and VHLO take only
   * dense elements). */
  int dense_constants;
  /* The op lw_cast_tensor casts between static and dynamic dims with
   * (NULL: tensor.cast). */
  const char *cast_op;
  /* How an If branch that cannot be built calls O2M_BRANCH_FAILED_FN with
   * `id` at the end of cx->block (NULL: func.call of the function, which
   * the module then declares). */
  o2m_status (*failure_call)(struct lw_ctx *cx, int id);
  /* NULL, or the lowering of an op the target lowers only for the JIT
   * (lw_ctx.for_jit), outside its table: checked first there. */
  lw_lower_fn (*jit_lowering_for)(int for_jit, const char *domain, const char *op_type);
  /* NULL, or whether the transform layer leaves this node as written for
   * the JIT's module (a runtime kernel lowers it, jit_lowering_for). */
  int (*jit_keeps)(int for_jit, const o2m_node *n);
  /* NULL, or the dtype the target carries values of dtype d in when it has
   * no type for d (d itself when it has): TOSA holds int4/int2 in int8,
   * uint4/uint2 in uint8 and the float8/float4 formats it lacks as their
   * bit patterns in uint8. A carried value takes one byte per element,
   * sign-extended for int4/int2 (constants are written so); @main's
   * arguments and results of carried dtypes are marked
   * O2M_CARRIED_DTYPE_ATTR (emit.h), and `narrow` re-reads an argument's
   * low bits as the carried dtype, since a caller may pass the bytes zero-
   * or sign-extended. */
  o2m_dtype (*carrier)(o2m_dtype d);
  MlirValue (*narrow)(struct lw_ctx *cx, MlirValue arg, o2m_dtype d);
} lw_target;


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
  const lw_target *target;
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
  /* The target's own state for one module (NULL at the start; memory
   * from `scratch`). */
  void *target_state;
  /* If branches compiled to a run-time failure (lw_lower_if_with): why
   * each cannot be built; index i is the id its failure call passes. */
  const char **branch_failures;
  int n_branch_failures;
  int profiled; /* calls of O2M_PROFILE_FN were emitted (declared at the end) */
  /* Weights passed as arguments (for_jit & O2M_JIT_WEIGHT_ARGS): their
   * values, in argument order after the runtime inputs. */
  const o2m_value **weights;
  int n_weights, weights_cap;
  MlirBlock main_entry; /* @main's entry block, which holds them */
} lw_ctx;

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
/* The argument of @main that carries initializer v (O2M_JIT_WEIGHT_ARGS),
 * made on first use; null when v is not such a weight. */
MlirValue lw_weight_argument(lw_ctx *cx, const o2m_value *v);
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
/* A GRAPH attribute's subgraph, or NULL. */
const o2m_graph *lw_attr_graph(lw_ctx *cx, const char *name);
float lw_attr_float(lw_ctx *cx, const char *name, float dflt);
/* NUL-terminated copy in scratch memory, or dflt. */
const char *lw_attr_string(lw_ctx *cx, const char *name, const char *dflt);
/* INTS: count and *values, -1 when absent. */
int lw_attr_ints(lw_ctx *cx, const char *name, const int64_t **values);

/* ---- types ------------------------------------------------------------- */
/* Element type of an ONNX dtype (signless integers, i1 for bool); a null
 * type for dtypes the emitter does not lower (strings, float8, 4-bit). */
MlirType lw_elem_type(lw_ctx *cx, o2m_dtype dtype);
/* The dtype values of dtype d are held in (lw_target.carrier): d itself
 * unless the target carries d in a wider one. */
o2m_dtype lw_carried_dtype(lw_ctx *cx, o2m_dtype d);
/* tensor<...> of an inferred type (symbolic dims -> ?); null type when
 * not a ranked tensor of a lowerable dtype. */
MlirType lw_tensor_type(lw_ctx *cx, const o2m_type *t);
/* tensor<...> from sizes (-1 = dynamic). */
MlirType lw_tensor_type_of(lw_ctx *cx, o2m_dtype dtype, int rank,
                           const int64_t *sizes);
/* The text of an MLIR type into buf[cap] (cut to fit). */
void lw_type_text(MlirType t, char *buf, size_t cap);
/* A type parsed from text, cached: "index", "tensor<4xi64>", ... */
MlirType lw_type(lw_ctx *cx, const char *text);
MlirType lw_index_type(lw_ctx *cx);
int lw_dtype_is_float(o2m_dtype d);
int lw_dtype_is_signed(o2m_dtype d); /* signed integers (not bool) */
int lw_dtype_is_unsigned(o2m_dtype d); /* unsigned integers and bool */

/* ---- ops --------------------------------------------------------------- */
/* Parses an attribute from text ("3 : i64", "[1, 2]", "#arith.fastmath<none>"). */
MlirAttribute lw_attr_parse(lw_ctx *cx, const char *text);
/* Parses the dictionary {attrs} from its entries' text, of any length. */
MlirAttribute lw_attr_dict_parse(lw_ctx *cx, const char *attrs);
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
/* tensor.cast to `type` (no-op when equal). */
MlirValue lw_cast_tensor(lw_ctx *cx, MlirValue v, MlirType type);

/* ---- Conv and pool windows (kit_window.c) ------------------------------ */
enum { LW_FIXED_MAX_SPATIAL = 3 };
enum { LW_NOTSET, LW_SAME_UPPER, LW_SAME_LOWER, LW_VALID, LW_AUTO_PAD_COUNT };
typedef struct lw_fixed_window {
  int n; /* spatial axes */
  int64_t in[LW_FIXED_MAX_SPATIAL], k[LW_FIXED_MAX_SPATIAL], s[LW_FIXED_MAX_SPATIAL], d[LW_FIXED_MAX_SPATIAL];
  int64_t out[LW_FIXED_MAX_SPATIAL];
  int64_t pb[LW_FIXED_MAX_SPATIAL], pe[LW_FIXED_MAX_SPATIAL]; /* ONNX's pads (auto_pad applied) */
  /* the end pad the last window needs: (out - 1) s + (k - 1) d + 1 - in - pb
   * (below pe where pads are wasted, above it with ceil_mode; < 0: the
   * input's end is never read) */
  int64_t reach[LW_FIXED_MAX_SPATIAL];
} lw_fixed_window;
/* An INTS attribute of `count` values (dflt for each when absent). */
o2m_status lw_window_ints(lw_ctx *cx, const char *name, int count, int64_t dflt, int64_t *out);
/* auto_pad as LW_NOTSET... */
o2m_status lw_read_auto_pad(lw_ctx *cx, int *mode);
/* The window of a Conv or pool over x [N, C, spatial...] (static spatial
 * dims); `kernel` (the weight's spatial dims) where kernel_shape is
 * absent. The output sizes are checked against the inferred type. */
o2m_status lw_read_fixed_window(lw_ctx *cx, MlirValue x, const int64_t *kernel, lw_fixed_window *w);

/* ---- DepthToSpace / SpaceToDepth as reshape, transpose, reshape ----------- */
/* For an NCHW input [n, c, h, w] and block b: the 6-D shape to reshape to
 * and the permutation to apply (result dim k = input dim perm[k]), for
 * DepthToSpace (to_space; mode CRD or DCR) or SpaceToDepth. */
void lw_depth_space_plan(const int64_t *in, int64_t b, int to_space, int crd, int64_t *mid,
                         int64_t *perm);

/* ---- regions (scf.if, scf.for, scf.while bodies) ----------------------- */
/* Lowers every node of `g` into cx->block, in order (values of enclosing
 * graphs stay visible). */
o2m_status lw_lower_graph_nodes(lw_ctx *cx, const o2m_graph *g);

/* ---- subgraphs and If (kit_regions.c) ---------------------------------- */
int lw_is_ranked(MlirType t);
/* Whether a Loop node carries only tensors (or values of types not known):
 * a target's loops carry tensors; a Loop carrying a sequence or an
 * optional is left to the shared layer, which unrolls it when its trip
 * count is known (each step's sequence then has a known length). */
int lw_loop_carries_tensors(const o2m_node *n);
/* The most static type both a and b cast to (dims that differ dynamic);
 * a when b is null; null when ranks or element types differ. */
MlirType lw_join_types(MlirType a, MlirType b);
/* Whether a tensor.cast between a and b can verify. */
int lw_cast_compatible(MlirType a, MlirType b);
/* Lowers g into cx->block with its inputs bound to args (cast to the
 * inputs' inferred types); yields[i] receives output i. */
o2m_status lw_lower_subgraph(lw_ctx *cx, const o2m_graph *g, int n_args, const MlirValue *args,
                             MlirValue *yields);
void lw_destroy_blocks(int n, MlirBlock *blocks);
/* If: a known condition lowers the branch taken inline; otherwise both
 * branches are built into the two regions of `if_op`, ended by
 * `yield_op`, its condition operand made from input 0 by `condition`. */
o2m_status lw_lower_if_with(lw_ctx *cx, const char *if_op, const char *yield_op,
                            MlirValue (*condition)(lw_ctx *cx, MlirValue cond));

/* If branches that cannot be built (kit_regions.c): an If whose condition
 * is unknown until run time compiles such a branch to a call of
 * O2M_BRANCH_FAILED_FN (emit.h), then yields placeholder zeros.
 * lw_finish_branch_failures adds the module's O2M_BRANCH_FAILURES_ATTR
 * and the function's declaration. */
typedef o2m_status (*lw_branch_builder)(lw_ctx *cx, const o2m_graph *g, MlirBlock block,
                                        MlirValue *yields, void *user);
/* Builds an If branch whose condition is unknown until run time into
 * `block` by build(cx, g, block, yields, user). A branch that cannot be
 * built (marked so by inference, or failing to lower for these shapes) is
 * not an error: *failure receives why and the ops built are erased;
 * NULL otherwise. */
o2m_status lw_try_branch(lw_ctx *cx, const o2m_graph *g, MlirBlock block, MlirValue *yields,
                         const char **failure, lw_branch_builder build, void *user);
/* Appends the failure call to cx->block: at run time it stops the call
 * with "<file>: node '<name>' (<op>, opset <n>): <what>, but it cannot
 * run for these input shapes: <reason>". */
o2m_status lw_failure_call(lw_ctx *cx, const char *what, const char *reason);
/* Fills cx->block with the body of such a branch (the else branch when
 * else_branch is non-zero): the failure call, then zeros typed as the
 * other branch's n yields. */
o2m_status lw_fail_branch(lw_ctx *cx, int else_branch, const char *reason, int n, const MlirValue *other,
                          MlirValue *yields);
void lw_finish_branch_failures(lw_ctx *cx);

/* A region isolated from above (TOSA's cond_if and while_loop bodies): in
 * it, the value map starts empty and constants go to the top of `block`.
 * lw_scope_enter saves the enclosing state into *saved, lw_scope_leave
 * restores it. */
typedef struct lw_scope {
  lw_value_slot *values;
  size_t values_cap, values_count;
  MlirBlock entry, block;
} lw_scope;
void lw_scope_enter(lw_ctx *cx, lw_scope *saved, MlirBlock block);
void lw_scope_leave(lw_ctx *cx, const lw_scope *saved);

/* ---- sequences and optionals, unrolled (kit_sequence.c) ---------------- */
enum { LW_SEQ_MAX = 4096 };
int lw_is_wrapped(const o2m_type *t); /* a sequence or an optional */
/* The unrolled sequence of input i (NULL, with a failure, when unknown). */
const lw_seq *lw_seq_in(lw_ctx *cx, int i);
/* Sets output i to a sequence or optional of n elements. */
o2m_status lw_seq_out(lw_ctx *cx, int i, int present, int n, const MlirValue *elems);
/* Identity, If and OptionalGetElement on sequences and optionals; their
 * tensor forms go to the target's own lowering given. */
o2m_status lw_lower_seq_identity_with(lw_ctx *cx, lw_lower_fn tensor_identity);
o2m_status lw_lower_seq_if_with(lw_ctx *cx, lw_lower_fn tensor_if);
o2m_status lw_lower_optional_get_element_with(lw_ctx *cx, lw_lower_fn tensor_identity);
/* ConcatFromSequence (one concat; new_axis reshapes each element first)
 * and SplitToSequence (a slice per piece, reshaped when keepdims drops
 * the axis) in the target's own shape ops. Static shapes only. */
typedef struct lw_shape_ops {
  MlirValue (*reshape)(struct lw_ctx *cx, MlirValue v, int rank, const int64_t *sizes);
  MlirValue (*concat)(struct lw_ctx *cx, int n, const MlirValue *vs, int axis);
  MlirValue (*slice_axis)(struct lw_ctx *cx, MlirValue v, int axis, int64_t start, int64_t len);
  int allow_empty; /* whether the target has empty tensors (split pieces of 0) */
} lw_shape_ops;
o2m_status lw_lower_concat_from_sequence_with(lw_ctx *cx, const lw_shape_ops *ops);
o2m_status lw_lower_split_to_sequence_with(lw_ctx *cx, const lw_shape_ops *ops);
/* The ops that only move elements: the same on every target. */
o2m_status lw_lower_sequence_construct(lw_ctx *cx);
o2m_status lw_lower_sequence_empty(lw_ctx *cx);
o2m_status lw_lower_sequence_insert(lw_ctx *cx);
o2m_status lw_lower_sequence_erase(lw_ctx *cx);
o2m_status lw_lower_sequence_at(lw_ctx *cx);
o2m_status lw_lower_sequence_length(lw_ctx *cx);
o2m_status lw_lower_sequence_map(lw_ctx *cx);
o2m_status lw_lower_optional(lw_ctx *cx);
o2m_status lw_lower_optional_has_element(lw_ctx *cx);

/* ---- the module ---------------------------------------------------------- */

/* The structure of the runtime values (run/test): see exec/run.h. */
struct o2m_io_value;

/* Rewrites the model to the core form for `target` (its lowering table
 * says which ops it keeps), lists every node it cannot lower (all at
 * once), then builds `func.func @main` (runtime inputs in, graph outputs
 * out, llvm.emit_c_interface) in `mc`, whose dialects it loads, and
 * verifies it. `inputs` (o2m_runtime_input order; NULL when all are
 * tensors): each element of a sequence or optional input is one argument,
 * each of an output one result; `outputs` (may be NULL) receives the
 * structure of every output. for_jit: see lw_ctx. The caller owns *out. */
o2m_status lw_emit_module(const lw_target *target, o2m_model *model, MlirContext mc,
                          int for_jit, const struct o2m_io_value *inputs,
                          struct o2m_io_value *outputs, MlirModule *out, o2m_diag *diag);
/* Its first steps alone: the rewrite and the list of nodes it cannot
 * lower (the model as lw_emit_module would emit it for for_jit, nothing
 * built). */
o2m_status lw_prepare_model(const lw_target *target, o2m_model *model, int for_jit, o2m_diag *diag);
/* Writes a module as text, or as bytecode when `bytecode`. */
void lw_print_module(MlirModule module, int bytecode, FILE *out);

/* Whether a node needs code (some output is not known at import). */
int lw_node_needs_code(const o2m_node *n);

#endif
