/* test_tensor.c - unit tests of tensor decoding (src/onnx/decode_tensor.c),
 * external data (src/onnx/external.c, under a temporary directory in
 * /tmp), file mapping and the dtype helpers of ir.h: typed fields of every
 * dtype, packed and unpacked, raw_data checks, overflowing dims, sparse
 * tensors, and every refusal of an external location. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pb_writer.h"

/* Decodes a standalone tensor; on success copies its payload to `out`. */
static o2m_status tensor_bytes(const pb *t, uint8_t *out, size_t cap,
                               size_t *nbytes, o2m_diag *diag) {
  o2m_arena arena = {0};
  o2m_tensor *tensor;
  o2m_status st = decode_standalone(t, &arena, &tensor, diag);
  if (!st) {
    *nbytes = tensor->nbytes;
    if (tensor->nbytes <= cap && tensor->data)
      memcpy(out, tensor->data, tensor->nbytes);
  }
  o2m_arena_free(&arena);
  return st;
}

/* int32_data values for `dtype`, packed or one per field occurrence. */
static pb *int32_tensor(int dtype, const int64_t *dims, int rank,
                        const int64_t *vals, int n, int packed) {
  pb *t = tensor_pb("t", dtype, dims, rank);
  if (packed)
    put_packed(t, 5, vals, n);
  else
    for (int i = 0; i < n; i++) put_int(t, 5, vals[i]);
  return t;
}

static void test_typed_fields(void) {
  o2m_diag diag;
  uint8_t out[64];
  size_t nb;
  int64_t d3[] = {3}, d2[] = {2}, d1[] = {1};

  /* float_data, packed and unpacked */
  pb *t = tensor_pb("f", 1, d2, 1);
  put_float(t, 4, 1.5f);
  put_float(t, 4, -3.0f);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((float *)out)[0] == 1.5f && ((float *)out)[1] == -3.0f);
  t = tensor_pb("f", 1, d2, 1);
  float fl[2] = {2.5f, 4.0f};
  put_len(t, 4, fl, 8);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && ((float *)out)[1] == 4.0f);
  /* complex64 in float_data: two floats per element */
  t = tensor_pb("c", 14, d1, 1);
  put_len(t, 4, fl, 8);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((float *)out)[0] == 2.5f);
  /* double and complex128 in double_data */
  t = tensor_pb("d", 11, d1, 1);
  double dv = -0.25;
  uint64_t dbits;
  memcpy(&dbits, &dv, 8);
  put_fixed64(t, 10, dbits);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((double *)out)[0] == -0.25);
  t = tensor_pb("z", 15, d1, 1);
  put_fixed64(t, 10, dbits);
  put_fixed64(t, 10, dbits);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 16 &&
        ((double *)out)[1] == -0.25);
  /* int64_data, uint64_data for uint64 and uint32 */
  int64_t i64[] = {-1, INT64_MAX, 0};
  t = tensor_pb("i", 7, d3, 1);
  put_packed(t, 7, i64, 3);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 24 &&
        ((int64_t *)out)[0] == -1 && ((int64_t *)out)[1] == INT64_MAX);
  t = tensor_pb("u", 13, d1, 1);
  put_int(t, 11, -1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) &&
        ((uint64_t *)out)[0] == UINT64_MAX);
  t = tensor_pb("u", 12, d2, 1);
  int64_t u32[] = {4000000000, 7};
  put_packed(t, 11, u32, 2);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 8 &&
        ((uint32_t *)out)[0] == 4000000000u && ((uint32_t *)out)[1] == 7);
  /* int32_data for every narrower type, packed and unpacked */
  int64_t small[] = {-2, 127, 5};
  for (int packed = 0; packed < 2; packed++) {
    t = int32_tensor(3, d3, 1, small, 3, packed); /* int8 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 3 &&
          (int8_t)out[0] == -2 && out[1] == 127);
    t = int32_tensor(5, d3, 1, small, 3, packed); /* int16 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 6 &&
          ((int16_t *)out)[0] == -2);
    t = int32_tensor(6, d3, 1, small, 3, packed); /* int32 */
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 12 &&
          ((int32_t *)out)[0] == -2 && ((int32_t *)out)[2] == 5);
  }
  int64_t u8[] = {255, 0, 128};
  t = int32_tensor(2, d3, 1, u8, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && out[0] == 255 &&
        out[2] == 128);
  int64_t u16[] = {65535, 1, 2};
  t = int32_tensor(4, d3, 1, u16, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) &&
        ((uint16_t *)out)[0] == 65535);
  int64_t bools[] = {0, 1, 2};
  t = int32_tensor(9, d3, 1, bools, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 3 && out[0] == 0 &&
        out[1] == 1 && out[2] == 1);
  int64_t halfs[] = {0x3C00, 0xBC00};
  t = int32_tensor(10, d2, 1, halfs, 2, 1); /* float16 bit patterns */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((uint16_t *)out)[0] == 0x3C00 && ((uint16_t *)out)[1] == 0xBC00);
  t = int32_tensor(16, d2, 1, halfs, 2, 0); /* bfloat16 */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((uint16_t *)out)[1] == 0xBC00);
  int64_t f8[] = {0x38, 0xFF};
  for (int dtype = 17; dtype <= 20; dtype++) {
    t = int32_tensor(dtype, d2, 1, f8, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0x38 && out[1] == 0xFF);
  }
  t = int32_tensor(24, d2, 1, f8, 2, 1); /* float8e8m0 */
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2);
  /* 4-bit types: one byte of two elements per entry, as the proto says */
  int64_t nibbles[] = {0x21, 0x03};
  for (int dtype = 21; dtype <= 23; dtype++) {
    t = int32_tensor(dtype, d3, 1, nibbles, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0x21 && out[1] == 0x03);
  }
  /* ... and one element per entry, from older writers */
  int64_t elems[] = {1, 2, -1};
  t = int32_tensor(22, d3, 1, elems, 3, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
        out[0] == 0x21 && out[1] == 0x0F);
  /* 2-bit types: four elements per byte */
  int64_t crumbs[] = {0xE4, 0x01};
  int64_t d5[] = {5};
  for (int dtype = 25; dtype <= 26; dtype++) {
    t = int32_tensor(dtype, d5, 1, crumbs, 2, 1);
    CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 2 &&
          out[0] == 0xE4 && out[1] == 0x01);
  }
  int64_t two_bit[] = {0, 1, 2, 3, 1};
  t = int32_tensor(25, d5, 1, two_bit, 5, 1);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && out[0] == 0xE4 &&
        out[1] == 0x01);

  /* strings: views, count checked */
  o2m_arena arena = {0};
  o2m_tensor *st_t;
  t = tensor_pb("s", 8, d2, 1);
  put_str(t, 6, "hello");
  put_str(t, 6, "");
  CHECK(!decode_standalone(t, &arena, &st_t, &diag) && st_t->count == 2 &&
        st_t->strings[0].len == 5 &&
        !memcmp(st_t->strings[0].ptr, "hello", 5) &&
        st_t->strings[1].len == 0 && st_t->data == NULL);
  o2m_arena_free(&arena);
  t = tensor_pb("s", 8, d3, 1);
  put_str(t, 6, "one");
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  t = tensor_pb("s", 8, d1, 1);
  put_len(t, 9, "x", 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
}

