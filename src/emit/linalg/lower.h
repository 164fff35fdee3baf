/* lower.h - the Linalg emitter's toolkit: what every per-op lowering
 * (src/emit/linalg/lower_<family>.c) is written in, on top of the kit
 * that all emitters share (src/emit/kit/kit.h: context, values, ops,
 * constants, the module builder).
 *
 * Owns: linalg.generic with a body built by a callback, linalg named ops,
 * scf.for loops carrying values, and the per-op lowering table
 * (lower_rules.def). Every lowering handles the O2M_CORE_OPSET semantics
 * of its op.
 */
#ifndef O2M_LOWER_H
#define O2M_LOWER_H

#include "emit/kit/kit.h"

/* tensor.empty + linalg.fill with a scalar. */
MlirValue lw_filled(lw_ctx *cx, MlirType type, const MlirValue *dims,
                    MlirValue scalar);

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

/* ---- calls of the executor's kernels (the JIT only) ---- */
/* Declares `func.func private @fn` of `signature` ("(types) -> ()") with
 * llvm.emit_c_interface in the module once: an executor kernel the JIT's
 * code calls (lower_dnnl.c, lower_topk.c, lower_detect.c). */
void lw_declare_kernel(lw_ctx *cx, const char *fn, const char *signature);
/* The tensor as a read-only buffer (any strides), cast to `kernel_type`,
 * the text of the memref type the kernel takes. */
MlirValue lw_kernel_operand(lw_ctx *cx, MlirValue tensor, const char *kernel_type);
/* The same for a kernel that reads the buffer at any address (not aligned
 * to its element): a weight only such kernels read is passed where the
 * model holds it (emit.h, O2M_WEIGHT_ANY_ALIGN_ATTR). */
MlirValue lw_kernel_operand_any_align(lw_ctx *cx, MlirValue tensor, const char *kernel_type);
/* Calls kernel `callee` (declared with `signature`) on args [n] and makes
 * the buffer y it writes the node's output 0, of tensor type y_type;
 * `what` (the op) names it in the internal errors. */
o2m_status lw_call_kernel_for_out(lw_ctx *cx, const char *callee, const char *signature, int n, const MlirValue *args,
                                  MlirValue y, MlirType y_type, const char *what);
/* A new buffer of `sizes` (MLIR's dynamic size where dims[d] gives the
 * size; dims may be NULL when all are static) for a kernel to write. */
MlirValue lw_kernel_result(lw_ctx *cx, MlirType elem, int rank, const int64_t *sizes, const MlirValue *dims);
/* A kernel's window attribute: out[0..n) = the ints `name` holds, or dflt
 * each when it is absent; 0 when it holds other than n. */
int lw_attr_ints_or(lw_ctx *cx, const char *name, int n, int64_t dflt, int64_t *out);

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

/* ---- the lowering table ------------------------------------------------- */
#define LOWER(op, fn) o2m_status fn(lw_ctx *cx);
#include "emit/linalg/lower_rules.def"
#undef LOWER
/* com.microsoft NhwcFusedConv and NhwcMaxPool for the JIT (O2M_JIT_DNNL;
 * lower_dnnl.c). */
o2m_status lw_lower_dnnl_conv(lw_ctx *cx);
/* The JIT's quantized kernels (lower_quant.c, O2M_JIT_QUANT): whether the
 * transform layer leaves node n as written for them, and MatMulNBits. */
int lw_jit_keeps_quant(int for_jit, const o2m_node *n);
o2m_status lw_lower_matmul_nbits(lw_ctx *cx);
o2m_status lw_lower_qlinear_conv(lw_ctx *cx);
o2m_status lw_lower_matmul_integer(lw_ctx *cx);
o2m_status lw_lower_conv_integer(lw_ctx *cx);
o2m_status lw_lower_dynamic_quantize(lw_ctx *cx);
o2m_status lw_lower_dnnl_max_pool(lw_ctx *cx);
/* A float32 Conv of 1 or 3 spatial dims or ConvTranspose (transposed)
 * of 1 to 3 with static shapes and constant weights as a call of oneDNN's
 * (O2M_JIT_DNNL; lower_dnnl.c): sets the node's output and *done, else
 * leaves both (*done 0). x is the unpadded input, `win` its window
 * (lw_window_read or lw_window_read_transposed). */
struct lw_window;
o2m_status lw_dnnl_conv_nd(lw_ctx *cx, const struct lw_window *win, int64_t groups, int transposed, MlirValue x,
                           MlirValue w, MlirValue b, int *done);

/* o2m_emit_linalg_module for a run on `inputs` (o2m_runtime_input
 * order; may be NULL when all are tensors): each element of a sequence or
 * optional input is one argument, each of an output one result, in order;
 * `outputs` (the graph's output count, may be NULL when all are tensors)
 * receives the structure of every output (kind, presence, count; no
 * tensors). */
struct o2m_io_value;
/* A float32 product for BLAS (emit.h, O2M_JIT_SGEMM): init + a [M, K] b
 * [K, N] (rank 2; b_transposed: b is [N, K], read transposed) or a [B, M,
 * K] b [B, K, N] (rank 3), static shapes, as linalg.matmul or
 * linalg.batch_matmul, which the executor turns into BLAS calls once on
 * buffers (exec_blas.c). A null init starts from zeros. (Upstream's
 * linalg-fuse-elementwise-ops would generalize these into generics, fusing
 * reshapes and producers in, so the JIT's pipeline does not run it.) */
MlirValue lw_blas_product(lw_ctx *cx, MlirValue a, MlirValue b, int b_transposed, MlirValue init);

/* The rewrite o2m_emit_linalg_module_io starts with, alone (for code
 * loaded from the cache: the weights it computes are the arguments'). */
o2m_status o2m_linalg_prepare(o2m_model *model, int for_jit, o2m_diag *diag);
o2m_status o2m_emit_linalg_module_io(o2m_model *model, MlirContext mc, int for_jit,
                                     const struct o2m_io_value *inputs, struct o2m_io_value *outputs,
                                     MlirModule *out, o2m_diag *diag);

/* The lowering of a default-domain op, or NULL. */
lw_lower_fn lw_lowering_for(const char *domain, const char *op_type);

#endif
