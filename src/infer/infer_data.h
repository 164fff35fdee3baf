/* infer_data.h - helpers shared by the shape, index, control and sequence
 * families (infer_shape.c, infer_index.c, infer_control.c,
 * infer_sequence.c): shape values, element-moving data propagation, dim
 * products and the merging of types that meet (If branches, sequence
 * elements, loop-carried values).
 *
 * Shape values: a small integer value (typically from Shape) whose
 * elements are each either a known integer or a symbolic dim. They live in
 * o2m_value.shape_value; an element is known iff its `sym` is NULL, and
 * then `size` is the integer, of any sign (Reshape targets hold -1). A
 * value whose elements are all known is recorded as an ordinary known
 * tensor instead, so every family can read it with o2m_in_known.
 */
#ifndef O2M_INFER_DATA_H
#define O2M_INFER_DATA_H

#include "infer/infer.h"

/* ---- shape values ------------------------------------------------------ */

/* Reads input i element by element, in row-major order: from its known
 * integer value, or its recorded shape value, or, when `fill_unknown`, from
 * an integer type of known small element count with a fresh symbol per
 * element. Returns the element count (*entries in the arena), or -1. */
int o2m_shape_value_in(o2m_infer_ctx *ctx, int i, int fill_unknown,
                       const o2m_dim **entries);

/* Records `entries` (n of them, copied) as the value of output i, whose
 * tensor type (integer dtype, n elements) must already be set: as a known
 * tensor when every entry is known, else as the output's shape value. */
void o2m_shape_value_out(o2m_infer_ctx *ctx, int i, const o2m_dim *entries,
                         int n);

/* Non-zero when the entry is a known integer. */
static inline int o2m_entry_known(o2m_dim d) { return d.sym == NULL; }

/* ---- element-moving data propagation ----------------------------------- */

/* For an op whose every output element is a copy of one input element
 * (Gather, Slice, Concat, Transpose, Tile, Expand, ...): returns the
 * linear index into input *input of the element at output coordinate
 * `out_index`, or -1 when that element is not a copy of an input element. */
typedef int64_t (*o2m_elem_source_fn)(const void *state,
                                      const int64_t *out_index, int *input);

/* Computes output `out`'s value when its type is a tensor with every dim
 * known and at most O2M_KNOWN_MAX elements, and every element it copies is
 * known (a known tensor) or tracked (a shape value). Silently does nothing
 * otherwise. The output type must be set first. */
void o2m_propagate_elements(o2m_infer_ctx *ctx, int out, const void *state,
                            o2m_elem_source_fn source);

/* The row-major linear index of `index` in a tensor of `dims`. */
int64_t o2m_linear_index(const int64_t *index, const int64_t *dims, int rank);

/* Copies the dims of a ranked tensor type into `sizes` (rank entries);
 * returns 0 when the type is not a ranked tensor or a dim is symbolic. */
int o2m_type_known_dims(const o2m_type *t, int64_t *sizes);

/* The same value, re-shaped: output `out` gets input `in`'s known tensor
 * (a new header over the same data, with the output's dims) or shape
 * value. For Identity, Reshape, Flatten, Squeeze, Unsqueeze. */
void o2m_propagate_same(o2m_infer_ctx *ctx, int in, int out);

/* For an input that should be a tensor but is not: O2M_OK (the outputs
 * stay unknown) when its type is unknown, an error for any other kind. */
o2m_status o2m_input_not_tensor(o2m_infer_ctx *ctx, int i);

/* An integer list that an op takes as attribute `attr` before opset
 * `input_since` and as input `input` from then on (Squeeze axes, Slice
 * starts, Pad pads, ...). Returns the count with *values in the arena,
 * O2M_INTS_ABSENT when not given, O2M_INTS_UNKNOWN when given as an input
 * whose value is not known. */
enum { O2M_INTS_ABSENT = -1, O2M_INTS_UNKNOWN = -2 };
int64_t o2m_ints_operand(o2m_infer_ctx *ctx, const char *attr, int input,
                         int input_since, const int64_t **values);

/* Records an allocation failure in the diagnostic; returns O2M_ERR_NOMEM. */
o2m_status o2m_out_of_memory(o2m_infer_ctx *ctx);

/* ---- dims -------------------------------------------------------------- */

/* The product of n dims: known when all are known (or one is 0), the one
 * symbol when every other dim is 1, else a fresh symbol. */
o2m_dim o2m_dims_product(o2m_infer_ctx *ctx, const o2m_dim *dims, int n);

/* ---- merging types (src/infer/infer_control.c) ------------------------- */

/* The most precise type that covers both a and b: kinds and element types
 * must agree (a kind UNKNOWN side yields the other side with its shapes
 * dropped); equal dims stay, differing dims become fresh symbols, differing
 * ranks give an unranked tensor. Sequence and optional element types merge
 * recursively. `what` names the pair for the error message. */
o2m_status o2m_type_merge(o2m_infer_ctx *ctx, const o2m_type *a,
                          const o2m_type *b, const char *what,
                          o2m_type **out);

#endif