static void test_tensor_errors(void) {
  o2m_diag diag;
  uint8_t out[64];
  size_t nb;
  int64_t d2[] = {2}, d23[] = {2, 3};
  /* raw_data shorter than the dims need */
  pb *t = tensor_pb("r", 1, d23, 2);
  put_len(t, 9, "12345678", 8);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "raw_data holds 8 bytes") &&
        strstr(diag.message, "[2,3]") && strstr(diag.message, "need 24"));
  /* dims whose product overflows int64, and a negative dim */
  int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
  t = tensor_pb("h", 1, huge, 2);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "overflows"));
  int64_t with_zero[] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
  t = tensor_pb("z", 1, with_zero, 3);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 0);
  int64_t too_big[] = {INT64_C(1) << 62}; /* fits int64, not in bytes */
  t = tensor_pb("b", 1, too_big, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_UNSUPPORTED);
  int64_t negative[] = {-3};
  t = tensor_pb("n", 1, negative, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "negative"));
  /* the wrong typed field for the dtype */
  t = tensor_pb("w", 7, d2, 1);
  put_float(t, 4, 1.0f);
  put_float(t, 4, 1.0f);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "float_data"));
  /* too few values, and raw_data next to a typed field */
  t = tensor_pb("c", 1, d2, 1);
  put_float(t, 4, 1.0f);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "holds 1 values"));
  t = tensor_pb("c", 1, d2, 1);
  put_float(t, 4, 1.0f);
  put_float(t, 4, 1.0f);
  put_len(t, 9, "12345678", 8);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  /* no data_type, an unknown one */
  t = pb_new();
  put_packed(t, 1, d2, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "data_type is missing"));
  t = tensor_pb("u", 77, d2, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  /* no data at all; values for a tensor without elements */
  t = tensor_pb("n", 1, d2, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "no data"));
  int64_t d0[] = {0};
  t = tensor_pb("e", 1, d0, 1);
  put_float(t, 4, 1.0f);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_INVALID);
  /* a 0-d tensor holds one element; an empty one has no data */
  t = tensor_pb("s", 6, NULL, 0);
  put_int(t, 5, 9);
  CHECK(!tensor_bytes(t, out, 64, &nb, &diag) && nb == 4 &&
        ((int32_t *)out)[0] == 9);
  t = tensor_pb("e", 1, d0, 1);
  o2m_arena arena = {0};
  o2m_tensor *tensor;
  CHECK(!decode_standalone(t, &arena, &tensor, &diag) && tensor->count == 0 &&
        tensor->data == NULL && tensor->nbytes == 0);
  o2m_arena_free(&arena);
  /* a standalone tensor cannot point at external data */
  t = tensor_pb("x", 1, d2, 1);
  pb *kv = pb_new();
  put_str(kv, 1, "location");
  put_str(kv, 2, "w.bin");
  put_msg(t, 13, kv);
  put_int(t, 14, 1);
  CHECK(tensor_bytes(t, out, 64, &nb, &diag) == O2M_ERR_UNSUPPORTED);
  /* an empty buffer is a tensor without data_type */
  memset(&diag, 0, sizeof(diag));
  CHECK(o2m_decode_tensor(&arena, NULL, 0, "e.pb", &tensor, &diag) ==
            O2M_ERR_INVALID &&
        !strncmp(diag.message, "e.pb: tensor: ", 14));
  o2m_arena_free(&arena);
}

