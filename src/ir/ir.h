/* ir.h - the in-memory form of an ONNX model: decoded protobuf plus the
 * linked graph IR that inference and the emitters walk.
 *
 * Owns: the data structures only. The wire decoder (src/onnx) fills the
 * "as written" fields; linking (src/ir/link.c) fills the "linked" fields;
 * inference (src/infer) fills value types and known constant values.
 *
 * Memory: every structure, array and string here lives in the model's
 * arena (o2m_model.arena) and is freed with it. Tensor payloads are views
 * into a mapped file (the model or its external data) whenever the bytes
 * are already in ONNX's raw little-endian layout; only typed repeated
 * fields (float_data, int32_data, ...) are decoded into arena memory.
 * Strings are NUL-terminated arena copies; an absent string is "".
 */
#ifndef O2M_IR_H
#define O2M_IR_H

#include <stddef.h>
#include <stdint.h>

#include "onnx2mlir.h"
#include "util/arena.h"
#include "util/strmap.h"

/* ---- element types: TensorProto.DataType numbering --------------------- */
typedef enum o2m_dtype {
  O2M_DT_UNDEFINED = 0,
  O2M_DT_FLOAT = 1,
  O2M_DT_UINT8 = 2,
  O2M_DT_INT8 = 3,
  O2M_DT_UINT16 = 4,
  O2M_DT_INT16 = 5,
  O2M_DT_INT32 = 6,
  O2M_DT_INT64 = 7,
  O2M_DT_STRING = 8,
  O2M_DT_BOOL = 9,
  O2M_DT_FLOAT16 = 10,
  O2M_DT_DOUBLE = 11,
  O2M_DT_UINT32 = 12,
  O2M_DT_UINT64 = 13,
  O2M_DT_COMPLEX64 = 14,
  O2M_DT_COMPLEX128 = 15,
  O2M_DT_BFLOAT16 = 16,
  O2M_DT_FLOAT8E4M3FN = 17,
  O2M_DT_FLOAT8E4M3FNUZ = 18,
  O2M_DT_FLOAT8E5M2 = 19,
  O2M_DT_FLOAT8E5M2FNUZ = 20,
  O2M_DT_UINT4 = 21,
  O2M_DT_INT4 = 22,
  O2M_DT_FLOAT4E2M1 = 23,
  O2M_DT_FLOAT8E8M0 = 24,
  O2M_DT_UINT2 = 25,
  O2M_DT_INT2 = 26,
  O2M_DT_COUNT
} o2m_dtype;

/* A byte range: a view into a mapping or into the arena. */
typedef struct o2m_bytes {
  const uint8_t *ptr;
  size_t len;
} o2m_bytes;

/* ---- types ------------------------------------------------------------- */

/* One dimension: a known size, or a symbol. Two dims with the same symbol
 * name are equal. Unknown dims get fresh symbols ("?0", "?1", ... are
 * never written to output; emitters print `?`). */
typedef struct o2m_dim {
  int64_t size;    /* >= 0 when known, -1 when symbolic */
  const char *sym; /* NULL when known */
} o2m_dim;

typedef enum o2m_type_kind {
  O2M_TYPE_UNKNOWN = 0, /* not declared, not inferred */
  O2M_TYPE_TENSOR,
  O2M_TYPE_SPARSE_TENSOR,
  O2M_TYPE_SEQUENCE,
  O2M_TYPE_OPTIONAL,
  O2M_TYPE_MAP
} o2m_type_kind;

typedef struct o2m_type {
  o2m_type_kind kind;
  o2m_dtype elem;         /* tensor/sparse: element type; map: key type */
  int rank;               /* tensor/sparse: -1 when unranked */
  o2m_dim *dims;          /* `rank` entries */
  struct o2m_type *inner; /* sequence/optional element; map value */
} o2m_type;

/* ---- tensors ----------------------------------------------------------- */

typedef enum o2m_data_origin {
  O2M_DATA_INLINE = 0, /* raw_data: a view into the model's mapping */
  O2M_DATA_DECODED,    /* typed field decoded into the arena */
  O2M_DATA_EXTERNAL,   /* a view into a mapped external file */
  O2M_DATA_COMPUTED    /* computed at import (constant folding) */
} o2m_data_origin;

typedef struct o2m_external_ref {
  const char *location; /* as written, relative to the data dir */
  int64_t offset;       /* 0 when absent */
  int64_t length;       /* -1 when absent: to the end of the file */
} o2m_external_ref;

typedef struct o2m_tensor {
  const char *name;
  o2m_dtype dtype;
  int rank;
  int64_t *dims;
  int64_t count; /* product of dims, overflow checked by the decoder */
  /* Payload in ONNX raw layout (little-endian; sub-byte types packed two
   * or four per byte, low bits first; bool one byte each). NULL when
   * count == 0 or for STRING tensors. */
  const uint8_t *data;
  size_t nbytes;
  o2m_bytes *strings; /* STRING tensors: `count` entries */
  o2m_data_origin origin;
  o2m_external_ref *external; /* set when data_location == EXTERNAL */
  const char *doc;
} o2m_tensor;

