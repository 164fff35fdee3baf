/* lower_detect.c - Linalg lowerings of the detection ops (rows in
 * lower_nn.def): NonMaxSuppression (opsets 10, 11) and RoiAlign (opsets
 * 10, 16, 22).
 *
 * Semantics and order of operations follow ONNX's reference implementation
 * (onnx/reference/ops/op_non_max_suppression.py, op_roi_align.py):
 * - NonMaxSuppression: scf.for over batches and classes carrying a result
 *   buffer [B * C * S + 1, 3] (the upper bound plus a scratch row) and the
 *   count; per class, an scf.while steps until no candidate is left or
 *   the class holds max_output_boxes_per_class boxes: each step picks the
 *   best unvisited candidate (highest score, lowest index on ties; score >
 *   score_threshold when given) by a scan, tests it against the boxes
 *   already selected for the class (IoU > iou_threshold suppresses), and
 *   writes it at the count, which only advances for a kept box. The
 *   output is the counted rows (tensor.extract_slice).
 * - RoiAlign: one linalg.generic over the output [R, C, OH, OW] whose body
 *   runs scf.for loops over the sampling grid of its ROI (sampling_ratio,
 *   or adaptive ceil(roi / out), known at run time only); each sample is
 *   the reference's bilinear "pre-calc" (a sample outside [-1, size]
 *   contributes zero weights at position 0). avg sums w * x over the four
 *   taps and divides by the grid count; max takes, per sample, the max of
 *   the four w * x products, then the max over samples (0 for an empty
 *   grid), as the reference does.
 * Arithmetic is in f32 (f64 for double inputs).
 */
#include <math.h>
#include <string.h>

#include "emit/emit.h"
#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_shape.h"

/* ---- scalar helpers ----------------------------------------------------------- */

static MlirValue op2(lw_ctx *cx, const char *name, MlirValue a, MlirValue b) {
  MlirValue ab[2] = {a, b};
  return lw_op1(cx, name, 2, ab, mlirValueGetType(a), NULL);
}

static MlirValue op1(lw_ctx *cx, const char *name, MlirValue a, MlirType t) {
  return lw_op1(cx, name, 1, &a, t, NULL);
}

static MlirValue i1(lw_ctx *cx, int v) { return lw_const_int(cx, lw_type(cx, "i1"), v); }
static MlirValue i64c(lw_ctx *cx, int64_t v) { return lw_const_int(cx, lw_type(cx, "i64"), v); }
static MlirValue to_index(lw_ctx *cx, MlirValue i) {
  return op1(cx, "arith.index_cast", i, lw_index_type(cx));
}
static MlirValue to_i64(lw_ctx *cx, MlirValue ix) {
  return op1(cx, "arith.index_cast", ix, lw_type(cx, "i64"));
}

static MlirValue tensor_insert(lw_ctx *cx, MlirValue scalar, MlirValue dest, int n,
                               const MlirValue *idx) {
  MlirValue ops[2 + 4] = {scalar, dest};
  for (int k = 0; k < n; k++) ops[2 + k] = idx[k];
  return lw_op1(cx, "tensor.insert", 2 + n, ops, mlirValueGetType(dest), NULL);
}

/* Input i is given and not an empty tensor. */
static int given(lw_ctx *cx, int i) {
  if (!lw_in_present(cx, i)) return 0;
  const o2m_type *t = lw_in_type(cx, i);
  if (t && t->kind == O2M_TYPE_TENSOR)
    for (int k = 0; k < t->rank; k++)
      if (t->dims[k].size == 0) return 0;
  return 1;
}

/* ---- NonMaxSuppression ------------------------------------------------------------ */

typedef struct nms_plan {
  MlirValue boxes, scores, max_out, iou, thr; /* thr: null = no score filter */
  o2m_dtype ft;
  int center;
  lw_ix n_batch, n_class, n_box;
  MlirValue b, c, class_start, result, used, best; /* of the loops being built */
} nms_plan;

