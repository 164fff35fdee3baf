/* pb_tree.h - a protobuf message held as a tree of its fields, for the
 * structure-aware fuzzers: parsed with a schema that names which
 * length-delimited fields are sub-messages, edited, written back. Knows
 * nothing of ONNX beyond the schema callback it is given. */
#ifndef O2M_FUZZ_PB_TREE_H
#define O2M_FUZZ_PB_TREE_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2, PB_FIXED32 = 5 };

typedef struct pb_msg pb_msg;

typedef struct pb_field {
  uint32_t number;
  uint8_t wire;   /* PB_VARINT, PB_FIXED64, PB_BYTES or PB_FIXED32 */
  uint64_t value; /* the varint or fixed value */
  uint8_t *bytes; /* PB_BYTES that is not a message: owned, `len` bytes */
  size_t len;
  pb_msg *msg; /* PB_BYTES parsed as a message of the schema's kind */
} pb_field;

struct pb_msg {
  int kind;
  pb_field *fields;
  size_t count, cap;
};

/* The kind of message field `number` of a `parent_kind` message holds, or
 * -1 when it holds bytes. */
typedef int (*pb_schema_fn)(int parent_kind, uint32_t number);

/* NULL when the bytes are not a message (a sub-message that does not parse
 * is kept as bytes instead). */
pb_msg *pb_parse(const uint8_t *data, size_t size, int kind, pb_schema_fn schema);
size_t pb_size(const pb_msg *m);
/* Writes pb_size(m) bytes to out. */
void pb_write(const pb_msg *m, uint8_t *out);
pb_msg *pb_clone(const pb_msg *m);
void pb_free(pb_msg *m);

/* A deep copy of `field` inserted at position `at` (at most m->count). */
void pb_insert(pb_msg *m, size_t at, const pb_field *field);
void pb_remove(pb_msg *m, size_t at);
/* Replaces a bytes field's content with a copy of data[0..len). */
void pb_set_bytes(pb_field *f, const void *data, size_t len);

/* Packed repeated varints: decodes up to `max` values (returns how many). */
size_t pb_varints_decode(const uint8_t *data, size_t len, uint64_t *out, size_t max);
/* Encodes `n` values into a new buffer (*len bytes; free it). */
uint8_t *pb_varints_encode(const uint64_t *values, size_t n, size_t *len);

#endif