typedef struct o2m_sparse_tensor {
  o2m_tensor *values;  /* 1-D, NNZ entries; its name is the sparse name */
  o2m_tensor *indices; /* [NNZ] linear or [NNZ, rank] */
  int rank;
  int64_t *dims;
} o2m_sparse_tensor;

/* ---- attributes: AttributeProto.AttributeType numbering ---------------- */
typedef enum o2m_attr_type {
  O2M_ATTR_UNDEFINED = 0,
  O2M_ATTR_FLOAT = 1,
  O2M_ATTR_INT = 2,
  O2M_ATTR_STRING = 3,
  O2M_ATTR_TENSOR = 4,
  O2M_ATTR_GRAPH = 5,
  O2M_ATTR_FLOATS = 6,
  O2M_ATTR_INTS = 7,
  O2M_ATTR_STRINGS = 8,
  O2M_ATTR_TENSORS = 9,
  O2M_ATTR_GRAPHS = 10,
  O2M_ATTR_SPARSE_TENSOR = 11,
  O2M_ATTR_SPARSE_TENSORS = 12,
  O2M_ATTR_TYPE_PROTO = 13,
  O2M_ATTR_TYPE_PROTOS = 14
} o2m_attr_type;

struct o2m_graph;

typedef struct o2m_attr {
  const char *name;
  o2m_attr_type type;
  const char *ref_attr_name; /* inside functions: refers to a caller attr */
  const char *doc;
  /* scalars */
  float f;
  int64_t i;
  o2m_bytes s;
  o2m_tensor *t;
  struct o2m_graph *g;
  o2m_sparse_tensor *sparse;
  o2m_type *tp;
  /* lists: `count` entries in the array matching `type` */
  int count;
  float *floats;
  int64_t *ints;
  o2m_bytes *strings;
  o2m_tensor **tensors;
  struct o2m_graph **graphs;
  o2m_sparse_tensor **sparses;
  o2m_type **tps;
} o2m_attr;

/* ---- nodes, values, graphs --------------------------------------------- */

struct o2m_value;
struct o2m_op_info;

typedef struct o2m_node {
  /* as written */
  const char *name; /* "" when the model gave none */
  const char *op_type;
  const char *domain; /* "" for the default domain ("ai.onnx" maps to "") */
  const char *overload;
  const char *doc;
  int n_inputs, n_outputs;
  const char **input_names;  /* "" marks a missing optional input */
  const char **output_names; /* "" marks an unused optional output */
  int n_attrs;
  o2m_attr *attrs;
  /* linked */
  struct o2m_value **inputs;  /* NULL where the input is missing */
  struct o2m_value **outputs; /* NULL where the output is unused */
  int n_captures;             /* outer values used by the node's subgraphs */
  struct o2m_value **captures;
  int64_t opset; /* version of the node's domain imported by the model
                   (or by the function it was inlined from) */
  const struct o2m_op_info *op; /* NULL when the op table lacks the op */
  struct o2m_graph *graph;      /* the graph holding the node */
  int index;                    /* position in graph->nodes */
  const char *rewrite_failure;  /* why a transform rule left the node as
                                   it is (src/transform), or NULL */
} o2m_node;

typedef enum o2m_value_kind {
  O2M_VALUE_INPUT,       /* graph input without initializer */
  O2M_VALUE_INITIALIZER, /* initializer (also when listed as an input) */
  O2M_VALUE_NODE,        /* produced by a node */
  O2M_VALUE_OUTER        /* a subgraph's reference to an enclosing value */
} o2m_value_kind;

typedef struct o2m_value {
  const char *name;
  o2m_value_kind kind;
  o2m_type type;            /* declared for inputs, inferred otherwise */
  const o2m_type *declared; /* value_info / output type, when given */
  o2m_node *producer;       /* O2M_VALUE_NODE */
  int producer_output;
  o2m_tensor *init;          /* O2M_VALUE_INITIALIZER */
  o2m_sparse_tensor *sparse; /* a sparse initializer */
  struct o2m_value *outer;   /* O2M_VALUE_OUTER: the enclosing value */
  /* A value known at import time: initializer data, a Constant's value,
   * or data propagated through shape computations. NULL if unknown. */
  const o2m_tensor *known;
  /* A 1-D integer value (typically from Shape) whose entries are known
   * only as dims: each a known size or a symbol. Lets symbolic dims flow
   * through Shape -> Gather -> Concat -> Reshape. NULL when not tracked. */
  const o2m_dim *shape_value;
  int shape_value_len;
  /* A sequence's element count when known (run specializes a sequence
   * input to the count it is given; SequenceLength folds it), else -1. */
  int64_t seq_length;
  struct o2m_graph *graph;
  int use_count;
  int declared_conflict; /* inference disagreed with `declared` (warned once) */
} o2m_value;

typedef struct o2m_value_info {
  const char *name;
  o2m_type type; /* kind O2M_TYPE_UNKNOWN when not given */
  const char *doc;
} o2m_value_info;