/* The reference's suppress_by_iou for boxes i and j of batch p->b (i1). */
static MlirValue nms_suppress(lw_ctx *cx, const nms_plan *p, MlirValue i, MlirValue j) {
  MlirValue a[4], b[4];
  for (int k = 0; k < 4; k++) {
    MlirValue at[3] = {p->b, i, lw_const_index(cx, k)};
    a[k] = lw_extract(cx, p->boxes, at);
    at[1] = j;
    b[k] = lw_extract(cx, p->boxes, at);
  }
  MlirValue x1lo, x1hi, y1lo, y1hi, x2lo, x2hi, y2lo, y2hi;
  if (!p->center) {
    x1lo = op2(cx, "arith.minimumf", a[1], a[3]), x1hi = op2(cx, "arith.maximumf", a[1], a[3]);
    x2lo = op2(cx, "arith.minimumf", b[1], b[3]), x2hi = op2(cx, "arith.maximumf", b[1], b[3]);
    y1lo = op2(cx, "arith.minimumf", a[0], a[2]), y1hi = op2(cx, "arith.maximumf", a[0], a[2]);
    y2lo = op2(cx, "arith.minimumf", b[0], b[2]), y2hi = op2(cx, "arith.maximumf", b[0], b[2]);
  } else {
    MlirValue two = lw_const_scalar(cx, p->ft, 2.0);
    MlirValue w1 = op2(cx, "arith.divf", a[2], two), h1 = op2(cx, "arith.divf", a[3], two);
    MlirValue w2 = op2(cx, "arith.divf", b[2], two), h2 = op2(cx, "arith.divf", b[3], two);
    x1lo = op2(cx, "arith.subf", a[0], w1), x1hi = op2(cx, "arith.addf", a[0], w1);
    x2lo = op2(cx, "arith.subf", b[0], w2), x2hi = op2(cx, "arith.addf", b[0], w2);
    y1lo = op2(cx, "arith.subf", a[1], h1), y1hi = op2(cx, "arith.addf", a[1], h1);
    y2lo = op2(cx, "arith.subf", b[1], h2), y2hi = op2(cx, "arith.addf", b[1], h2);
  }
  MlirValue ixlo = op2(cx, "arith.maximumf", x1lo, x2lo), ixhi = op2(cx, "arith.minimumf", x1hi, x2hi);
  MlirValue iylo = op2(cx, "arith.maximumf", y1lo, y2lo), iyhi = op2(cx, "arith.minimumf", y1hi, y2hi);
  MlirValue zero = lw_const_scalar(cx, p->ft, 0.0);
  MlirValue inter = op2(cx, "arith.mulf", op2(cx, "arith.subf", ixhi, ixlo),
                        op2(cx, "arith.subf", iyhi, iylo));
  MlirValue area1 = op2(cx, "arith.mulf", op2(cx, "arith.subf", x1hi, x1lo),
                        op2(cx, "arith.subf", y1hi, y1lo));
  MlirValue area2 = op2(cx, "arith.mulf", op2(cx, "arith.subf", x2hi, x2lo),
                        op2(cx, "arith.subf", y2hi, y2lo));
  MlirValue uni = op2(cx, "arith.subf", op2(cx, "arith.addf", area1, area2), inter);
  MlirValue conds[7] = {
      lw_cmpf(cx, LW_F_OGT, ixhi, ixlo),  lw_cmpf(cx, LW_F_OGT, iyhi, iylo),
      lw_cmpf(cx, LW_F_OGT, inter, zero), lw_cmpf(cx, LW_F_OGT, area1, zero),
      lw_cmpf(cx, LW_F_OGT, area2, zero), lw_cmpf(cx, LW_F_OGT, uni, zero),
      lw_cmpf(cx, LW_F_OGT, op2(cx, "arith.divf", inter, uni), p->iou)};
  MlirValue all = conds[0];
  for (int k = 1; k < 7; k++) all = op2(cx, "arith.andi", all, conds[k]);
  return all;
}

