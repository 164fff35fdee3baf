/* lower_col2im.c - Linalg lowering of Col2Im (opset 18; row in
 * lower_nn.def): input [N, C * prod(block), prod(L)], image_shape and
 * block_shape inputs (known at import: constants, or specialized by
 * `run`/`test`), attributes dilations, pads, strides.
 *
 * ONNX's reference (onnx/reference/ops/op_col2im.py) scatter-adds column
 * (c * B + lin(b), lin(l)) into image position i = l * s - pb + b * d.
 * The lowering is the gather form: one linalg.generic over the output
 * pixels (N, C, i...) with one reduction loop per block axis (their range
 * comes from an unused tensor.empty of the block's shape); the body
 * computes t = i + pb - b * d and reads the column when every t is a
 * non-negative multiple of s below L * s, accumulating in the dtype's
 * accumulator type (f32 for the 16-bit floats).
 */
#include <string.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

enum { C2I_MAX = LW_MAX_SPATIAL };

typedef struct c2i_plan {
  int n;
  int64_t image[C2I_MAX], block[C2I_MAX], dil[C2I_MAX], stride[C2I_MAX], pb[C2I_MAX];
  int64_t blocks[C2I_MAX]; /* L per axis */
  int64_t block_size;
  MlirValue x;
  o2m_dtype dtype, acc;
} c2i_plan;

static o2m_status body_fn(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const c2i_plan *p = user;
  int n = p->n;
  lw_ix valid = lw_ix_c(1), row = lw_ix_c(0), col = lw_ix_c(0);
  lw_ix c = lw_ix_v(lw_loop_index(cx, 1));
  for (int j = 0; j < n; j++) {
    lw_ix i = lw_ix_v(lw_loop_index(cx, 2 + j)), b = lw_ix_v(lw_loop_index(cx, 2 + n + j));
    lw_ix t = lw_ix_bin(cx, LW_IX_SUB, lw_ix_bin(cx, LW_IX_ADD, i, lw_ix_c(p->pb[j])),
                        lw_ix_bin(cx, LW_IX_MUL, b, lw_ix_c(p->dil[j])));
    lw_ix ok = lw_ix_bin(cx, LW_IX_AND, lw_ix_bin(cx, LW_IX_GE, t, lw_ix_c(0)),
                         lw_ix_bin(cx, LW_IX_LT, t, lw_ix_c(p->blocks[j] * p->stride[j])));
    if (p->stride[j] != 1)
      ok = lw_ix_bin(cx, LW_IX_AND, ok,
                     lw_ix_bin(cx, LW_IX_EQ, lw_ix_bin(cx, LW_IX_REM, t, lw_ix_c(p->stride[j])), lw_ix_c(0)));
    valid = j == 0 ? ok : lw_ix_bin(cx, LW_IX_AND, valid, ok);
    lw_ix l = lw_ix_clamp(cx, lw_ix_bin(cx, LW_IX_FLOORDIV, t, lw_ix_c(p->stride[j])), lw_ix_c(0),
                          lw_ix_c(p->blocks[j] - 1));
    row = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, row, lw_ix_c(p->block[j])), b);
    col = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, col, lw_ix_c(p->blocks[j])), l);
  }
  row = lw_ix_bin(cx, LW_IX_ADD, lw_ix_bin(cx, LW_IX_MUL, c, lw_ix_c(p->block_size)), row);
  MlirValue idx[3] = {lw_loop_index(cx, 0), lw_ix_value(cx, row), lw_ix_value(cx, col)};
  MlirValue v = lw_extract(cx, p->x, idx);
  v = lw_scalar_cast(cx, v, p->dtype, p->acc);
  if (mlirValueIsNull(v)) return lw_value_status(cx, v);
  MlirValue zero = lw_scalar_const(cx, mlirValueGetType(v), 0.0);
  v = lw_select(cx, lw_ix_value(cx, valid), v, zero);
  MlirValue sum_args[2] = {args[1], v};
  o2m_dtype dts[2] = {p->acc, p->acc};
  yields[0] = lw_scalar_op(cx, "Add", dts, sum_args);
  return lw_value_status(cx, yields[0]);
}

static o2m_status ints_attr(lw_ctx *cx, const char *name, int count, int64_t dflt, int64_t min,
                            int64_t *out) {
  const int64_t *v = NULL;
  int c = lw_attr_ints(cx, name, &v);
  for (int i = 0; i < count; i++) out[i] = c < 0 ? dflt : i < c ? v[i] : dflt;
  if (c >= 0 && c != count) return lw_error(cx, "attribute %s has %d values, expected %d", name, c, count);
  for (int i = 0; i < count; i++)
    if (out[i] < min) return lw_error(cx, "attribute %s has a value below %lld", name, (long long)min);
  return O2M_OK;
}

