/* test_npy.c - unit tests of tensor files: .npy reading and writing
 * (src/onnx/npy.c) for every NumPy dtype, format versions 1-3, strings and
 * every refusal (bad magic, truncation, big-endian, Fortran order, unknown
 * dtypes, malformed headers); the TensorProto writer
 * (src/onnx/tensor_writer.c) round-tripped through the reader; and
 * o2m_read_tensor_file / o2m_write_tensor_file (src/onnx/tensor_file.c)
 * on files under /tmp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/npy.h"
#include "onnx/reader.h"
#include "onnx/tensor_file.h"
#include "onnx/tensor_writer.h"

/* A .npy file: preamble for `version`, the header dict, then `data`. */
static size_t make_npy(uint8_t *buf, int version, const char *dict, const void *data, size_t n) {
  size_t dlen = strlen(dict), prefix = version == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)version;
  buf[7] = 0;
  if (version == 1) {
    buf[8] = (uint8_t)dlen;
    buf[9] = (uint8_t)(dlen >> 8);
  } else {
    for (int i = 0; i < 4; i++) buf[8 + i] = (uint8_t)(dlen >> (8 * i));
  }
  memcpy(buf + prefix, dict, dlen);
  if (n) memcpy(buf + prefix + dlen, data, n);
  return prefix + dlen + n;
}

static o2m_status decode(const uint8_t *buf, size_t n, o2m_arena *arena, o2m_tensor **t, o2m_diag *diag) {
  memset(diag, 0, sizeof(*diag));
  return o2m_npy_decode(arena, buf, n, "t.npy", t, diag);
}

static void test_npy_dtypes(void) {
  static const struct {
    const char *descr;
    o2m_dtype dtype;
    int size;
  } cases[] = {
      {"<f2", O2M_DT_FLOAT16, 2}, {"<f4", O2M_DT_FLOAT, 4},  {"<f8", O2M_DT_DOUBLE, 8},
      {"|i1", O2M_DT_INT8, 1},    {"<i2", O2M_DT_INT16, 2},  {"<i4", O2M_DT_INT32, 4},
      {"<i8", O2M_DT_INT64, 8},   {"|u1", O2M_DT_UINT8, 1},  {"<u2", O2M_DT_UINT16, 2},
      {"<u4", O2M_DT_UINT32, 4},  {"<u8", O2M_DT_UINT64, 8}, {"|b1", O2M_DT_BOOL, 1},
      {"<c8", O2M_DT_COMPLEX64, 8}, {"<c16", O2M_DT_COMPLEX128, 16}, {"=f4", O2M_DT_FLOAT, 4},
  };
  uint8_t data[96], buf[512];
  for (int i = 0; i < 96; i++) data[i] = (uint8_t)(i * 7);
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char dict[128];
    snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }\n", cases[c].descr);
    size_t n = make_npy(buf, 1, dict, data, 6 * (size_t)cases[c].size);
    o2m_arena arena = {0};
    o2m_tensor *t;
    o2m_diag diag;
    CHECK(!decode(buf, n, &arena, &t, &diag));
    CHECK(t->dtype == cases[c].dtype && t->rank == 2 && t->dims[0] == 2 && t->dims[1] == 3 && t->count == 6);
    CHECK(t->nbytes == 6 * (size_t)cases[c].size && memcmp(t->data, data, t->nbytes) == 0);
    o2m_arena_free(&arena);
  }
}

static void test_npy_shapes_and_versions(void) {
  uint8_t buf[512];
  float v[5] = {1, 2, 3, 4, 5};
  o2m_diag diag;
  o2m_tensor *t;
  o2m_arena arena = {0};
  /* 0-d, 1-d with trailing comma, Python 2 long, keys in another order */
  size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", v, 4);
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->rank == 0 && t->count == 1 && memcmp(t->data, v, 4) == 0);
  n = make_npy(buf, 2, "{'shape': (5,), 'fortran_order': False, 'descr': '<f4'}", v, 20);
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->rank == 1 && t->dims[0] == 5 && t->count == 5);
  n = make_npy(buf, 3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1L, 5L)}", v, 20);
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->rank == 2 && t->dims[1] == 5);
  /* an empty array: zero elements, no data needed */
  n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->count == 0 && t->data == NULL);
  o2m_arena_free(&arena);
}