/* Scan step i: (best, best score, found) -> the better of it and box i. */
static o2m_status nms_argmax_body(lw_ctx *cx, MlirValue i, const MlirValue *carried,
                                  MlirValue *next, void *user) {
  const nms_plan *p = user;
  MlirValue at[3] = {p->b, p->c, i}, used_at[1] = {i};
  MlirValue s = lw_extract(cx, p->scores, at);
  MlirValue used = lw_extract(cx, p->used, used_at);
  MlirValue cand = op2(cx, "arith.xori", used, i1(cx, 1));
  if (!mlirValueIsNull(p->thr)) cand = op2(cx, "arith.andi", cand, lw_cmpf(cx, LW_F_OGT, s, p->thr));
  MlirValue higher = op2(cx, "arith.ori", op2(cx, "arith.xori", carried[2], i1(cx, 1)),
                         lw_cmpf(cx, LW_F_OGT, s, carried[1]));
  MlirValue better = op2(cx, "arith.andi", cand, higher);
  next[0] = lw_select(cx, better, i, carried[0]);
  next[1] = lw_select(cx, better, s, carried[1]);
  next[2] = op2(cx, "arith.ori", carried[2], cand);
  return O2M_OK;
}

/* Selected row j of the class: suppressed |= IoU(best, its box) > threshold. */
static o2m_status nms_suppress_body(lw_ctx *cx, MlirValue j, const MlirValue *carried,
                                    MlirValue *next, void *user) {
  const nms_plan *p = user;
  MlirValue at[2] = {j, lw_const_index(cx, 2)};
  MlirValue k = to_index(cx, lw_extract(cx, p->result, at));
  next[0] = op2(cx, "arith.ori", carried[0], nms_suppress(cx, p, p->best, k));
  return O2M_OK;
}

/* One step of a class: (result, count, visited) -> the next ones and
 * whether to go on (a candidate was found and the class has room). */
static o2m_status nms_step(lw_ctx *cx, nms_plan *p, const MlirValue *carried, MlirValue *next) {
  MlirValue result = carried[0], pos = carried[1], used = carried[2];
  MlirValue init[3] = {lw_const_index(cx, 0), lw_const_scalar(cx, p->ft, 0.0), i1(cx, 0)}, best[3];
  p->used = used;
  o2m_status s = lw_for(cx, lw_const_index(cx, 0), lw_ix_value(cx, p->n_box), 3, init,
                        nms_argmax_body, p, best);
  if (s) return s;
  p->best = best[0];
  p->result = result;
  MlirValue supp, no = i1(cx, 0);
  if ((s = lw_for(cx, p->class_start, pos, 1, &no, nms_suppress_body, p, &supp))) return s;
  MlirValue nsel = lw_ix_value(cx, lw_ix_bin(cx, LW_IX_SUB, lw_ix_v(pos), lw_ix_v(p->class_start)));
  MlirValue room = lw_cmpi(cx, LW_I_SLT, nsel, p->max_out);
  MlirValue keep = op2(cx, "arith.andi", op2(cx, "arith.andi", best[2], room),
                       op2(cx, "arith.xori", supp, i1(cx, 1)));
  MlirValue bi = best[0];
  next[2] = tensor_insert(cx, i1(cx, 1), used, 1, &bi);
  MlirValue row[3] = {to_i64(cx, p->b), to_i64(cx, p->c), to_i64(cx, bi)};
  for (int k = 0; k < 3; k++) {
    MlirValue at[2] = {pos, lw_const_index(cx, k)};
    result = tensor_insert(cx, row[k], result, 2, at);
  }
  next[0] = result;
  next[1] = lw_select(cx, keep, op2(cx, "arith.addi", pos, lw_const_index(cx, 1)), pos);
  MlirValue more = lw_cmpi(cx, LW_I_SLT, op2(cx, "arith.addi", nsel, lw_const_index(cx, 1)),
                           p->max_out);
  next[3] = op2(cx, "arith.andi", best[2], lw_select(cx, keep, more, room));
  return O2M_OK;
}