typedef struct o2m_graph {
  /* as written */
  const char *name;
  const char *doc;
  int n_nodes;
  o2m_node **nodes; /* after linking: in topological order */
  int n_inputs, n_outputs, n_value_infos;
  o2m_value_info *inputs, *outputs, *value_infos;
  int n_inits, n_sparse_inits;
  o2m_tensor **inits;
  o2m_sparse_tensor **sparse_inits;
  /* linked */
  struct o2m_graph *parent;   /* NULL for the main graph */
  o2m_node *owner;            /* the node whose attribute holds this graph */
  o2m_value **input_values;   /* n_inputs: graph inputs (incl. initialized) */
  o2m_value **output_values;  /* n_outputs */
  int n_values;
  o2m_value **values;         /* every value defined or captured here */
  o2m_strmap value_by_name;
  int inferred; /* set once inference has typed this graph's values */
  /* An If branch that cannot be built for the known shapes while the
   * If's condition is unknown until run time: why (the failure of its
   * inference, naming the node), else NULL. Set by each inference of the
   * If; the transform layer leaves such a branch alone and the emitters
   * compile it to code that reports this, only if the branch is taken. */
  const char *unbuildable;
} o2m_graph;

typedef struct o2m_opset {
  const char *domain; /* "" for the default domain */
  int64_t version;
} o2m_opset;

typedef struct o2m_string_pair {
  const char *key, *value;
} o2m_string_pair;

typedef struct o2m_function {
  const char *name, *domain, *overload, *doc;
  int n_inputs, n_outputs, n_attr_names, n_attr_defaults, n_nodes;
  const char **inputs, **outputs, **attr_names;
  o2m_attr *attr_defaults; /* attribute_proto: attributes with defaults */
  o2m_node **nodes;
  int n_opsets;
  o2m_opset *opsets;
  int n_value_infos;
  o2m_value_info *value_infos;
} o2m_function;

typedef struct o2m_mapping {
  void *addr;
  size_t size;
  const char *path;
  uint64_t dev, ino; /* the file mapped (o2m_mapping_copy checks it) */
} o2m_mapping;

/* The public handle (opaque in onnx2mlir.h). */
struct o2m_model {
  o2m_arena arena;
  const char *path;     /* for messages */
  const char *base_dir; /* resolves external data; NULL refuses it */
  int n_mappings;
  o2m_mapping mappings[64]; /* [0] the model file when loaded from a path */

  int64_t ir_version, model_version;
  const char *producer_name, *producer_version, *domain, *doc;
  int n_opsets;
  o2m_opset *opsets;
  int n_metadata;
  o2m_string_pair *metadata;
  o2m_graph *graph;
  int n_functions;
  o2m_function *functions;

  /* every tensor whose data lives in an external file, for resolution */
  int n_external, cap_external;
  o2m_tensor **external;

  int next_symbol; /* fresh-symbol counter used by inference */
  double transform_ms; /* how long the last o2m_transform_for_target took (timings) */
};

/* The version of `domain` imported by the model; 0 when not imported.
 * "ai.onnx" and "" are the same domain. */
int64_t o2m_model_opset(const o2m_model *model, const char *domain);

/* A fresh symbol name ("?0", "?1", ...) for an unknown dim, in the arena;
 * NULL when out of memory. Used by the decoder for dims that carry neither
 * dim_value nor dim_param, and by inference. */
const char *o2m_model_fresh_symbol(o2m_model *model);
/* Non-zero for a symbol made by o2m_model_fresh_symbol (not a model name). */
int o2m_symbol_is_fresh(const char *sym);

/* Creates a value named `name` in g (registered by name, appended to
 * g->values); NULL when out of memory. The caller sets kind-specific
 * fields. Does not check for duplicates. */
o2m_value *o2m_graph_new_value(o2m_model *model, o2m_graph *g,
                               const char *name, o2m_value_kind kind);

/* Finds an attribute by name; NULL when absent. */
const o2m_attr *o2m_node_attr(const o2m_node *node, const char *name);

/* The stored tensor a value is, when it is one: an initializer's, or the
 * `value` tensor of the Constant node that makes it (exporters write
 * weights either way: PyTorch's quantized models as Constants); NULL for
 * any other value. */
const o2m_tensor *o2m_value_stored(const o2m_value *v);

/* Element size in bits (4 for int4, 1 byte = 8 for bool); 0 for STRING
 * and UNDEFINED. */
int o2m_dtype_bits(o2m_dtype dtype);
/* ONNX spelling: "float", "int64", "float8e4m3fn", ...; "undefined". */
const char *o2m_dtype_name(o2m_dtype dtype);
/* The dtype spelled `name` (length bytes; "int4"), or UNDEFINED. */
o2m_dtype o2m_dtype_named(const char *name, size_t length);
/* Non-zero for a dtype this build knows. */
int o2m_dtype_valid(int dtype);
/* Bytes needed for `count` elements in raw layout; SIZE_MAX on overflow. */
size_t o2m_dtype_storage_bytes(o2m_dtype dtype, int64_t count);

#endif
