/* test_compare.c - unit tests of src/core/compare.c: the tolerance rule
 * (|a-e| <= atol + rtol*|e|), NaN and infinities, exact integers, bools
 * and strings, shape and dtype mismatches, the decoding of f16, bf16, the
 * float8/float4 variants, packed int4/uint2 and complex, the mismatch
 * message, and o2m_format_element. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/compare.h"

/* A 1-D tensor of `count` elements viewing `data`. */
static o2m_tensor vec(o2m_dtype dtype, int64_t count, const void *data) {
  static int64_t dims_pool[64];
  static int used;
  int64_t *dims = &dims_pool[used++ % 64];
  *dims = count;
  o2m_tensor t = {.dtype = dtype, .rank = 1, .dims = dims, .count = count, .data = data,
                  .nbytes = o2m_dtype_storage_bytes(dtype, count)};
  return t;
}

static o2m_status cmp(const o2m_tensor *a, const o2m_tensor *e, o2m_diag *diag) {
  memset(diag, 0, sizeof(*diag));
  return o2m_compare_tensors(a, e, NULL, "output 0 'y'", diag);
}

static void test_floats(void) {
  o2m_diag d;
  float e[4] = {1, -2, 0, 1000};
  float same[4] = {1, -2, 0, 1000};
  float close[4] = {1.0009f, -2.001f, 0.00000005f, 1000.9f};
  float far[4] = {1.002f, -2, 0.000001f, 1000};
  o2m_tensor te = vec(O2M_DT_FLOAT, 4, e), ts = vec(O2M_DT_FLOAT, 4, same);
  o2m_tensor tc = vec(O2M_DT_FLOAT, 4, close), tf = vec(O2M_DT_FLOAT, 4, far);
  CHECK(cmp(&ts, &te, &d) == O2M_OK);
  CHECK(cmp(&tc, &te, &d) == O2M_OK);
  CHECK(cmp(&tf, &te, &d) == O2M_ERR_INVALID);
  CHECK(strstr(d.message, "output 0 'y': 2 of 4 values differ (rtol 0.001, atol 1e-07)"));
  CHECK(strstr(d.message, "[0] 1.00199997, expected 1") && strstr(d.message, "[2] 9.99999997e-07, expected 0"));
  CHECK(strstr(d.message, "max abs error 0.002") && strstr(d.message, "max rel error 0.002"));
  /* looser options */
  o2m_compare_options loose = {1e-2, 1e-5, 1};
  memset(&d, 0, sizeof(d));
  CHECK(o2m_compare_tensors(&tf, &te, &loose, "y", &d) == O2M_OK);
  /* NaN equals NaN; infinities only themselves */
  float special_e[4] = {NAN, INFINITY, -INFINITY, 1};
  float special_ok[4] = {NAN, INFINITY, -INFINITY, 1};
  float special_bad[4] = {1, -INFINITY, NAN, INFINITY};
  o2m_tensor se = vec(O2M_DT_FLOAT, 4, special_e), so = vec(O2M_DT_FLOAT, 4, special_ok);
  o2m_tensor sb = vec(O2M_DT_FLOAT, 4, special_bad);
  CHECK(cmp(&so, &se, &d) == O2M_OK);
  CHECK(cmp(&sb, &se, &d) == O2M_ERR_INVALID && strstr(d.message, "4 of 4 values differ"));
  CHECK(strstr(d.message, "[0] 1, expected nan") && strstr(d.message, "[1] -inf, expected inf"));
  /* doubles */
  double de[2] = {1e300, 1e-300}, da[2] = {1.0005e300, 0};
  o2m_tensor tde = vec(O2M_DT_DOUBLE, 2, de), tda = vec(O2M_DT_DOUBLE, 2, da);
  CHECK(cmp(&tda, &tde, &d) == O2M_OK);
}