static o2m_status nms_class_body(lw_ctx *cx, MlirValue c, const MlirValue *carried,
                                 MlirValue *next, void *user) {
  nms_plan *p = user;
  p->c = c;
  p->class_start = carried[1];
  int64_t size = lw_ix_is_const(p->n_box) ? p->n_box.c : -1;
  MlirValue dim = lw_ix_value(cx, p->n_box);
  MlirValue used =
      lw_filled(cx, lw_tensor_type_of(cx, O2M_DT_BOOL, 1, &size), &dim, i1(cx, 0));
  /* scf.while (result, count, visited, go): steps while go */
  MlirValue init[4] = {carried[0], carried[1], used,
                       lw_cmpi(cx, LW_I_SGT, p->max_out, lw_const_index(cx, 0))};
  MlirType types[4];
  MlirLocation locs[4];
  for (int k = 0; k < 4; k++) types[k] = mlirValueGetType(init[k]), locs[k] = cx->loc;
  MlirOperation op = lw_op(cx, "scf.while", 4, init, 4, types, NULL, 2);
  if (mlirOperationIsNull(op)) return lw_error(cx, "internal: cannot create scf.while");
  MlirBlock blocks[2] = {mlirBlockCreate(4, types, locs), mlirBlockCreate(4, types, locs)};
  for (int b = 0; b < 2; b++) mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, b), blocks[b]);
  MlirBlock saved = cx->block;
  MlirValue args[5], out[4];
  cx->block = blocks[0];
  args[0] = mlirBlockGetArgument(blocks[0], 3);
  for (int k = 0; k < 4; k++) args[1 + k] = mlirBlockGetArgument(blocks[0], k);
  lw_op(cx, "scf.condition", 5, args, 0, NULL, NULL, 0);
  cx->block = blocks[1];
  for (int k = 0; k < 4; k++) args[k] = mlirBlockGetArgument(blocks[1], k);
  o2m_status s = nms_step(cx, p, args, out);
  if (!s) lw_op(cx, "scf.yield", 4, out, 0, NULL, NULL, 0);
  cx->block = saved;
  next[0] = mlirOperationGetResult(op, 0), next[1] = mlirOperationGetResult(op, 1);
  return s;
}

static o2m_status nms_batch_body(lw_ctx *cx, MlirValue b, const MlirValue *carried,
                                 MlirValue *next, void *user) {
  nms_plan *p = user;
  p->b = b;
  return lw_for(cx, lw_const_index(cx, 0), lw_ix_value(cx, p->n_class), 2, carried,
                nms_class_body, p, next);
}

/* The JIT's kernel (emit.h, O2M_NMS_CALL): one call on buffers. */
static o2m_status nms_call(lw_ctx *cx, const nms_plan *p, lw_ix rows, const int64_t *sizes) {
  MlirType i64 = lw_type(cx, "i64");
  MlirValue n_rows = lw_ix_value(cx, rows);
  /* sizes: lw_tensor_type_of's convention (-1 dynamic); the buffer takes MLIR's own */
  int64_t shape[2] = {sizes[0] < 0 ? mlirShapedTypeGetDynamicSize() : sizes[0], sizes[1]};
  MlirValue out = lw_kernel_result(cx, i64, 2, shape, (MlirValue[]){n_rows, {NULL}});
  MlirValue args[8] = {lw_kernel_operand(cx, p->boxes, "memref<*xf32>"), lw_kernel_operand(cx, p->scores, "memref<*xf32>"),
                       mlirValueIsNull(out) ? out : lw_op1(cx, "memref.cast", 1, &out, lw_type(cx, "memref<*xi64>"), NULL),
                       to_i64(cx, p->max_out), p->iou,
                       mlirValueIsNull(p->thr) ? lw_const_scalar(cx, O2M_DT_FLOAT, 0) : p->thr,
                       i64c(cx, !mlirValueIsNull(p->thr)), i64c(cx, p->center)};
  for (int i = 0; i < 8; i++)
    if (mlirValueIsNull(args[i])) return lw_error(cx, "internal: cannot pass NonMaxSuppression's operands");
  lw_declare_kernel(cx, O2M_NMS_CALL, "(memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, f32, f32, i64, i64) -> i64");
  MlirOperation call = lw_op(cx, "func.call", 8, args, 1, &i64, "callee = @" O2M_NMS_CALL, 0);
  if (mlirOperationIsNull(call)) return lw_error(cx, "internal: cannot call the NonMaxSuppression kernel");
  MlirValue all = lw_op1(cx, "bufferization.to_tensor", 1, &out,
                         lw_tensor_type_of(cx, O2M_DT_INT64, 2, sizes), "restrict, writable");
  lw_ix offsets[2] = {lw_ix_c(0), lw_ix_c(0)}, count[2] = {lw_ix_v(to_index(cx, mlirOperationGetResult(call, 0))), lw_ix_c(3)};
  return mlirValueIsNull(all) ? lw_error(cx, "internal: cannot take NonMaxSuppression's rows")
                              : lw_set_out(cx, 0, lw_extract_slice(cx, all, offsets, count, NULL));
}