static void test_sparse_errors(void) {
  o2m_diag diag;
  int64_t d2[] = {2}, d21[] = {2, 1}, d10[] = {10};
  pb *sv = tensor_pb("sp", 1, d2, 1), *si = tensor_pb("", 6, d2, 1);
  put_float(sv, 4, 1.0f);
  put_float(sv, 4, 2.0f);
  int64_t idx[] = {0, 1};
  put_packed(si, 5, idx, 2);
  pb *sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si); /* int32 indices: refused */
  put_packed(sp, 3, d10, 1);
  pb *g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "sparse_initializer 0 'sp'"));
  si = tensor_pb("", 7, d21, 2);
  put_packed(si, 7, idx, 2);
  sp = pb_new();
  put_msg(sp, 1, sv);
  put_msg(sp, 2, si); /* [2,1] coordinates for a 1-D tensor: fine */
  put_packed(sp, 3, d10, 1);
  g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_OK);
  sp = pb_new();
  put_msg(sp, 2, si);
  g = pb_new();
  put_msg(g, 15, sp);
  CHECK(try_decode(model_pb(g), &diag) == O2M_ERR_INVALID &&
        strstr(diag.message, "values is missing"));
}

/* ---- external data ---- */

static char tmpdir[64];

static void write_file(const char *name, const void *data, size_t n) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n) fwrite(data, 1, n, f);
  fclose(f);
}

/* A model with one float initializer of `count` elements stored in
 * `location` at `offset`/`length` (NULL: not written). */
static pb *external_model(const char *name, int64_t count,
                          const char *location, const char *offset,
                          const char *length) {
  pb *t = tensor_pb(name, 1, &count, 1);
  const char *keys[] = {"location", "offset", "length", "checksum"};
  const char *values[] = {location, offset, length, "abc"};
  for (int i = 0; i < 4; i++) {
    if (!values[i]) continue;
    pb *kv = pb_new();
    put_str(kv, 1, keys[i]);
    put_str(kv, 2, values[i]);
    put_msg(t, 13, kv);
  }
  put_int(t, 14, 1);
  pb *g = pb_new();
  put_msg(g, 5, t);
  return model_pb(g);
}

/* Decodes and resolves against the temp dir; returns the status. */
static o2m_status resolve(const pb *p, const char *base, o2m_diag *diag,
                          o2m_model **keep) {
  o2m_status st;
  o2m_model *m = decode_bytes(p->b, p->n, base, &st, diag);
  if (!st) st = o2m_resolve_external_data(m, diag);
  if (keep)
    *keep = m;
  else
    release(m);
  return st;
}