static void test_npy_strings(void) {
  uint8_t buf[512];
  o2m_diag diag;
  o2m_tensor *t;
  o2m_arena arena = {0};
  const char bytes[] = "ab\0\0cdef"; /* |S4: "ab", "cdef" */
  size_t n = make_npy(buf, 1, "{'descr': '|S4', 'fortran_order': False, 'shape': (2,), }", bytes, 8);
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->dtype == O2M_DT_STRING && t->count == 2);
  CHECK(t->strings[0].len == 2 && memcmp(t->strings[0].ptr, "ab", 2) == 0);
  CHECK(t->strings[1].len == 4 && memcmp(t->strings[1].ptr, "cdef", 4) == 0);
  /* <U2: "é" (U+00E9) and "€x" (U+20AC, 'x') as UTF-32LE, to UTF-8 */
  const uint8_t u32[] = {0xE9, 0, 0, 0, 0, 0, 0, 0, 0xAC, 0x20, 0, 0, 'x', 0, 0, 0};
  n = make_npy(buf, 3, "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", u32, sizeof(u32));
  CHECK(!decode(buf, n, &arena, &t, &diag) && t->count == 2);
  CHECK(t->strings[0].len == 2 && memcmp(t->strings[0].ptr, "\xC3\xA9", 2) == 0);
  CHECK(t->strings[1].len == 4 && memcmp(t->strings[1].ptr, "\xE2\x82\xAC" "x", 4) == 0);
  o2m_arena_free(&arena);
}

static void test_npy_refusals(void) {
  static const struct {
    const char *dict;
    size_t data;
    o2m_status want;
    const char *message;
  } cases[] = {
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, O2M_ERR_UNSUPPORTED, "big-endian"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, O2M_ERR_UNSUPPORTED, "Fortran"},
      {"{'descr': '<f2x', 'fortran_order': False, 'shape': (2,), }", 8, O2M_ERR_UNSUPPORTED, "not supported"},
      {"{'descr': 'O', 'fortran_order': False, 'shape': (2,), }", 8, O2M_ERR_UNSUPPORTED, "not supported"},
      {"{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", 8, O2M_ERR_UNSUPPORTED, "no ONNX"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, O2M_ERR_PARSE, "truncated .npy data"},
      {"{'descr': '<f4', 'shape': (2,), }", 8, O2M_ERR_PARSE, "missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, O2M_ERR_PARSE, "unknown key"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8, O2M_ERR_PARSE, "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 8, O2M_ERR_PARSE, "dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, O2M_ERR_PARSE, "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", 8,
       O2M_ERR_PARSE, "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, O2M_ERR_PARSE, "expected"},
      {"{'descr': '<f4, 'fortran_order': False}", 8, O2M_ERR_PARSE, "malformed"},
      {"['descr']", 0, O2M_ERR_PARSE, "expected '{'"},
  };
  uint8_t buf[512], data[64] = {0};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    size_t n = make_npy(buf, 1, cases[c].dict, data, cases[c].data);
    o2m_arena arena = {0};
    o2m_tensor *t;
    o2m_diag diag;
    o2m_status s = decode(buf, n, &arena, &t, &diag);
    CHECK(s == cases[c].want && strstr(diag.message, cases[c].message) && strstr(diag.message, "t.npy"));
    if (s != cases[c].want || !strstr(diag.message, cases[c].message)) fprintf(stderr, "  case %zu: %s\n", c, diag.message);
    o2m_arena_free(&arena);
  }
  /* the preamble itself */
  o2m_arena arena = {0};
  o2m_tensor *t;
  o2m_diag diag;
  CHECK(decode((const uint8_t *)"\x93NUMPZ\x01\x00", 8, &arena, &t, &diag) == O2M_ERR_PARSE);
  CHECK(decode((const uint8_t *)"\x93NUMPY\x01", 7, &arena, &t, &diag) == O2M_ERR_PARSE);
  CHECK(decode((const uint8_t *)"\x93NUMPY\x04\x00\x00\x00", 10, &arena, &t, &diag) == O2M_ERR_UNSUPPORTED);
  CHECK(decode((const uint8_t *)"\x93NUMPY\x01\x00\xff\x00{", 11, &arena, &t, &diag) == O2M_ERR_PARSE &&
        strstr(diag.message, "truncated .npy header"));
  CHECK(decode((const uint8_t *)"", 0, &arena, &t, &diag) == O2M_ERR_PARSE);
  o2m_arena_free(&arena);
}

/* ---- writing ------------------------------------------------------------- */

/* Writes `t` with `writer` into memory; returns the bytes (free them). */
static uint8_t *write_mem(const o2m_tensor *t, int npy, size_t *n, o2m_status *s) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, n);
  o2m_diag diag = {0};
  *s = npy ? o2m_npy_write(t, f, "out", &diag) : o2m_tensor_write_pb(t, f, "out", &diag);
  fclose(f);
  return (uint8_t *)buf;
}