o2m_status lw_lower_nms(lw_ctx *cx) {
  MlirValue in[2];
  o2m_status s = lw_inputs(cx, 2, in);
  if (s) return s;
  nms_plan p = {.boxes = in[0],
                .scores = in[1],
                .ft = lw_in_type(cx, 0)->elem,
                .center = (int)lw_attr_int(cx, "center_point_box", 0)};
  if (lw_rank(in[0]) != 3 || lw_rank(in[1]) != 3)
    return lw_error(cx, "boxes and scores must be 3-D");
  if (!lw_dtype_is_float(p.ft) || lw_in_type(cx, 1)->elem != p.ft)
    return lw_unsupported(cx, "boxes and scores of different or non-float dtypes");
  p.n_batch = lw_ix_dim(cx, in[0], 0);
  p.n_box = lw_ix_dim(cx, in[0], 1);
  p.n_class = lw_ix_dim(cx, in[1], 1);
  if (given(cx, 2)) {
    MlirValue m = lw_in_scalar(cx, 2);
    if (mlirValueIsNull(m)) return lw_unsupported(cx, "max_output_boxes_per_class is not a scalar");
    p.max_out = lw_ix_value(
        cx, lw_ix_bin(cx, LW_IX_MAX, lw_ix_v(lw_scalar_to_index(cx, m, lw_in_type(cx, 2)->elem)),
                      lw_ix_c(0)));
  } else {
    p.max_out = lw_const_index(cx, 0);
  }
  p.iou = given(cx, 3) ? lw_in_scalar(cx, 3) : lw_const_scalar(cx, p.ft, 0.0);
  p.thr = given(cx, 4) ? lw_in_scalar(cx, 4) : (MlirValue){NULL};
  if (mlirValueIsNull(p.iou) || (given(cx, 4) && mlirValueIsNull(p.thr)))
    return lw_unsupported(cx, "a threshold is not a scalar");
  if ((given(cx, 3) && lw_in_type(cx, 3)->elem != p.ft) ||
      (given(cx, 4) && lw_in_type(cx, 4)->elem != p.ft))
    return lw_unsupported(cx, "thresholds of a dtype other than the boxes'");
  lw_ix bound = lw_ix_bin(cx, LW_IX_MUL, lw_ix_bin(cx, LW_IX_MUL, p.n_batch, p.n_class), p.n_box);
  lw_ix dims[2] = {lw_ix_bin(cx, LW_IX_ADD, bound, lw_ix_c(1)), lw_ix_c(3)};
  int64_t sizes[2] = {lw_ix_is_const(dims[0]) ? dims[0].c : -1, 3};
  if ((cx->for_jit & O2M_JIT_KERNELS) && p.ft == O2M_DT_FLOAT) return nms_call(cx, &p, dims[0], sizes);
  MlirValue init[2] = {lw_empty_ix(cx, lw_tensor_type_of(cx, O2M_DT_INT64, 2, sizes), dims),
                       lw_const_index(cx, 0)},
            done[2];
  if ((s = lw_for(cx, lw_const_index(cx, 0), lw_ix_value(cx, p.n_batch), 2, init, nms_batch_body,
                  &p, done)))
    return s;
  lw_ix offsets[2] = {lw_ix_c(0), lw_ix_c(0)}, count[2] = {lw_ix_v(done[1]), lw_ix_c(3)};
  return lw_set_out(cx, 0, lw_extract_slice(cx, done[0], offsets, count, NULL));
}

/* ---- RoiAlign ---------------------------------------------------------------------- */