static void test_external_data(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/o2m_test_XXXXXX");
  if (!mkdtemp(tmpdir)) abort();
  float weights[16];
  for (int i = 0; i < 16; i++) weights[i] = (float)i;
  write_file("w.bin", weights, sizeof(weights));
  write_file("empty.bin", NULL, 0);
  char sub[128], link[128], linked_dir[128];
  snprintf(sub, sizeof(sub), "%s/sub", tmpdir);
  mkdir(sub, 0700);
  write_file("sub/v.bin", weights, 8);
  snprintf(link, sizeof(link), "%s/escape", tmpdir);
  if (symlink("/etc", link) != 0) abort();
  snprintf(linked_dir, sizeof(linked_dir), "%s/linked", tmpdir);
  if (symlink("sub", linked_dir) != 0) abort();
  o2m_diag diag;
  o2m_model *m;

  /* an offset and length inside the file: a view into its mapping */
  pb *p = external_model("w", 2, "w.bin", "16", "8");
  CHECK(resolve(p, tmpdir, &diag, &m) == O2M_OK);
  if (m->n_external == 1) {
    const o2m_tensor *t = m->external[0];
    CHECK(t->origin == O2M_DATA_EXTERNAL && t->external->offset == 16 &&
          t->external->length == 8 && !strcmp(t->external->location, "w.bin"));
    CHECK(t->data && ((const float *)t->data)[0] == 4.0f &&
          ((const float *)t->data)[1] == 5.0f && m->n_mappings == 1);
  } else {
    CHECK(!"one external tensor");
  }
  release(m);

  /* two tensors in one file and one in a subdirectory: two mappings */
  pb *t1 = tensor_pb("a", 1, (int64_t[]){16}, 1),
     *t2 = tensor_pb("b", 1, (int64_t[]){2}, 1),
     *t3 = tensor_pb("c", 1, (int64_t[]){2}, 1);
  const char *locs[] = {"w.bin", "./w.bin", "sub/v.bin"};
  pb *ts[] = {t1, t2, t3};
  pb *g = pb_new();
  for (int i = 0; i < 3; i++) {
    pb *kv = pb_new();
    put_str(kv, 1, "location");
    put_str(kv, 2, locs[i]);
    put_msg(ts[i], 13, kv);
    if (i == 1) {
      kv = pb_new();
      put_str(kv, 1, "length");
      put_str(kv, 2, "8");
      put_msg(ts[i], 13, kv);
    }
    put_int(ts[i], 14, 1);
    put_msg(g, 5, ts[i]);
  }
  CHECK(resolve(model_pb(g), tmpdir, &diag, &m) == O2M_OK &&
        m->n_external == 3 && m->n_mappings == 2 &&
        m->external[0]->data == m->external[1]->data);
  release(m);

  /* a zero-element tensor in an empty file */
  CHECK(resolve(external_model("e", 0, "empty.bin", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_OK);
  /* refusals */
  CHECK(resolve(external_model("w", 2, "../w.bin", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "'..'"));
  CHECK(resolve(external_model("w", 2, "sub/../../x", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, "/etc/passwd", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "absolute"));
  CHECK(resolve(external_model("w", 2, "escape/passwd", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "outside"));
  CHECK(resolve(external_model("w", 2, "missing.bin", NULL, NULL), tmpdir,
                &diag, NULL) == O2M_ERR_IO);
  CHECK(resolve(external_model("w", 2, "sub", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_ERR_IO);
  CHECK(resolve(external_model("w", 2, "w.bin", "100", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "past the end"));
  CHECK(resolve(external_model("w", 2, "w.bin", "60", "8"), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "past the end"));
  CHECK(resolve(external_model("w", 2, "w.bin", "0", "12"), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "holds 12 bytes"));
  /* without a length the rest of the file must fit exactly */
  CHECK(resolve(external_model("w", 2, "w.bin", "0", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 16, "w.bin", NULL, NULL), tmpdir, &diag,
                NULL) == O2M_OK);
  /* malformed numbers and a missing location fail at decode time */
  CHECK(resolve(external_model("w", 2, "w.bin", "12a", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID &&
        strstr(diag.message, "offset '12a'"));
  CHECK(resolve(external_model("w", 2, "w.bin", "-8", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, "w.bin", "99999999999999999999", NULL),
                tmpdir, &diag, NULL) == O2M_ERR_INVALID);
  CHECK(resolve(external_model("w", 2, NULL, "0", NULL), tmpdir, &diag,
                NULL) == O2M_ERR_INVALID);
  /* no data directory */
  CHECK(resolve(external_model("w", 2, "w.bin", NULL, NULL), NULL, &diag,
                NULL) == O2M_ERR_INVALID);
  /* a data directory reached through a symlink: fine, and confined */
  CHECK(resolve(external_model("v", 2, "v.bin", NULL, NULL), linked_dir,
                &diag, NULL) == O2M_OK);
  CHECK(resolve(external_model("w", 16, "../w.bin", NULL, NULL), linked_dir,
                &diag, NULL) == O2M_ERR_INVALID);
  /* the mapping table is full */
  p = external_model("w", 16, "w.bin", NULL, NULL);
  o2m_status st;
  m = decode_bytes(p->b, p->n, tmpdir, &st, &diag);
  m->n_mappings = 64;
  for (int i = 0; i < 64; i++) m->mappings[i].path = "";
  CHECK(!st && o2m_resolve_external_data(m, &diag) == O2M_ERR_UNSUPPORTED);
  m->n_mappings = 0;
  release(m);
  /* inline data next to data_location EXTERNAL */
  g = pb_new();
  t1 = tensor_pb("w", 1, (int64_t[]){2}, 1);
  pb *kv = pb_new();
  put_str(kv, 1, "location");
  put_str(kv, 2, "w.bin");
  put_msg(t1, 13, kv);
  put_int(t1, 14, 1);
  put_len(t1, 9, weights, 8);
  put_msg(g, 5, t1);
  CHECK(resolve(model_pb(g), tmpdir, &diag, NULL) == O2M_ERR_INVALID);

  char path[256];
  const char *names[] = {"w.bin", "empty.bin", "sub/v.bin", "escape",
                         "linked"};
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
    unlink(path);
  }
  rmdir(sub);
  rmdir(tmpdir);
}

static void test_map_file(void) {
  char dir[] = "/tmp/o2m_map_XXXXXX";
  if (!mkdtemp(dir)) abort();
  char path[64];
  snprintf(path, sizeof(path), "%s/empty", dir);
  FILE *f = fopen(path, "wb");
  fclose(f);
  o2m_mapping mapping;
  o2m_diag diag = {0};
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_OK && mapping.size == 0 &&
        mapping.addr == NULL);
  o2m_unmap_file(&mapping);
  f = fopen(path, "wb");
  fputs("abc", f);
  fclose(f);
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_OK && mapping.size == 3 &&
        !memcmp(mapping.addr, "abc", 3));
  o2m_unmap_file(&mapping);
  CHECK(mapping.addr == NULL && mapping.size == 0);
  CHECK(o2m_map_file(dir, &mapping, &diag) == O2M_ERR_IO &&
        strstr(diag.message, "not a regular file"));
  unlink(path);
  memset(&diag, 0, sizeof(diag));
  CHECK(o2m_map_file(path, &mapping, &diag) == O2M_ERR_IO &&
        strstr(diag.message, path));
  rmdir(dir);
}

static void test_dtypes(void) {
  CHECK(o2m_dtype_bits(O2M_DT_FLOAT) == 32 && o2m_dtype_bits(O2M_DT_BOOL) == 8);
  CHECK(o2m_dtype_bits(O2M_DT_INT4) == 4 && o2m_dtype_bits(O2M_DT_UINT2) == 2);
  CHECK(o2m_dtype_bits(O2M_DT_COMPLEX128) == 128);
  CHECK(o2m_dtype_bits(O2M_DT_STRING) == 0 &&
        o2m_dtype_bits(O2M_DT_UNDEFINED) == 0);
  CHECK(o2m_dtype_bits((o2m_dtype)99) == 0);
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_FLOAT8E4M3FN), "float8e4m3fn"));
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_BFLOAT16), "bfloat16"));
  CHECK(!strcmp(o2m_dtype_name(O2M_DT_INT2), "int2"));
  CHECK(!strcmp(o2m_dtype_name((o2m_dtype)-1), "undefined"));
  CHECK(o2m_dtype_valid(1) && o2m_dtype_valid(26) && !o2m_dtype_valid(0) &&
        !o2m_dtype_valid(27) && !o2m_dtype_valid(-3));
  CHECK(o2m_dtype_storage_bytes(O2M_DT_FLOAT, 6) == 24);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_INT4, 3) == 2);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, 5) == 2);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, 0) == 0);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_STRING, 10) == 0);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_COMPLEX128, INT64_MAX) == SIZE_MAX);
  CHECK(o2m_dtype_storage_bytes(O2M_DT_UINT2, INT64_MAX) ==
        (size_t)(INT64_MAX / 4 + 1));
  CHECK(o2m_dtype_storage_bytes(O2M_DT_FLOAT, -1) == SIZE_MAX);
}

int main(void) {
  test_typed_fields();
  test_tensor_errors();
  test_sparse_errors();
  test_external_data();
  test_map_file();
  test_dtypes();
  pb_free_all();
  return CHECK_SUMMARY();
}