o2m_status lw_lower_col2im(lw_ctx *cx) {
  c2i_plan p;
  memset(&p, 0, sizeof(p));
  p.x = lw_in(cx, 0);
  if (mlirValueIsNull(p.x)) return lw_error(cx, "the input is missing");
  if (lw_rank(p.x) != 3) return lw_error(cx, "the input must have rank 3");
  p.dtype = lw_in_type(cx, 0)->elem;
  p.acc = lw_accumulator_dtype(p.dtype);
  if (p.dtype == O2M_DT_BOOL || mlirTypeIsNull(lw_elem_type(cx, p.dtype)))
    return lw_unsupported(cx, "a Col2Im of dtype %d", (int)p.dtype);
  int64_t *image = NULL, *block = NULL;
  int64_t ni = lw_in_known_ints(cx, 1, &image), nb = lw_in_known_ints(cx, 2, &block);
  if (ni < 0 || nb < 0) return lw_unsupported(cx, "image_shape or block_shape is not known at import");
  if (ni != nb || ni < 1 || ni > C2I_MAX)
    return lw_unsupported(cx, "image_shape (%lld values) and block_shape (%lld values)", (long long)ni,
                          (long long)nb);
  int n = p.n = (int)ni;
  int64_t pads[2 * C2I_MAX];
  o2m_status s;
  if ((s = ints_attr(cx, "dilations", n, 1, 1, p.dil)) || (s = ints_attr(cx, "strides", n, 1, 1, p.stride)) ||
      (s = ints_attr(cx, "pads", 2 * n, 0, 0, pads)))
    return s;
  p.block_size = 1;
  int64_t total = 1;
  for (int j = 0; j < n; j++) {
    p.image[j] = image[j], p.block[j] = block[j], p.pb[j] = pads[j];
    if (image[j] < 1 || block[j] < 1) return lw_error(cx, "image_shape and block_shape must be positive");
    p.blocks[j] = (image[j] + pads[j] + pads[n + j] - p.dil[j] * (block[j] - 1) - 1) / p.stride[j] + 1;
    if (p.blocks[j] < 1) return lw_error(cx, "the blocks do not fit image axis %d", j);
    p.block_size *= block[j];
    total *= p.blocks[j];
  }
  int64_t rows = lw_static_dim(p.x, 1), cols = lw_static_dim(p.x, 2);
  if (rows < 0) return lw_unsupported(cx, "a dynamic input dim 1");
  if (rows % p.block_size) return lw_error(cx, "input dim 1 is not a multiple of the block size");
  if (cols >= 0 && cols != total)
    return lw_error(cx, "input dim 2 is %lld, expected %lld blocks", (long long)cols, (long long)total);
  int n_loops = 2 + 2 * n;
  char iters[2 + 2 * C2I_MAX + 1];
  for (int l = 0; l < n_loops; l++) iters[l] = l < 2 + n ? 'p' : 'r';
  iters[n_loops] = 0;
  int bexprs[C2I_MAX], oexprs[2 + C2I_MAX];
  for (int j = 0; j < n; j++) bexprs[j] = 2 + n + j;
  for (int k = 0; k < 2 + n; k++) oexprs[k] = k;
  MlirValue dummy = lw_empty(cx, lw_tensor_type_of(cx, p.dtype, n, p.block), NULL);
  MlirAttribute in_map = lw_affine_map(cx, n_loops, n, bexprs);
  MlirAttribute out_map = lw_affine_map(cx, n_loops, 2 + n, oexprs);
  int64_t sizes[2 + C2I_MAX];
  MlirValue dyn[2 + C2I_MAX];
  memset(dyn, 0, sizeof(dyn));
  sizes[0] = lw_static_dim(p.x, 0);
  if (sizes[0] < 0) sizes[0] = mlirShapedTypeGetDynamicSize(), dyn[0] = lw_dim(cx, p.x, 0);
  sizes[1] = rows / p.block_size;
  for (int j = 0; j < n; j++) sizes[2 + j] = p.image[j];
  MlirType acc_elem = lw_elem_type(cx, p.acc);
  MlirType type = mlirRankedTensorTypeGet(2 + n, sizes, acc_elem, mlirAttributeGetNull());
  MlirValue init = lw_filled(cx, type, dyn, lw_scalar_const(cx, acc_elem, 0.0));
  lw_generic_spec spec = {n_loops, iters, 1, 1, &dummy, &in_map, &init, &out_map, body_fn, &p};
  MlirValue y, out;
  if ((s = lw_generic(cx, &spec, &y)) || (s = lw_convert(cx, y, p.acc, p.dtype, &out))) return s;
  return lw_set_out(cx, 0, out);
}