typedef struct roi_plan {
  MlirValue x, rois, bidx;
  o2m_dtype xdt, rdt, bdt, acc;
  int max_mode, half;
  int64_t oh, ow, sr;
  double scale;
  lw_ix n_img, h, w;
  /* of the element being built */
  MlirValue b, c, hf, wf, hm1, wm1; /* H, W as floats; H - 1, W - 1 as i64 */
  MlirValue base_h, base_w, bin_h, bin_w, gh_f, gw_f, gw, yy;
} roi_plan;

static MlirValue rf(lw_ctx *cx, const roi_plan *p, double v) {
  return lw_const_scalar(cx, p->acc, v);
}

static MlirValue itof(lw_ctx *cx, const roi_plan *p, MlirValue i64v) {
  return op1(cx, "arith.sitofp", i64v, lw_elem_type(cx, p->acc));
}

/* Along one axis: the clamped low/high taps (i64) and the coordinate
 * used for the weights (the reference's y = y_low at the far edge). */
static void roi_axis(lw_ctx *cx, const roi_plan *p, MlirValue v, MlirValue last, MlirValue *lo,
                     MlirValue *hi, MlirValue *frac) {
  v = op2(cx, "arith.maximumf", v, rf(cx, p, 0.0));
  MlirValue low = op1(cx, "arith.fptosi", v, lw_type(cx, "i64"));
  MlirValue edge = lw_cmpi(cx, LW_I_SGE, low, last);
  *lo = lw_select(cx, edge, last, low);
  *hi = lw_select(cx, edge, last, op2(cx, "arith.addi", low, i64c(cx, 1)));
  v = lw_select(cx, edge, itof(cx, p, last), v);
  *frac = op2(cx, "arith.subf", v, itof(cx, p, *lo));
}

/* One sample at (y, x): the sum (avg) or max (max) of w * x over its taps. */
static MlirValue roi_sample(lw_ctx *cx, const roi_plan *p, MlirValue y, MlirValue x) {
  MlirValue m1 = rf(cx, p, -1.0);
  MlirValue outside = op2(
      cx, "arith.ori",
      op2(cx, "arith.ori", lw_cmpf(cx, LW_F_OLT, y, m1), lw_cmpf(cx, LW_F_OGT, y, p->hf)),
      op2(cx, "arith.ori", lw_cmpf(cx, LW_F_OLT, x, m1), lw_cmpf(cx, LW_F_OGT, x, p->wf)));
  MlirValue ylo, yhi, ly, xlo, xhi, lx;
  roi_axis(cx, p, y, p->hm1, &ylo, &yhi, &ly);
  roi_axis(cx, p, x, p->wm1, &xlo, &xhi, &lx);
  MlirValue one = rf(cx, p, 1.0), zero = rf(cx, p, 0.0), z64 = i64c(cx, 0);
  MlirValue hy = op2(cx, "arith.subf", one, ly), hx = op2(cx, "arith.subf", one, lx);
  MlirValue w[4] = {op2(cx, "arith.mulf", hy, hx), op2(cx, "arith.mulf", hy, lx),
                    op2(cx, "arith.mulf", ly, hx), op2(cx, "arith.mulf", ly, lx)};
  MlirValue ys[4] = {ylo, ylo, yhi, yhi}, xs[4] = {xlo, xhi, xlo, xhi}, sum = {NULL};
  for (int k = 0; k < 4; k++) {
    w[k] = lw_select(cx, outside, zero, w[k]);
    MlirValue at[4] = {p->b, p->c, to_index(cx, lw_select(cx, outside, z64, ys[k])),
                       to_index(cx, lw_select(cx, outside, z64, xs[k]))};
    MlirValue v = lw_scalar_cast(cx, lw_extract(cx, p->x, at), p->xdt, p->acc);
    MlirValue t = op2(cx, "arith.mulf", w[k], v);
    sum = k == 0       ? t
          : p->max_mode ? op2(cx, "arith.maximumf", sum, t)
                        : op2(cx, "arith.addf", sum, t);
  }
  return sum;
}