static void test_shapes_and_dtypes(void) {
  o2m_diag d;
  float e[4] = {0};
  int64_t d22[2] = {2, 2}, d41[2] = {4, 1};
  o2m_tensor a = {.dtype = O2M_DT_FLOAT, .rank = 2, .dims = d22, .count = 4, .data = (uint8_t *)e, .nbytes = 16};
  o2m_tensor b = a;
  b.dims = d41;
  CHECK(cmp(&a, &b, &d) == O2M_ERR_INVALID && strstr(d.message, "got float [2,2], expected float [4,1]"));
  b = a;
  b.dtype = O2M_DT_INT32;
  CHECK(cmp(&a, &b, &d) == O2M_ERR_INVALID && strstr(d.message, "got float [2,2], expected int32 [2,2]"));
  b = a;
  b.rank = 1;
  CHECK(cmp(&a, &b, &d) == O2M_ERR_INVALID);
  /* a tensor without its data is refused, not read */
  b = a;
  b.data = NULL;
  CHECK(cmp(&b, &a, &d) == O2M_ERR_INVALID && strstr(d.message, "no data"));
  /* empty tensors match */
  int64_t d0[1] = {0};
  o2m_tensor z = {.dtype = O2M_DT_FLOAT, .rank = 1, .dims = d0, .count = 0};
  CHECK(cmp(&z, &z, &d) == O2M_OK);
}

static void test_integers(void) {
  o2m_diag d;
  int64_t e[4] = {1, -2, INT64_MAX, INT64_MIN}, a[4] = {1, -2, INT64_MAX - 1, INT64_MIN};
  o2m_tensor te = vec(O2M_DT_INT64, 4, e), ta = vec(O2M_DT_INT64, 4, a);
  CHECK(cmp(&te, &te, &d) == O2M_OK);
  CHECK(cmp(&ta, &te, &d) == O2M_ERR_INVALID && strstr(d.message, "1 of 4 values differ: [2] 9223372036854775806, expected 9223372036854775807"));
  CHECK(!strstr(d.message, "rtol"));
  uint8_t ue[4] = {0, 255, 7, 8}, ua[4] = {0, 254, 7, 8};
  o2m_tensor tue = vec(O2M_DT_UINT8, 4, ue), tua = vec(O2M_DT_UINT8, 4, ua);
  CHECK(cmp(&tua, &tue, &d) == O2M_ERR_INVALID && strstr(d.message, "[1] 254, expected 255"));
  uint8_t be[4] = {1, 0, 1, 0}, ba[4] = {1, 0, 0, 0};
  o2m_tensor tbe = vec(O2M_DT_BOOL, 4, be), tba = vec(O2M_DT_BOOL, 4, ba);
  CHECK(cmp(&tbe, &tbe, &d) == O2M_OK);
  CHECK(cmp(&tba, &tbe, &d) == O2M_ERR_INVALID && strstr(d.message, "[2] false, expected true"));
  /* int4 packed two per byte, low nibble first: 7, -8, -1, 0 */
  uint8_t i4e[2] = {0x87, 0x0F}, i4a[2] = {0x87, 0x0E};
  o2m_tensor t4e = vec(O2M_DT_INT4, 4, i4e), t4a = vec(O2M_DT_INT4, 4, i4a);
  CHECK(cmp(&t4a, &t4e, &d) == O2M_ERR_INVALID && strstr(d.message, "[2] -2, expected -1"));
  /* uint2 four per byte: 3, 0, 1, 2 */
  uint8_t u2e[1] = {0x93}, u2a[1] = {0x83};
  o2m_tensor t2e = vec(O2M_DT_UINT2, 4, u2e), t2a = vec(O2M_DT_UINT2, 4, u2a);
  CHECK(cmp(&t2a, &t2e, &d) == O2M_ERR_INVALID && strstr(d.message, "[2] 0, expected 1"));
}

static void test_strings(void) {
  o2m_diag d;
  o2m_bytes e[2] = {{(const uint8_t *)"abc", 3}, {(const uint8_t *)"", 0}};
  o2m_bytes a[2] = {{(const uint8_t *)"abd", 3}, {(const uint8_t *)"", 0}};
  o2m_tensor te = vec(O2M_DT_STRING, 2, NULL), ta = te;
  te.strings = e;
  ta.strings = a;
  CHECK(cmp(&te, &te, &d) == O2M_OK);
  CHECK(cmp(&ta, &te, &d) == O2M_ERR_INVALID && strstr(d.message, "[0] \"abd\", expected \"abc\""));
}

