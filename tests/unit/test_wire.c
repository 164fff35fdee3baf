/* test_wire.c - unit tests of the protobuf wire primitives (src/onnx/wire.c)
 * on hand-written byte strings: varint limits, every wire type, groups,
 * and packed or unpacked repeated scalars. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "onnx/wire.h"

/* Reads one varint from `n` bytes; returns the error reason or NULL. */
static const char *varint(const uint8_t *bytes, size_t n, uint64_t *value,
                          size_t *used) {
  const uint8_t *p = bytes;
  const char *why = o2m_wire_read_varint(&p, bytes + n, value);
  *used = (size_t)(p - bytes);
  return why;
}

static void test_varints(void) {
  uint64_t v;
  size_t used;
  static const uint8_t zero[] = {0x00};
  CHECK(!varint(zero, 1, &v, &used) && v == 0 && used == 1);
  static const uint8_t v150[] = {0x96, 0x01};
  CHECK(!varint(v150, 2, &v, &used) && v == 150 && used == 2);
  /* the largest value takes exactly 10 bytes */
  static const uint8_t max[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  CHECK(!varint(max, 10, &v, &used) && v == UINT64_MAX && used == 10);
  /* -1 as an int64 is that same encoding */
  CHECK((int64_t)v == -1);
  /* a tenth byte carrying more than the 64th bit overflows */
  static const uint8_t overflow[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0x02};
  const char *why = varint(overflow, 10, &v, &used);
  CHECK(why && strstr(why, "overflow"));
  /* eleven bytes are too many, even when the value would fit */
  static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x80, 0x81, 0x00};
  why = varint(eleven, 11, &v, &used);
  CHECK(why && strstr(why, "longer than 10"));
  /* non-minimal encodings within 10 bytes are valid protobuf */
  static const uint8_t padded[] = {0x81, 0x80, 0x80, 0x00};
  CHECK(!varint(padded, 4, &v, &used) && v == 1 && used == 4);
  /* truncation: a continuation bit at the end, or nothing at all */
  static const uint8_t cut[] = {0x80, 0x80};
  why = varint(cut, 2, &v, &used);
  CHECK(why && strstr(why, "truncated"));
  why = varint(cut, 0, &v, &used);
  CHECK(why && strstr(why, "truncated"));
}

/* Reads every field of `bytes`; returns the last o2m_wire_next result. */
static int read_all(const uint8_t *bytes, size_t n, o2m_wire_field *fields,
                    int max, int *count, o2m_wire_error *err) {
  o2m_wire w = o2m_wire_sub(bytes, bytes, n);
  o2m_wire_field f;
  int r;
  *count = 0;
  while ((r = o2m_wire_next(&w, &f, err)) > 0)
    if (*count < max) fields[(*count)++] = f;
  return r;
}

static void test_wire_types(void) {
  /* field 1 varint 300; field 2 fixed64; field 3 "abc"; field 4 fixed32 */
  static const uint8_t msg[] = {
      0x08, 0xAC, 0x02,                                     /* 1: varint */
      0x11, 1, 2, 3, 4, 5, 6, 7, 8,                         /* 2: fixed64 */
      0x1A, 0x03, 'a', 'b', 'c',                            /* 3: len */
      0x25, 0x00, 0x00, 0x80, 0x3F,                         /* 4: fixed32 */
      0x80, 0x01, 0x07,                                     /* 16: varint */
  };
  o2m_wire_field f[8];
  o2m_wire_error err;
  int n;
  CHECK(read_all(msg, sizeof(msg), f, 8, &n, &err) == 0 && n == 5);
  CHECK(f[0].number == 1 && f[0].type == O2M_WIRE_VARINT && f[0].value == 300);
  CHECK(f[1].number == 2 && f[1].type == O2M_WIRE_I64 &&
        f[1].value == 0x0807060504030201ull);
  CHECK(f[2].number == 3 && f[2].type == O2M_WIRE_LEN && f[2].len == 3 &&
        memcmp(f[2].data, "abc", 3) == 0 && f[2].offset == 12);
  CHECK(f[3].number == 4 && f[3].type == O2M_WIRE_I32 &&
        f[3].value == 0x3F800000u);
  CHECK(f[4].number == 16 && f[4].value == 7);
}