static o2m_status roi_ix_body(lw_ctx *cx, MlirValue ix, const MlirValue *carried, MlirValue *next,
                              void *user) {
  const roi_plan *p = user;
  MlirValue off = op2(cx, "arith.addf", itof(cx, p, to_i64(cx, ix)), rf(cx, p, 0.5));
  MlirValue xx = op2(cx, "arith.addf", p->base_w,
                     op2(cx, "arith.divf", op2(cx, "arith.mulf", off, p->bin_w), p->gw_f));
  MlirValue v = roi_sample(cx, p, p->yy, xx);
  next[0] = op2(cx, p->max_mode ? "arith.maximumf" : "arith.addf", carried[0], v);
  return O2M_OK;
}

static o2m_status roi_iy_body(lw_ctx *cx, MlirValue iy, const MlirValue *carried, MlirValue *next,
                              void *user) {
  roi_plan *p = user;
  MlirValue off = op2(cx, "arith.addf", itof(cx, p, to_i64(cx, iy)), rf(cx, p, 0.5));
  p->yy = op2(cx, "arith.addf", p->base_h,
              op2(cx, "arith.divf", op2(cx, "arith.mulf", off, p->bin_h), p->gh_f));
  return lw_for(cx, lw_const_index(cx, 0), p->gw, 1, carried, roi_ix_body, p, next);
}

/* The grid size along one axis: sampling_ratio, or ceil(bin) (i64). */
static MlirValue roi_grid(lw_ctx *cx, const roi_plan *p, MlirValue bin) {
  if (p->sr > 0) return i64c(cx, p->sr);
  return op1(cx, "arith.fptosi", op1(cx, "math.ceil", bin, mlirValueGetType(bin)),
             lw_type(cx, "i64"));
}

static MlirValue dim_i64(lw_ctx *cx, lw_ix d) {
  return lw_ix_is_const(d) ? i64c(cx, d.c) : to_i64(cx, d.v);
}

static o2m_status roi_body(lw_ctx *cx, const MlirValue *idx, const MlirValue *args, MlirValue *out,
                           void *user) {
  roi_plan *p = user;
  (void)args;
  MlirValue n = idx[0];
  p->c = idx[1];
  MlirValue at[1] = {n};
  p->b = lw_norm_index(cx, lw_extract(cx, p->bidx, at), p->bdt, p->n_img);
  MlirValue r[4], scale = rf(cx, p, p->scale), offset = rf(cx, p, p->half ? 0.5 : 0.0);
  for (int k = 0; k < 4; k++) {
    MlirValue rat[2] = {n, lw_const_index(cx, k)};
    r[k] = lw_scalar_cast(cx, lw_extract(cx, p->rois, rat), p->rdt, p->acc);
    r[k] = op2(cx, "arith.subf", op2(cx, "arith.mulf", r[k], scale), offset);
  }
  MlirValue rw = op2(cx, "arith.subf", r[2], r[0]), rh = op2(cx, "arith.subf", r[3], r[1]);
  if (!p->half) {
    rw = op2(cx, "arith.maximumf", rw, rf(cx, p, 1.0));
    rh = op2(cx, "arith.maximumf", rh, rf(cx, p, 1.0));
  }
  p->bin_h = op2(cx, "arith.divf", rh, rf(cx, p, (double)p->oh));
  p->bin_w = op2(cx, "arith.divf", rw, rf(cx, p, (double)p->ow));
  MlirValue gh = roi_grid(cx, p, p->bin_h), gw = roi_grid(cx, p, p->bin_w);
  p->gh_f = itof(cx, p, gh), p->gw_f = itof(cx, p, gw);
  p->gw = to_index(cx, gw);
  p->base_h = op2(cx, "arith.addf", r[1],
                  op2(cx, "arith.mulf", itof(cx, p, to_i64(cx, idx[2])), p->bin_h));
  p->base_w = op2(cx, "arith.addf", r[0],
                  op2(cx, "arith.mulf", itof(cx, p, to_i64(cx, idx[3])), p->bin_w));
  p->hf = itof(cx, p, dim_i64(cx, p->h)), p->wf = itof(cx, p, dim_i64(cx, p->w));
  p->hm1 = op2(cx, "arith.subi", dim_i64(cx, p->h), i64c(cx, 1));
  p->wm1 = op2(cx, "arith.subi", dim_i64(cx, p->w), i64c(cx, 1));
  MlirValue init = rf(cx, p, p->max_mode ? -INFINITY : 0.0), acc;
  o2m_status s = lw_for(cx, lw_const_index(cx, 0), to_index(cx, gh), 1, &init, roi_iy_body, p, &acc);
  if (s) return s;
  MlirValue z64 = i64c(cx, 0);
  if (p->max_mode) {
    MlirValue nonempty =
        op2(cx, "arith.andi", lw_cmpi(cx, LW_I_SGT, gh, z64), lw_cmpi(cx, LW_I_SGT, gw, z64));
    acc = lw_select(cx, nonempty, acc, rf(cx, p, 0.0));
  } else {
    MlirValue count = op2(cx, "arith.maxsi", op2(cx, "arith.muli", gh, gw), i64c(cx, 1));
    acc = op2(cx, "arith.divf", acc, itof(cx, p, count));
  }
  *out = lw_scalar_cast(cx, acc, p->acc, p->xdt);
  return lw_value_status(cx, *out);
}