static void test_npy_write(void) {
  static const o2m_dtype writable[] = {O2M_DT_FLOAT16, O2M_DT_FLOAT,  O2M_DT_DOUBLE, O2M_DT_INT8,
                                       O2M_DT_INT16,   O2M_DT_INT32,  O2M_DT_INT64,  O2M_DT_UINT8,
                                       O2M_DT_UINT16,  O2M_DT_UINT32, O2M_DT_UINT64, O2M_DT_BOOL,
                                       O2M_DT_COMPLEX64, O2M_DT_COMPLEX128};
  uint8_t data[16 * 12];
  for (int i = 0; i < (int)sizeof(data); i++) data[i] = (uint8_t)(i % 2);
  int64_t dims[3] = {2, 1, 3};
  for (int rank = 0; rank <= 3; rank += 1) {
    for (size_t d = 0; d < sizeof(writable) / sizeof(writable[0]); d++) {
      int64_t count = 1;
      for (int k = 0; k < rank; k++) count *= dims[k];
      o2m_tensor t = {.dtype = writable[d], .rank = rank, .dims = dims, .count = count,
                      .data = data, .nbytes = o2m_dtype_storage_bytes(writable[d], count)};
      size_t n;
      o2m_status s;
      uint8_t *bytes = write_mem(&t, 1, &n, &s);
      CHECK(!s && n % 64 == t.nbytes % 64 && bytes[n - t.nbytes - 1] == '\n');
      o2m_arena arena = {0};
      o2m_tensor *back;
      o2m_diag diag;
      CHECK(!decode(bytes, n, &arena, &back, &diag) && back->dtype == t.dtype && back->rank == rank &&
            back->count == count && back->nbytes == t.nbytes && memcmp(back->data, data, t.nbytes) == 0);
      for (int k = 0; k < rank; k++) CHECK(back->dims[k] == dims[k]);
      o2m_arena_free(&arena);
      free(bytes);
    }
  }
  /* the exact header NumPy writes for a [2,3] float32 */
  o2m_tensor t = {.dtype = O2M_DT_FLOAT, .rank = 2, .dims = (int64_t[]){2, 3}, .count = 6, .data = data, .nbytes = 24};
  size_t n;
  o2m_status s;
  uint8_t *bytes = write_mem(&t, 1, &n, &s);
  const char want[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(n == 128 + 24 && bytes[8] == 118 && memcmp(bytes + 10, want, sizeof(want) - 1) == 0 && bytes[127] == '\n');
  free(bytes);
  /* strings as |S<longest> */
  o2m_bytes strs[2] = {{(const uint8_t *)"a", 1}, {(const uint8_t *)"xyz", 3}};
  o2m_tensor st = {.dtype = O2M_DT_STRING, .rank = 1, .dims = (int64_t[]){2}, .count = 2, .strings = strs};
  bytes = write_mem(&st, 1, &n, &s);
  o2m_arena arena = {0};
  o2m_tensor *back;
  o2m_diag diag;
  CHECK(!s && !decode(bytes, n, &arena, &back, &diag) && back->count == 2 && back->strings[0].len == 1 &&
        back->strings[1].len == 3 && memcmp(back->strings[1].ptr, "xyz", 3) == 0);
  o2m_arena_free(&arena);
  free(bytes);
  /* no NumPy dtype */
  o2m_tensor bf = {.dtype = O2M_DT_BFLOAT16, .rank = 1, .dims = (int64_t[]){1}, .count = 1, .data = data, .nbytes = 2};
  bytes = write_mem(&bf, 1, &n, &s);
  CHECK(s == O2M_ERR_UNSUPPORTED);
  free(bytes);
}

/* ---- TensorProto --------------------------------------------------------- */

static void test_pb_round_trip(void) {
  static const o2m_dtype dtypes[] = {O2M_DT_FLOAT, O2M_DT_INT64, O2M_DT_BOOL, O2M_DT_FLOAT16, O2M_DT_BFLOAT16,
                                     O2M_DT_INT4, O2M_DT_UINT2, O2M_DT_FLOAT8E5M2, O2M_DT_COMPLEX128};
  uint8_t data[256];
  for (int i = 0; i < (int)sizeof(data); i++) data[i] = (uint8_t)(i * 13 + 1);
  for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
    int64_t dims[2] = {3, 5};
    o2m_tensor t = {.name = d % 2 ? "named" : "", .dtype = dtypes[d], .rank = 2, .dims = dims, .count = 15,
                    .data = dtypes[d] == O2M_DT_BOOL ? (const uint8_t *)"\1\0\1\1\0\0\1\0\1\1\0\0\1\0\1" : data,
                    .nbytes = o2m_dtype_storage_bytes(dtypes[d], 15)};
    size_t n;
    o2m_status s;
    uint8_t *bytes = write_mem(&t, 0, &n, &s);
    o2m_arena arena = {0};
    o2m_tensor *back = NULL;
    o2m_diag diag = {0};
    CHECK(!s && !o2m_decode_tensor(&arena, bytes, n, "t.pb", &back, &diag) && back);
    if (!back) continue;
    CHECK(back->dtype == t.dtype && back->rank == 2 && back->dims[0] == 3 && back->dims[1] == 5 &&
          back->nbytes == t.nbytes && memcmp(back->data, t.data, t.nbytes) == 0 && strcmp(back->name, t.name) == 0);
    o2m_arena_free(&arena);
    free(bytes);
  }
  /* a 0-d tensor, an empty one, strings */
  float one = 1;
  o2m_tensor scalar = {.dtype = O2M_DT_FLOAT, .count = 1, .data = (uint8_t *)&one, .nbytes = 4};
  o2m_tensor empty = {.dtype = O2M_DT_FLOAT, .rank = 1, .dims = (int64_t[]){0}, .count = 0};
  o2m_bytes strs[2] = {{(const uint8_t *)"", 0}, {(const uint8_t *)"hello", 5}};
  o2m_tensor st = {.dtype = O2M_DT_STRING, .rank = 1, .dims = (int64_t[]){2}, .count = 2, .strings = strs};
  const o2m_tensor *all[] = {&scalar, &empty, &st};
  for (int i = 0; i < 3; i++) {
    size_t n;
    o2m_status s;
    uint8_t *bytes = write_mem(all[i], 0, &n, &s);
    o2m_arena arena = {0};
    o2m_tensor *back = NULL;
    o2m_diag diag = {0};
    CHECK(!s && !o2m_decode_tensor(&arena, bytes, n, "t.pb", &back, &diag) && back->count == all[i]->count &&
          back->rank == all[i]->rank && back->dtype == all[i]->dtype);
    if (i == 0 && back) CHECK(memcmp(back->data, &one, 4) == 0);
    if (i == 2 && back) CHECK(back->strings[0].len == 0 && back->strings[1].len == 5 && !memcmp(back->strings[1].ptr, "hello", 5));
    o2m_arena_free(&arena);
    free(bytes);
  }
  /* data that does not match the dims is an internal error, not garbage */
  o2m_tensor bad = {.dtype = O2M_DT_FLOAT, .rank = 1, .dims = (int64_t[]){4}, .count = 4, .data = data, .nbytes = 8};
  size_t n;
  o2m_status s;
  free(write_mem(&bad, 0, &n, &s));
  CHECK(s == O2M_ERR_INTERNAL);
}