static void test_groups(void) {
  /* field 5 group holding a varint and a nested group 6, then field 1 */
  static const uint8_t msg[] = {
      0x2B,             /* 5: start group */
      0x08, 0x01,       /*   1: varint */
      0x33,             /*   6: start group */
      0x12, 0x01, 'x',  /*     2: len */
      0x34,             /*   6: end group */
      0x2C,             /* 5: end group */
      0x08, 0x2A,       /* 1: varint 42 */
  };
  o2m_wire_field f[4];
  o2m_wire_error err;
  int n;
  CHECK(read_all(msg, sizeof(msg), f, 4, &n, &err) == 0 && n == 2);
  CHECK(f[0].number == 5 && f[0].type == O2M_WIRE_SGROUP);
  CHECK(f[1].number == 1 && f[1].value == 42);

  static const uint8_t stray_end[] = {0x08, 0x01, 0x2C};
  CHECK(read_all(stray_end, sizeof(stray_end), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "end-group") && err.offset == 2);
  static const uint8_t mismatched[] = {0x2B, 0x34};
  CHECK(read_all(mismatched, sizeof(mismatched), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "does not match"));
  static const uint8_t unterminated[] = {0x2B, 0x08, 0x01};
  CHECK(read_all(unterminated, sizeof(unterminated), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "without an end-group"));
  /* 100 nested groups exceed the nesting the skipper accepts */
  uint8_t deep[200];
  for (int i = 0; i < 100; i++) deep[i] = 0x2B, deep[199 - i] = 0x2C;
  CHECK(read_all(deep, sizeof(deep), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "nested"));
}

