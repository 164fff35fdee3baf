/* lower_unpool.c - Linalg lowering of MaxUnpool (row in lower_nn.def),
 * opsets 9, 11 and 22, as ONNX's reference implementation
 * (onnx/reference/ops/op_max_unpool.py) defines it: the indices count
 * elements of the whole tensor of the inferred unpooled shape
 * (N, C, (D - 1) * stride - pads + kernel); every X element is written at
 * its index there, and that tensor is placed at the origin of a zero
 * output of output_shape (when given; the inferred shape otherwise).
 *
 * An scf.for nest over X's elements carries the output (tensor.insert);
 * later writes win. Indices are clamped into the inferred tensor, and a
 * position outside the output (output_shape smaller than inferred) keeps
 * the value there.
 */
#include "emit/linalg/lower.h"
#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"

enum { UNPOOL_MAX_RANK = 8 };

typedef struct unpool_plan {
  MlirValue x, ind;
  o2m_dtype idt;
  int r, level;
  lw_ix x_dims[UNPOOL_MAX_RANK], inf[UNPOOL_MAX_RANK], out[UNPOOL_MAX_RANK], total;
  MlirValue ivs[UNPOOL_MAX_RANK];
} unpool_plan;

static o2m_status unpool_write(lw_ctx *cx, const unpool_plan *p, MlirValue acc, MlirValue *next) {
  lw_ix flat = lw_ix_v(lw_scalar_to_index(cx, lw_extract(cx, p->ind, p->ivs), p->idt));
  flat = lw_ix_clamp(cx, flat, lw_ix_c(0), lw_ix_bin(cx, LW_IX_SUB, p->total, lw_ix_c(1)));
  MlirValue at[UNPOOL_MAX_RANK];
  lw_ix inside = lw_ix_c(1);
  for (int k = p->r - 1; k >= 0; k--) {
    lw_ix coord = k == 0 ? flat : lw_ix_bin(cx, LW_IX_REM, flat, p->inf[k]);
    if (k) flat = lw_ix_bin(cx, LW_IX_FLOORDIV, flat, p->inf[k]);
    int fits = lw_ix_is_const(p->inf[k]) && lw_ix_is_const(p->out[k]) && p->inf[k].c <= p->out[k].c;
    if (!fits) {
      lw_ix last = lw_ix_bin(cx, LW_IX_SUB, p->out[k], lw_ix_c(1));
      lw_ix ok = lw_ix_bin(cx, LW_IX_LE, coord, last);
      inside = lw_ix_is_const(inside) ? ok : lw_ix_bin(cx, LW_IX_AND, inside, ok);
      coord = lw_ix_bin(cx, LW_IX_MIN, coord, last);
    }
    at[k] = lw_ix_value(cx, coord);
  }
  MlirValue v = lw_extract(cx, p->x, p->ivs);
  if (!lw_ix_is_const(inside)) v = lw_select(cx, inside.v, v, lw_extract(cx, acc, at));
  MlirValue ops[2 + UNPOOL_MAX_RANK] = {v, acc};
  for (int k = 0; k < p->r; k++) ops[2 + k] = at[k];
  *next = lw_op1(cx, "tensor.insert", 2 + p->r, ops, mlirValueGetType(acc), NULL);
  return lw_value_status(cx, *next);
}

static o2m_status unpool_body(lw_ctx *cx, MlirValue iv, const MlirValue *carried, MlirValue *next,
                              void *user) {
  unpool_plan *p = user;
  p->ivs[p->level++] = iv;
  o2m_status s = p->level < p->r ? lw_for(cx, lw_const_index(cx, 0),
                                          lw_ix_value(cx, p->x_dims[p->level]), 1, carried,
                                          unpool_body, p, next)
                                 : unpool_write(cx, p, carried[0], next);
  p->level--;
  return s;
}

o2m_status lw_lower_max_unpool(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  unpool_plan p = {.x = in[0], .ind = in[1], .idt = lw_in_type(cx, 1)->elem, .r = lw_rank(in[0])};
  if (p.r < 3 || p.r > UNPOOL_MAX_RANK || lw_rank(in[1]) != p.r)
    return lw_unsupported(cx, "X and I must share a rank in 3..%d", UNPOOL_MAX_RANK);
  int n = p.r - 2;
  const int64_t *kernel, *pads, *strides;
  int nk = lw_attr_ints(cx, "kernel_shape", &kernel);
  int np = lw_attr_ints(cx, "pads", &pads), ns = lw_attr_ints(cx, "strides", &strides);
  if (nk != n || (np >= 0 && np != 2 * n) || (ns >= 0 && ns != n))
    return lw_error(cx, "kernel_shape, pads or strides do not fit %d spatial axes", n);
  p.total = lw_ix_c(1);
  for (int k = 0; k < p.r; k++) {
    p.x_dims[k] = lw_ix_dim(cx, in[0], k);
    if (k < 2) {
      p.inf[k] = p.x_dims[k];
    } else {
      int i = k - 2;
      int64_t stride = ns >= 0 ? strides[i] : 1, pad = np >= 0 ? pads[i] + pads[i + n] : 0;
      p.inf[k] = lw_ix_bin(
          cx, LW_IX_ADD,
          lw_ix_bin(cx, LW_IX_MUL, lw_ix_bin(cx, LW_IX_SUB, p.x_dims[k], lw_ix_c(1)),
                    lw_ix_c(stride)),
          lw_ix_c(kernel[i] - pad));
    }
    p.total = lw_ix_bin(cx, LW_IX_MUL, p.total, p.inf[k]);
    p.out[k] = p.inf[k];
  }
  if (lw_in_present(cx, 2)) {
    lw_ix *shape;
    if (lw_in_ixs(cx, 2, &shape) != p.r)
      return lw_unsupported(cx, "output_shape is not a 1-D tensor of %d values", p.r);
    for (int k = 0; k < p.r; k++) p.out[k] = shape[k];
  }
  MlirType type = lw_out_type_with(cx, 0, p.r, p.out);
  if (mlirTypeIsNull(type)) return lw_unsupported(cx, "the output type is not known");
  MlirValue dims[UNPOOL_MAX_RANK];
  for (int k = 0; k < p.r; k++)
    dims[k] = lw_ix_is_const(p.out[k]) ? (MlirValue){NULL} : lw_ix_value(cx, p.out[k]);
  MlirValue zero = lw_const_scalar(cx, lw_in_type(cx, 0)->elem, 0.0);
  MlirValue init = lw_filled(cx, type, dims, zero), result;
  s = lw_for(cx, lw_const_index(cx, 0), lw_ix_value(cx, p.x_dims[0]), 1, &init, unpool_body, &p,
             &result);
  return s ? s : lw_set_out(cx, 0, result);
}