/* Decoding of the small float formats, through o2m_format_element. */
static void test_small_floats(void) {
  static const struct {
    o2m_dtype dtype;
    uint8_t bytes[2];
    const char *text;
  } cases[] = {
      {O2M_DT_FLOAT16, {0x00, 0x3C}, "1"},          {O2M_DT_FLOAT16, {0x00, 0xC0}, "-2"},
      {O2M_DT_FLOAT16, {0x00, 0x7C}, "inf"},        {O2M_DT_FLOAT16, {0x00, 0x7E}, "nan"},
      {O2M_DT_FLOAT16, {0x01, 0x00}, "5.96046448e-08"}, {O2M_DT_BFLOAT16, {0xC0, 0x3F}, "1.5"},
      {O2M_DT_BFLOAT16, {0x80, 0xFF}, "-inf"},      {O2M_DT_FLOAT8E4M3FN, {0x7E}, "448"},
      {O2M_DT_FLOAT8E4M3FN, {0x7F}, "nan"},         {O2M_DT_FLOAT8E4M3FN, {0x01}, "0.001953125"},
      {O2M_DT_FLOAT8E4M3FNUZ, {0x80}, "nan"},       {O2M_DT_FLOAT8E4M3FNUZ, {0x7F}, "240"},
      {O2M_DT_FLOAT8E5M2, {0x7C}, "inf"},           {O2M_DT_FLOAT8E5M2, {0x3C}, "1"},
      {O2M_DT_FLOAT8E5M2FNUZ, {0x80}, "nan"},       {O2M_DT_FLOAT8E5M2FNUZ, {0x7F}, "57344"},
      {O2M_DT_FLOAT8E8M0, {0x7F}, "1"},             {O2M_DT_FLOAT8E8M0, {0xFF}, "nan"},
      {O2M_DT_FLOAT8E8M0, {0x00}, "5.87747175e-39"}, {O2M_DT_FLOAT4E2M1, {0x07}, "6"},
      {O2M_DT_FLOAT4E2M1, {0x0F}, "-6"},            {O2M_DT_FLOAT4E2M1, {0x01}, "0.5"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    o2m_tensor t = vec(cases[c].dtype, 1, cases[c].bytes);
    char text[64];
    o2m_format_element(&t, 0, text, sizeof(text));
    CHECK(strcmp(text, cases[c].text) == 0);
    if (strcmp(text, cases[c].text) != 0) fprintf(stderr, "  case %zu: %s, want %s\n", c, text, cases[c].text);
  }
  /* tolerance applies to decoded values: f16 1.0 vs 1.0009765625 (1 ulp) */
  o2m_diag d;
  uint8_t h1[2] = {0x00, 0x3C}, h2[2] = {0x01, 0x3C}, h3[2] = {0x03, 0x3C};
  o2m_tensor a = vec(O2M_DT_FLOAT16, 1, h2), e = vec(O2M_DT_FLOAT16, 1, h1), far = vec(O2M_DT_FLOAT16, 1, h3);
  CHECK(cmp(&a, &e, &d) == O2M_OK);
  CHECK(cmp(&far, &e, &d) == O2M_ERR_INVALID);
}

static void test_complex_and_format(void) {
  o2m_diag d;
  float e[4] = {1, 2, 3, 4}, a[4] = {1, 2, 3, 5};
  o2m_tensor te = vec(O2M_DT_COMPLEX64, 2, e), ta = vec(O2M_DT_COMPLEX64, 2, a);
  CHECK(cmp(&te, &te, &d) == O2M_OK);
  CHECK(cmp(&ta, &te, &d) == O2M_ERR_INVALID && strstr(d.message, "[1] 3+5j, expected 3+4j"));
  /* a long listing is cut after max_report entries */
  float many_e[40] = {0}, many_a[40];
  for (int i = 0; i < 40; i++) many_a[i] = 1;
  o2m_tensor me = vec(O2M_DT_FLOAT, 40, many_e), ma = vec(O2M_DT_FLOAT, 40, many_a);
  int64_t d58[2] = {5, 8};
  me.rank = ma.rank = 2;
  me.dims = ma.dims = d58;
  CHECK(cmp(&ma, &me, &d) == O2M_ERR_INVALID && strstr(d.message, "40 of 40 values differ") &&
        strstr(d.message, "[0,4] 1, expected 0; ...") && !strstr(d.message, "[0,5]"));
  /* formatting out of range or without data */
  char text[16];
  o2m_format_element(&te, 7, text, sizeof(text));
  CHECK(strcmp(text, "?") == 0);
  int64_t v = -5;
  o2m_tensor ti = vec(O2M_DT_INT64, 1, &v);
  o2m_format_element(&ti, 0, text, sizeof(text));
  CHECK(strcmp(text, "-5") == 0);
}

int main(void) {
  test_floats();
  test_shapes_and_dtypes();
  test_integers();
  test_strings();
  test_small_floats();
  test_complex_and_format();
  return CHECK_SUMMARY();
}