static void test_malformed(void) {
  o2m_wire_field f[4];
  o2m_wire_error err;
  int n;
  static const uint8_t wire6[] = {0x0E};
  CHECK(read_all(wire6, 1, f, 4, &n, &err) < 0 &&
        strstr(err.reason, "wire type"));
  static const uint8_t wire7[] = {0x0F};
  CHECK(read_all(wire7, 1, f, 4, &n, &err) < 0);
  static const uint8_t field0[] = {0x00, 0x01};
  CHECK(read_all(field0, 2, f, 4, &n, &err) < 0 &&
        strstr(err.reason, "field number"));
  /* a tag whose field number needs more than 29 bits */
  static const uint8_t big_tag[] = {0xF8, 0xFF, 0xFF, 0xFF, 0x7F, 0x00};
  CHECK(read_all(big_tag, sizeof(big_tag), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "field number"));
  static const uint8_t long_len[] = {0x08, 0x01, 0x0A, 0x05, 'a', 'b'};
  CHECK(read_all(long_len, sizeof(long_len), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "past the end") && err.offset == 3 && n == 1);
  static const uint8_t huge_len[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  CHECK(read_all(huge_len, sizeof(huge_len), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "past the end"));
  static const uint8_t short64[] = {0x09, 1, 2, 3};
  CHECK(read_all(short64, sizeof(short64), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "fixed64"));
  static const uint8_t short32[] = {0x0D, 1, 2, 3};
  CHECK(read_all(short32, sizeof(short32), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "fixed32"));
  static const uint8_t cut_value[] = {0x08, 0x80};
  CHECK(read_all(cut_value, sizeof(cut_value), f, 4, &n, &err) < 0 &&
        strstr(err.reason, "truncated") && err.offset == 1);
  static const uint8_t cut_tag[] = {0x80};
  CHECK(read_all(cut_tag, 1, f, 4, &n, &err) < 0 && err.offset == 0);
  CHECK(!strcmp(o2m_wire_type_name(O2M_WIRE_LEN), "length-delimited"));
  CHECK(!strcmp(o2m_wire_type_name(9), "invalid"));
}

/* Counts and walks the scalars of the single field in `msg`. */
static int walk(const uint8_t *msg, size_t n, o2m_wire_scalar kind,
                uint64_t *out, size_t max, size_t *count,
                o2m_wire_error *err) {
  o2m_wire w = o2m_wire_sub(msg, msg, n);
  o2m_wire_field f;
  if (o2m_wire_next(&w, &f, err) <= 0) return -1;
  if (o2m_wire_count_scalars(msg, &f, kind, count, err) < 0) return -1;
  o2m_wire_scalars it;
  o2m_wire_scalars_begin(&it, msg, &f, kind);
  size_t i = 0;
  uint64_t v;
  int r;
  while ((r = o2m_wire_scalars_next(&it, &v, err)) > 0)
    if (i < max) out[i++] = v;
  return r < 0 ? -1 : (int)i;
}

static void test_scalars(void) {
  uint64_t v[8];
  size_t count;
  o2m_wire_error err;
  static const uint8_t packed[] = {0x0A, 0x05, 0x01, 0x96, 0x01, 0x7F, 0x00};
  CHECK(walk(packed, sizeof(packed), O2M_SCALAR_VARINT, v, 8, &count, &err) ==
            4 &&
        count == 4 && v[0] == 1 && v[1] == 150 && v[2] == 127 && v[3] == 0);
  static const uint8_t single[] = {0x08, 0x05};
  CHECK(walk(single, 2, O2M_SCALAR_VARINT, v, 8, &count, &err) == 1 &&
        count == 1 && v[0] == 5);
  static const uint8_t floats[] = {0x0A, 0x08, 0, 0, 0x80, 0x3F,
                                   0, 0, 0, 0x40};
  CHECK(walk(floats, sizeof(floats), O2M_SCALAR_FIXED32, v, 8, &count,
             &err) == 2 &&
        v[0] == 0x3F800000u && v[1] == 0x40000000u);
  static const uint8_t bad_floats[] = {0x0A, 0x03, 0, 0, 0};
  CHECK(walk(bad_floats, sizeof(bad_floats), O2M_SCALAR_FIXED32, v, 8, &count,
             &err) < 0 &&
        strstr(err.reason, "multiple of 4"));
  static const uint8_t doubles[] = {0x09, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
  CHECK(walk(doubles, sizeof(doubles), O2M_SCALAR_FIXED64, v, 8, &count,
             &err) == 1 &&
        v[0] == 0x3FF0000000000000ull);
  static const uint8_t wrong[] = {0x08, 0x01};
  CHECK(walk(wrong, 2, O2M_SCALAR_FIXED32, v, 8, &count, &err) < 0 &&
        strstr(err.reason, "fixed32"));
  static const uint8_t cut_run[] = {0x0A, 0x02, 0x01, 0x80};
  CHECK(walk(cut_run, sizeof(cut_run), O2M_SCALAR_VARINT, v, 8, &count,
             &err) < 0 &&
        strstr(err.reason, "truncated") && err.offset == 3);
  /* an 11-byte varint inside a packed run: counted, then refused */
  uint8_t long_run[14] = {0x0A, 12};
  memset(long_run + 2, 0x80, 10);
  long_run[12] = 0x01;
  long_run[13] = 0x00;
  CHECK(walk(long_run, sizeof(long_run), O2M_SCALAR_VARINT, v, 8, &count,
             &err) < 0 &&
        strstr(err.reason, "longer than 10"));
  static const uint8_t empty_run[] = {0x0A, 0x00};
  CHECK(walk(empty_run, 2, O2M_SCALAR_VARINT, v, 8, &count, &err) == 0 &&
        count == 0);
}

int main(void) {
  test_varints();
  test_wire_types();
  test_groups();
  test_malformed();
  test_scalars();
  return CHECK_SUMMARY();
}
