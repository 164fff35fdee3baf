/* decompose_kit.h - the shared vocabulary of the normalize_*.c and
 * decompose_*.c rules: one-line builders over the rewriter (transform.h)
 * for the ops rules emit most, reading the replaced node's version, types
 * and attributes, and binding a built value to one of the replaced node's
 * outputs.
 *
 * NULL in, NULL out: a builder returns NULL when one of its value
 * arguments is NULL (an earlier builder failed and filled the diag) or
 * when it fails itself, so a rule chains builders and checks once at the
 * end (xk_bind turns a NULL into the failure status).
 */
#ifndef O2M_DECOMPOSE_KIT_H
#define O2M_DECOMPOSE_KIT_H

#include "transform/transform.h"

/* ---- the replaced node ---------------------------------------------------- */

/* The version of the replaced node's op definition at its opset (the
 * largest since-version <= opset), e.g. 11 for Clip in an opset-12 model. */
int xk_version(o2m_rewriter *rw);

/* Never NULL: a missing value reads as an unknown type. */
const o2m_type *xk_type(const o2m_value *v);
/* The rank of a ranked tensor value, else -1. */
int xk_rank(const o2m_value *v);
o2m_dtype xk_elem(const o2m_value *v);
/* 1 when v is ranked with every size known, its sizes then in dims; 0
 * when not, or when its rank exceeds `room` (nothing is written past it).
 * XK_STATIC_DIMS(v, array) passes an array's length as the room. */
int xk_static_dims_in(const o2m_value *v, int64_t *dims, int room);
#define XK_STATIC_DIMS(v, array) xk_static_dims_in((v), (array), (int)(sizeof(array) / sizeof((array)[0])))
/* Normalises an axis attribute value against rank (negative counts from
 * the back); -1 when out of range. */
int xk_axis(int64_t axis, int rank);

/* The replaced node's attributes without those named in `drop` (a
 * NULL-terminated list), with room for `extra` more after them; *n gets the
 * count kept. NULL when out of memory. */
o2m_attr *xk_attrs_except(o2m_rewriter *rw, const char *const *drop,
                          int extra, int *n);

/* ---- builders: fresh values, NULL in -> NULL out -------------------------- */

/* x of rank `rank` (at most 16) with its channels moved: (N, spatial..., C)
 * -> (N, C, spatial...) when to_first, else back. */
o2m_value *xk_channels(o2m_rewriter *rw, o2m_value *x, int rank, int to_first);

o2m_value *xk_op1(o2m_rewriter *rw, const char *op, o2m_value *x);
o2m_value *xk_op2(o2m_rewriter *rw, const char *op, o2m_value *a,
                  o2m_value *b);
/* A scalar (rank 0) constant of `dtype`. */
o2m_value *xk_scalar(o2m_rewriter *rw, o2m_dtype dtype, double v);
/* A 1-D constant of `dtype` holding v[0..n). */
o2m_value *xk_const_1d(o2m_rewriter *rw, o2m_dtype dtype, const double *v,
                       int n);
/* A constant of `dtype` and dims[0..rank) holding v (row-major). */
o2m_value *xk_const_nd(o2m_rewriter *rw, o2m_dtype dtype, int rank, const int64_t *dims,
                       const double *v);
/* A scalar of x's element type. */
o2m_value *xk_scalar_like(o2m_rewriter *rw, const o2m_value *x, double v);
/* Where(cond, a, b). */
o2m_value *xk_where(o2m_rewriter *rw, o2m_value *cond, o2m_value *a,
                    o2m_value *b);
/* Dim k of x (negative counts from the back) as an int64 scalar. */
o2m_value *xk_dim(o2m_rewriter *rw, o2m_value *x, int64_t k);
/* Range(0, n, 1) for an int64 scalar n. */
o2m_value *xk_iota(o2m_rewriter *rw, o2m_value *n);
/* Cast to `dtype`; x itself when it already has it. */
o2m_value *xk_cast(o2m_rewriter *rw, o2m_value *x, o2m_dtype dtype);
/* Reduce `op` over `axes` (n == 0: every axis) with keepdims. */
o2m_value *xk_reduce(o2m_rewriter *rw, const char *op, o2m_value *x,
                     const int64_t *axes, int n, int keepdims);
o2m_value *xk_reshape(o2m_rewriter *rw, o2m_value *x, const int64_t *shape,
                      int n);
o2m_value *xk_transpose(o2m_rewriter *rw, o2m_value *x, const int64_t *perm,
                        int n);
/* x[start:end] along axis. */
o2m_value *xk_slice(o2m_rewriter *rw, o2m_value *x, int64_t axis, int64_t start, int64_t end);
o2m_value *xk_unsqueeze(o2m_rewriter *rw, o2m_value *x, const int64_t *axes,
                        int n);
o2m_value *xk_squeeze(o2m_rewriter *rw, o2m_value *x, const int64_t *axes,
                      int n);
/* A per-channel vector (1-D, or a scalar) made to broadcast along `axis`
 * of a rank-`rank` tensor: reshaped to [-1, 1, ..., 1] with rank-axis-1
 * ones; returned as it is when no reshape is needed. */
o2m_value *xk_along_axis(o2m_rewriter *rw, o2m_value *v, int axis, int rank);
/* ---- subgraphs ---------------------------------------------------------------- */

/* Non-zero when g's nodes can be copied into the graph being rewritten:
 * default-domain nodes without subgraphs of their own, no sparse
 * initializers. */
int xk_inlinable(const o2m_graph *g);
/* Copies g's nodes into the graph being rewritten, g's inputs that are not
 * initializers bound to args[0..n_args) in order (values of enclosing
 * graphs are themselves, initializers become Constants); outs receives
 * g's outputs. */
o2m_status xk_inline(o2m_rewriter *rw, const o2m_graph *g, int n_args, o2m_value *const *args,
                     o2m_value **outs);

/* ---- finishing -------------------------------------------------------------- */

/* Makes v the value of the replaced node's output k (nothing when that
 * output is unused): the node that made v produces the output instead when
 * v is fresh and unused (v is then dropped: bind it to one output only),
 * else an Identity does. Returns the failure status of the diag when v is
 * NULL. */
o2m_status xk_bind(o2m_rewriter *rw, int k, o2m_value *v);
/* The status to return after a builder gave NULL. */
o2m_status xk_failed(o2m_rewriter *rw);

/* ---- shared by two decompositions ------------------------------------------ */

/* A training-mode Dropout of known ratio with a seed, its mask drawn at
 * import (decompose_random.c, called by decompose_dropout.c). */
o2m_status o2m_decompose_seeded_dropout(o2m_rewriter *rw, double ratio);

#endif