/* ---- files ----------------------------------------------------------------- */

static void test_files(void) {
  char dir[] = "/tmp/o2m_test_npy_XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(!"mkdtemp");
    return;
  }
  char npy[64], pb[64], bad[64];
  snprintf(npy, sizeof(npy), "%s/x.npy", dir);
  snprintf(pb, sizeof(pb), "%s/x.bin", dir); /* told apart by content, not name */
  snprintf(bad, sizeof(bad), "%s/none/x.pb", dir);
  int32_t v[4] = {1, -2, 3, -4};
  o2m_tensor t = {.name = "x", .dtype = O2M_DT_INT32, .rank = 2, .dims = (int64_t[]){2, 2}, .count = 4,
                  .data = (uint8_t *)v, .nbytes = 16};
  o2m_diag diag = {0};
  CHECK(!o2m_write_tensor_file(&t, npy, O2M_FORMAT_NPY, &diag));
  CHECK(!o2m_write_tensor_file(&t, pb, O2M_FORMAT_PB, &diag));
  CHECK(o2m_write_tensor_file(&t, bad, O2M_FORMAT_PB, &diag) == O2M_ERR_IO && strstr(diag.message, "none/x.pb"));
  const char *paths[2] = {npy, pb};
  for (int i = 0; i < 2; i++) {
    o2m_arena arena = {0};
    o2m_tensor *back;
    memset(&diag, 0, sizeof(diag));
    CHECK(!o2m_read_tensor_file(&arena, paths[i], &back, &diag) && back->dtype == O2M_DT_INT32 && back->count == 4 &&
          memcmp(back->data, v, 16) == 0 && back->origin == O2M_DATA_DECODED);
    o2m_arena_free(&arena);
  }
  o2m_arena arena = {0};
  o2m_tensor *back;
  memset(&diag, 0, sizeof(diag));
  CHECK(o2m_read_tensor_file(&arena, bad, &back, &diag) == O2M_ERR_IO && back == NULL);
  o2m_arena_free(&arena);
  remove(npy);
  remove(pb);
  rmdir(dir);
}

int main(void) {
  test_npy_dtypes();
  test_npy_shapes_and_versions();
  test_npy_strings();
  test_npy_refusals();
  test_npy_write();
  test_pb_round_trip();
  test_files();
  return CHECK_SUMMARY();
}
