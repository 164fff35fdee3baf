/* decode.h - internal to src/onnx: what the ONNX message decoders
 * (decode_model.c, decode_graph.c, decode_tensor.c) share.
 *
 * Owns: the decoding context, the trail of positions ("graph 'main' node 3
 * 'conv1' (Conv) attribute 'pads'") that every error message carries, the
 * small field readers that check wire types, and the entry points of each
 * message decoder. Each decoder reads one serialized message (a view into
 * the buffer) and fills arena structures of ir/ir.h.
 */
#ifndef O2M_DECODE_H
#define O2M_DECODE_H

#include "ir/ir.h"
#include "onnx/wire.h"

/* Positions open at once (graph, node, attribute, tensor, type, dim...);
 * bounds the recursion of nested subgraphs and types. */
enum { O2M_MAX_NESTING = 200 };

/* One step of the trail, living on the stack of the decoder that pushed it. */
typedef struct o2m_where {
  const struct o2m_where *outer;
  const char *kind; /* "graph", "node", "attribute", "initializer"... */
  int64_t index;    /* < 0: not shown */
  /* Where the name (and for nodes the op_type) will be once read; it is
   * read when a message is formatted, so a name decoded after the frame
   * was opened still shows. NULL, or pointing at "": not shown. */
  const char *const *name;
  const char *const *op;
} o2m_where;

typedef struct o2m_decoder {
  o2m_model *model; /* NULL for a standalone tensor */
  o2m_arena *arena;
  o2m_diag *diag;
  const char *file;    /* first word of every message */
  const uint8_t *base; /* start of the buffer: byte offsets */
  const o2m_where *where;
  int depth;
  /* base is the model's own file mapping: pages the decoder has moved past
   * are released as it goes (see o2m_dec_next) */
  int release;
  const uint8_t *release_mark; /* released below this point in this pass */
} o2m_decoder;

/* ---- context and errors (decode_common.c) ---- */

/* Opens a position named `kind` (index < 0: none); fails when positions
 * nest deeper than O2M_MAX_NESTING. Close it with o2m_dec_pop. */
o2m_status o2m_dec_push(o2m_decoder *d, o2m_where *w, const char *kind,
                        int64_t index, size_t offset);
void o2m_dec_pop(o2m_decoder *d, const o2m_where *w);

/* "<file>: <trail>: <reason> at byte <offset>" (no offset when it is
 * O2M_NO_OFFSET); returns `status`. */
#define O2M_NO_OFFSET SIZE_MAX
o2m_status o2m_dec_fail(o2m_decoder *d, o2m_status status, size_t offset,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same text as a warning; decoding goes on. */
void o2m_dec_warn(o2m_decoder *d, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
o2m_status o2m_dec_wire_fail(o2m_decoder *d, const o2m_wire_error *err);
o2m_status o2m_dec_nomem(o2m_decoder *d);

/* The byte offset of a message view. */
size_t o2m_dec_offset(const o2m_decoder *d, o2m_bytes msg);
/* Stores an arena array of n elements of `size` bytes into *(void **)out;
 * NULL (and no error) when n is 0. */
o2m_status o2m_dec_array(o2m_decoder *d, int n, size_t size, void *out);
/* Ends a field loop: `st` if set, else the parse error that stopped the
 * loop (r < 0), else O2M_OK. */
o2m_status o2m_dec_done(const o2m_decoder *d, o2m_status st, int r);

/* Reads the next field of `w`: returns 1 with *f filled, 0 at the end, -1
 * after recording a parse error. */
int o2m_dec_next(o2m_decoder *d, o2m_wire *w, o2m_wire_field *f);

/* Field readers: each checks the wire type and names `field` on error. */
o2m_status o2m_dec_expect(o2m_decoder *d, const o2m_wire_field *f, int type,
                          const char *field);
/* A NUL-terminated arena copy; embedded NUL bytes are refused. */
o2m_status o2m_dec_string(o2m_decoder *d, const o2m_wire_field *f,
                          const char *field, const char **out);
/* The same for a domain, with "ai.onnx" mapped to "". */
o2m_status o2m_dec_domain(o2m_decoder *d, const o2m_wire_field *f,
                          const char *field, const char **out);
o2m_status o2m_dec_int64(o2m_decoder *d, const o2m_wire_field *f,
                         const char *field, int64_t *out);
/* A singular sub-message: its payload; a second occurrence is refused
 * (protobuf would merge the two, which no ONNX writer relies on). */
o2m_status o2m_dec_message(o2m_decoder *d, const o2m_wire_field *f,
                           const char *field, o2m_bytes *out);
/* Counting pass of a repeated field: adds this occurrence's elements to
 * *n (one message or string; a packed run of scalars counts each). */
o2m_status o2m_dec_count_len(o2m_decoder *d, const o2m_wire_field *f,
                             const char *field, int *n);
o2m_status o2m_dec_count_scalars(o2m_decoder *d, const o2m_wire_field *f,
                                 const char *field, o2m_wire_scalar kind,
                                 int *n);
/* Filling pass: the next element of a walk begun with
 * o2m_wire_scalars_begin on a counted field; 1, 0 at the end, -1 after
 * recording a parse error. */
int o2m_dec_next_scalar(o2m_decoder *d, o2m_wire_scalars *it,
                        uint64_t *value);

/* The byte range of a message covering every repeated field (recorded in
 * the counting pass so that the filling pass walks only that range). */
typedef struct o2m_span {
  const uint8_t *from, *to;
} o2m_span;
void o2m_span_add(o2m_span *span, const o2m_decoder *d,
                  const o2m_wire_field *f, const o2m_wire *w);
o2m_wire o2m_span_wire(const o2m_decoder *d, const o2m_span *span);

/* ---- message decoders ---- */

/* decode_tensor.c. `kind` and `index` name the position ("initializer",
 * 3); the tensor goes into the arena. */
o2m_status o2m_dec_tensor(o2m_decoder *d, o2m_bytes msg, const char *kind,
                          int64_t index, o2m_tensor **out);
o2m_status o2m_dec_sparse_tensor(o2m_decoder *d, o2m_bytes msg,
                                 const char *kind, int64_t index,
                                 o2m_sparse_tensor **out);

/* decode_graph.c. `owner` is the node whose attribute holds the graph
 * (NULL for the main graph). */
o2m_status o2m_dec_graph(o2m_decoder *d, o2m_bytes msg, const char *kind,
                         int64_t index, o2m_node *owner, o2m_graph **out);
/* `graph` is the graph holding the node, NULL inside a function. */
o2m_status o2m_dec_node(o2m_decoder *d, o2m_bytes msg, int64_t index,
                        o2m_graph *graph, o2m_node **out);
o2m_status o2m_dec_attr(o2m_decoder *d, o2m_bytes msg, int64_t index,
                        o2m_node *owner, o2m_attr *out);
o2m_status o2m_dec_value_info(o2m_decoder *d, o2m_bytes msg,
                              const char *kind, int64_t index,
                              o2m_value_info *out);

/* decode_model.c */
o2m_status o2m_dec_string_pair(o2m_decoder *d, o2m_bytes msg,
                               const char *kind, int64_t index,
                               o2m_string_pair *out);

#endif
