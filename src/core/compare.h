/* compare.h - comparing a computed tensor with an expected one, as the
 * ONNX backend tests do, and showing element values as text.
 *
 * Owns: the comparison rule and its message, and the decoding of every
 * element type to a printable value. Shapes and dtypes must match
 * exactly. Floating-point values (every float dtype, complex parts) match
 * when |a - e| <= atol + rtol * |e| (NumPy's assert_allclose), NaN matches
 * NaN, and an infinity only the same infinity; integers, bools and strings
 * must be equal.
 */
#ifndef O2M_COMPARE_H
#define O2M_COMPARE_H

#include "ir/ir.h"

typedef struct o2m_compare_options {
  double rtol, atol;
  int max_report; /* mismatches listed in the message */
} o2m_compare_options;

/* rtol 1e-3, atol 1e-7, 5 mismatches listed. */
extern const o2m_compare_options o2m_compare_defaults;

/* O2M_OK when `actual` matches `expected`. Otherwise fails `diag` with
 * O2M_ERR_INVALID and a message that starts with `what` (e.g. "output 0
 * 'y'") and gives the differing shapes or dtypes, or the count of
 * mismatches, the first ones (index: actual, expected) and the maximum
 * absolute and relative errors. `options` may be NULL for the defaults. */
o2m_status o2m_compare_tensors(const o2m_tensor *actual,
                               const o2m_tensor *expected,
                               const o2m_compare_options *options,
                               const char *what, o2m_diag *diag);

/* Writes element `index` (row-major) of `t` as text into buf[cap]:
 * floats with up to 9 significant digits ("nan", "inf"), complex as
 * "re+imj", integers, "true"/"false", strings quoted (cut at 40 bytes). */
void o2m_format_element(const o2m_tensor *t, int64_t index, char *buf, size_t cap);

#endif