o2m_status lw_lower_roi_align(lw_ctx *cx) {
  MlirValue in[3];
  o2m_status s = lw_inputs(cx, 3, in);
  if (s) return s;
  roi_plan p = {.x = in[0],
                .rois = in[1],
                .bidx = in[2],
                .xdt = lw_in_type(cx, 0)->elem,
                .rdt = lw_in_type(cx, 1)->elem,
                .bdt = lw_in_type(cx, 2)->elem,
                .oh = lw_attr_int(cx, "output_height", 1),
                .ow = lw_attr_int(cx, "output_width", 1),
                .sr = lw_attr_int(cx, "sampling_ratio", 0),
                .scale = lw_attr_float(cx, "spatial_scale", 1.0f)};
  if (lw_rank(in[0]) != 4 || lw_rank(in[1]) != 2 || lw_rank(in[2]) != 1)
    return lw_error(cx, "X must be 4-D, rois 2-D and batch_indices 1-D");
  if (!lw_dtype_is_float(p.xdt) || !lw_dtype_is_float(p.rdt))
    return lw_unsupported(cx, "X and rois must be floats");
  if (p.oh <= 0 || p.ow <= 0) return lw_error(cx, "output_height and output_width must be positive");
  p.acc = p.xdt == O2M_DT_DOUBLE ? O2M_DT_DOUBLE : O2M_DT_FLOAT;
  const char *mode = lw_attr_string(cx, "mode", "avg");
  if (strcmp(mode, "avg") && strcmp(mode, "max")) return lw_error(cx, "unknown mode '%s'", mode);
  p.max_mode = strcmp(mode, "max") == 0;
  const char *ct = lw_attr_string(cx, "coordinate_transformation_mode",
                                  cx->node->opset < 16 ? "output_half_pixel" : "half_pixel");
  if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
    return lw_error(cx, "unknown coordinate_transformation_mode '%s'", ct);
  p.half = strcmp(ct, "half_pixel") == 0;
  p.n_img = lw_ix_dim(cx, in[0], 0);
  p.h = lw_ix_dim(cx, in[0], 2);
  p.w = lw_ix_dim(cx, in[0], 3);
  lw_ix n_roi = lw_ix_dim(cx, in[1], 0); /* static from rois or batch_indices */
  if (!lw_ix_is_const(n_roi) && lw_ix_is_const(lw_ix_dim(cx, in[2], 0)))
    n_roi = lw_ix_dim(cx, in[2], 0);
  lw_ix dims[4] = {n_roi, lw_ix_dim(cx, in[0], 1), lw_ix_c(p.oh), lw_ix_c(p.ow)};
  MlirType type = lw_out_type_with(cx, 0, 4, dims);
  if (mlirTypeIsNull(type)) return lw_unsupported(cx, "the output type is not known");
  MlirValue result;
  s = lw_index_generic(cx, type, dims, 0, NULL, NULL, roi_body, &p, &result);
  return s ? s : lw_set_out(cx, 0, result);
}
