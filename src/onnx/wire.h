/* wire.h - protobuf wire-format primitives.
 *
 * Owns: reading tags, varints, fixed-width values and length-delimited
 * payloads out of an untrusted byte range, skipping fields of every wire
 * type (groups included), and walking packed or unpacked repeated scalars.
 * Knows nothing about ONNX messages and never allocates: every failure is
 * reported as an o2m_wire_error (a reason and the byte offset where it was
 * found) that the caller turns into a diagnostic.
 */
#ifndef O2M_WIRE_H
#define O2M_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Wire types, numbered as in the encoding. */
enum {
  O2M_WIRE_VARINT = 0,
  O2M_WIRE_I64 = 1,
  O2M_WIRE_LEN = 2,
  O2M_WIRE_SGROUP = 3,
  O2M_WIRE_EGROUP = 4,
  O2M_WIRE_I32 = 5
};

/* How the elements of a repeated scalar field are encoded. */
typedef enum o2m_wire_scalar {
  O2M_SCALAR_VARINT, /* int32, int64, uint64, enum, bool */
  O2M_SCALAR_FIXED32, /* float */
  O2M_SCALAR_FIXED64  /* double */
} o2m_wire_scalar;

typedef struct o2m_wire_error {
  const char *reason; /* static text, e.g. "truncated varint" */
  size_t offset;      /* from the start of the whole buffer */
} o2m_wire_error;

/* A cursor over one message. `base` is the start of the whole buffer so
 * that offsets in errors are file offsets. */
typedef struct o2m_wire {
  const uint8_t *base, *pos, *end;
} o2m_wire;

/* One field as read by o2m_wire_next. A group (never used by ONNX) has
 * already been skipped whole when it is returned, with no payload. */
typedef struct o2m_wire_field {
  uint32_t number;
  int type;          /* O2M_WIRE_* */
  uint64_t value;    /* VARINT, I64 and I32 fields */
  const uint8_t *data; /* LEN fields: the payload */
  size_t len;
  size_t offset;     /* of the tag */
} o2m_wire_field;

/* A cursor over `len` bytes at `data`, all inside the buffer at `base`. */
o2m_wire o2m_wire_sub(const uint8_t *base, const uint8_t *data, size_t len);

/* Reads one varint of at most 10 bytes at *pos (< end), advancing *pos.
 * Returns NULL on success, else the reason: truncated, longer than 10
 * bytes, or a value that does not fit 64 bits. */
const char *o2m_wire_read_varint(const uint8_t **pos, const uint8_t *end,
                                 uint64_t *value);

/* Reads the next field. Returns 1 with *field filled, 0 at the end of the
 * message, -1 with *err filled when the bytes are malformed. */
int o2m_wire_next(o2m_wire *wire, o2m_wire_field *field,
                  o2m_wire_error *err);

/* The name of a wire type for messages ("varint", "length-delimited"...). */
const char *o2m_wire_type_name(int type);

/* Repeated scalars: a field holds either one element in its own wire type
 * or a packed run in a length-delimited payload. */
typedef struct o2m_wire_scalars {
  o2m_wire_scalar kind;
  const uint8_t *base, *pos, *end; /* packed payload */
  uint64_t single;                 /* unpacked element */
  int single_left;
} o2m_wire_scalars;

/* Counts the elements a field carries, checking that its wire type suits
 * `kind` and that a packed payload is well formed at its end. Returns 0,
 * or -1 with *err filled. */
int o2m_wire_count_scalars(const uint8_t *base, const o2m_wire_field *field,
                           o2m_wire_scalar kind, size_t *count,
                           o2m_wire_error *err);

/* Starts walking the elements of a field already accepted by
 * o2m_wire_count_scalars. */
void o2m_wire_scalars_begin(o2m_wire_scalars *it, const uint8_t *base,
                            const o2m_wire_field *field,
                            o2m_wire_scalar kind);
/* Returns 1 with the element's bits in *value (floats as their IEEE bit
 * pattern), 0 when done, -1 with *err filled. */
int o2m_wire_scalars_next(o2m_wire_scalars *it, uint64_t *value,
                          o2m_wire_error *err);

#endif
