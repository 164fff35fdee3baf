/* kit_module.c - the module builder every lowering emitter shares (kit.h):
 * rewrites the model to the core form for the target, lists every node
 * the target cannot lower (all at once, before lowering), builds
 * `func.func @main` (runtime inputs in, graph outputs out,
 * llvm.emit_c_interface) node by node through the target's table,
 * verifies, and prints modules as text or bytecode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/Diagnostics.h>

#include "core/core.h"
#include "emit/kit/kit.h"
#include "onnx/value_file.h"
#include "transform/transform.h"
#include "util/diag.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- the unsupported-node report ----------------------------------------- */

typedef struct report {
  char text[1536];
  size_t len;
  int count;
} report;

/* The branch of an If whose condition is known at import that is never
 * taken (the If lowering emits only the other one), or NULL. */
static const o2m_graph *untaken_branch(const o2m_node *n) {
  const o2m_tensor *cond = n->n_inputs > 0 && n->inputs[0] ? n->inputs[0]->known : NULL;
  if (n->domain[0] || strcmp(n->op_type, "If") != 0 || !cond || cond->count != 1 || !cond->data) return NULL;
  const o2m_attr *branch = o2m_node_attr(n, cond->data[0] ? "else_branch" : "then_branch");
  return branch && branch->type == O2M_ATTR_GRAPH ? branch->g : NULL;
}

/* A target and what its module is for (lw_ctx.for_jit). */
typedef struct target_use {
  const lw_target *target;
  int for_jit;
} target_use;

static int keeps_op(const o2m_node *n, void *user) {
  const target_use *use = user;
  const lw_target *target = use->target;
  if (use->for_jit && target->jit_keeps && target->jit_keeps(use->for_jit, n)) return 1;
  if (!target->lowering_for(n->domain, n->op_type)) return 0;
  return !target->keeps || target->keeps(n);
}

static void collect_unsupported(const target_use *use, const o2m_graph *g, report *r) {
  const lw_target *target = use->target;
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *n = g->nodes[i];
    const o2m_graph *skip = untaken_branch(n);
    for (int a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == O2M_ATTR_GRAPH && n->attrs[a].g && n->attrs[a].g != skip &&
          !n->attrs[a].g->unbuildable)
        collect_unsupported(use, n->attrs[a].g, r);
      for (int k = 0; n->attrs[a].type == O2M_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        collect_unsupported(use, n->attrs[a].graphs[k], r);
    }
    if (!lw_node_needs_code(n) || keeps_op(n, (void *)use)) continue;
    if (r->count++ >= 12 || r->len >= sizeof(r->text) - 1) continue;
    const char *why = n->rewrite_failure ? strstr(n->rewrite_failure, "): ") : NULL;
    char none[64];
    snprintf(none, sizeof(none), "no %s lowering", target->name);
    r->len += (size_t)snprintf(r->text + r->len, sizeof(r->text) - r->len,
                               "\n  '%s' (%s, domain '%s', opset %lld): %s", n->name, n->op_type,
                               n->domain[0] ? n->domain : "ai.onnx", (long long)n->opset,
                               why ? why + 3 : none);
    if (r->len >= sizeof(r->text)) r->len = sizeof(r->text) - 1;
  }
}

/* ---- diagnostics from MLIR ----------------------------------------------- */

typedef struct mlir_messages {
  char text[2048];
  size_t len;
} mlir_messages;

static void append_message(MlirStringRef s, void *user) {
  mlir_messages *m = user;
  size_t n = s.length < sizeof(m->text) - 1 - m->len ? s.length : sizeof(m->text) - 1 - m->len;
  memcpy(m->text + m->len, s.data, n);
  m->len += n;
  m->text[m->len] = 0;
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic d, void *user) {
  mlir_messages *m = user;
  if (m->len) append_message(str_ref("\n"), m);
  mlirDiagnosticPrint(d, append_message, m);
  return mlirLogicalResultSuccess();
}

/* ---- the function ---------------------------------------------------------- */

/* The type of every element of a sequence or optional of type t (the
 * element tensor type), or NULL. */
static const o2m_type *element_type(const o2m_type *t) {
  const o2m_type *in = t->inner;
  if (t->kind == O2M_TYPE_OPTIONAL && in && in->kind == O2M_TYPE_SEQUENCE) in = in->inner;
  return in && in->kind == O2M_TYPE_TENSOR ? in : NULL;
}

enum { MAX_IO = 1024, MIN_WEIGHT_ELEMENTS = 1024 };

/* ---- dead code ---------------------------------------------------------------- */

static int is_pure(MlirOperation op) {
  static const char *const dialects[] = {"linalg.", "tensor.", "arith."};
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++)
    if (name.length > strlen(dialects[i]) && memcmp(name.data, dialects[i], strlen(dialects[i])) == 0) return 1;
  return 0;
}

static int unused(MlirOperation op) {
  int n = (int)mlirOperationGetNumResults(op);
  for (int i = 0; i < n; i++)
    if (!mlirOpOperandIsNull(mlirValueGetFirstUse(mlirOperationGetResult(op, i)))) return 0;
  return n > 0;
}

/* Erases the block's ops on tensors whose results nothing uses (a
 * Transpose a BLAS call reads through, say), last first so that a chain
 * goes at once: the JIT's pipeline would run them. */
static void drop_unused_values(MlirBlock block) {
  size_t n = 0, cap = 0;
  MlirOperation *ops = NULL;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (n == cap) {
      MlirOperation *grown = realloc(ops, (cap = cap ? 2 * cap : 256) * sizeof(*ops));
      if (!grown) break; /* keeps them: only slower */
      ops = grown;
    }
    ops[n++] = op;
  }
  for (size_t i = n; i-- > 0;)
    if (is_pure(ops[i]) && unused(ops[i])) mlirOperationDestroy(ops[i]);
  free(ops);
}

/* ---- weights as arguments (emit.h, O2M_JIT_WEIGHT_ARGS) ---------------------- */

MlirValue lw_weight_argument(lw_ctx *cx, const o2m_value *v) {
  const o2m_tensor *t = o2m_value_stored(v);
  if (!(cx->for_jit & O2M_JIT_WEIGHT_ARGS) || !t || v->graph != cx->model->graph || mlirBlockIsNull(cx->main_entry) ||
      t->count < MIN_WEIGHT_ELEMENTS || !t->data || o2m_dtype_bits(t->dtype) < 8 || t->dtype == O2M_DT_BOOL ||
      t->dtype == O2M_DT_STRING)
    return (MlirValue){NULL};
  int n_args = (int)mlirBlockGetNumArguments(cx->main_entry);
  if (n_args >= MAX_IO - 1) return (MlirValue){NULL}; /* no room: a constant */
  int64_t sizes[64];
  if (t->rank > 64) return (MlirValue){NULL};
  for (int k = 0; k < t->rank; k++) sizes[k] = t->dims[k];
  MlirType type = lw_tensor_type_of(cx, t->dtype, t->rank, sizes);
  if (mlirTypeIsNull(type)) return (MlirValue){NULL};
  if (cx->n_weights == cx->weights_cap) {
    int cap = cx->weights_cap ? 2 * cx->weights_cap : 64;
    cx->weights = o2m_arena_grow(&cx->scratch, cx->weights, (size_t)cx->n_weights, (size_t)cap, sizeof(*cx->weights));
    if (!cx->weights) return (MlirValue){NULL};
    cx->weights_cap = cap;
  }
  cx->weights[cx->n_weights++] = v;
  MlirLocation loc = mlirLocationNameGet(cx->mc, str_ref(v->name), mlirLocationUnknownGet(cx->mc));
  return mlirBlockAddArgument(cx->main_entry, type, loc);
}

/* Whether every use of v is an operation marked O2M_WEIGHT_ANY_ALIGN_ATTR
 * (lw_kernel_operand_any_align: a buffer only a kernel reads, at any
 * address), and there is one. */
static int read_at_any_address(MlirValue v) {
  MlirOpOperand use = mlirValueGetFirstUse(v);
  if (mlirOpOperandIsNull(use)) return 0;
  for (; !mlirOpOperandIsNull(use); use = mlirOpOperandGetNextUse(use))
    if (mlirAttributeIsNull(mlirOperationGetAttributeByName(mlirOpOperandGetOwner(use), str_ref(O2M_WEIGHT_ANY_ALIGN_ATTR))))
      return 0;
  return 1;
}

/* The dictionary of attributes naming a carried dtype (empty otherwise). */
static MlirAttribute carried_attrs(lw_ctx *cx, o2m_dtype d, int n_more, MlirNamedAttribute *more) {
  MlirNamedAttribute attrs[4];
  int n = 0;
  for (int i = 0; i < n_more && n < 3; i++) attrs[n++] = more[i];
  if (d && lw_carried_dtype(cx, d) != d)
    attrs[n++] = mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(O2M_CARRIED_DTYPE_ATTR)),
                                       mlirStringAttrGet(cx->mc, str_ref(o2m_dtype_name(d))));
  return mlirDictionaryAttrGet(cx->mc, n, attrs);
}

/* @main's argument and result attributes: carried dtypes (emit.h,
 * O2M_CARRIED_DTYPE_ATTR) and, when weights are arguments, each weight's
 * name and read-only. */
static void set_io_attrs(lw_ctx *cx, MlirOperation fn, int n_args, const o2m_dtype *arg_dtypes, int n_results,
                         const o2m_dtype *result_dtypes) {
  int n = n_args + cx->n_weights, carried = 0;
  for (int i = 0; i < n_args; i++) carried |= lw_carried_dtype(cx, arg_dtypes[i]) != arg_dtypes[i];
  for (int i = 0; i < n_results; i++) carried |= lw_carried_dtype(cx, result_dtypes[i]) != result_dtypes[i];
  for (int i = 0; i < cx->n_weights; i++) {
    o2m_dtype d = o2m_value_stored(cx->weights[i])->dtype;
    carried |= lw_carried_dtype(cx, d) != d;
  }
  if (!cx->n_weights && !carried) return;
  MlirAttribute *dicts = o2m_arena_array(&cx->scratch, (size_t)(n > n_results ? n : n_results) + 1, sizeof(*dicts));
  if (!dicts) return;
  for (int i = 0; i < n; i++) {
    if (i < n_args) {
      dicts[i] = carried_attrs(cx, arg_dtypes[i], 0, NULL);
      continue;
    }
    const o2m_value *w = cx->weights[i - n_args];
    MlirNamedAttribute attrs[3] = {
        mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(O2M_WEIGHT_ARG_ATTR)),
                              mlirStringAttrGet(cx->mc, str_ref(w->name))),
        mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref("bufferization.writable")),
                              mlirBoolAttrGet(cx->mc, 0)),
        mlirNamedAttributeGet(mlirIdentifierGet(cx->mc, str_ref(O2M_WEIGHT_ANY_ALIGN_ATTR)), mlirUnitAttrGet(cx->mc))};
    int any_align = read_at_any_address(mlirBlockGetArgument(cx->main_entry, i));
    dicts[i] = carried_attrs(cx, o2m_value_stored(w)->dtype, any_align ? 3 : 2, attrs);
  }
  if (n) mlirOperationSetAttributeByName(fn, str_ref("arg_attrs"), mlirArrayAttrGet(cx->mc, n, dicts));
  if (!carried || !n_results) return;
  for (int i = 0; i < n_results; i++) dicts[i] = carried_attrs(cx, result_dtypes[i], 0, NULL);
  mlirOperationSetAttributeByName(fn, str_ref("res_attrs"), mlirArrayAttrGet(cx->mc, n_results, dicts));
}

/* A runtime argument as the node inputs read it: a carried dtype's low
 * bits re-read by the target (lw_target.narrow). */
static MlirValue argument_value(lw_ctx *cx, MlirValue arg, o2m_dtype d) {
  if (!cx->target->narrow || !d || lw_carried_dtype(cx, d) == d) return arg;
  return cx->target->narrow(cx, arg, d);
}

static o2m_status build_function(lw_ctx *cx, o2m_io_value *out_values) {
  o2m_model *m = cx->model;
  const o2m_graph *g = m->graph;
  int n_in = o2m_runtime_input_count(m), n_args = 0;
  MlirType *in_types = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(MlirType));
  MlirType *out_types = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(MlirType));
  MlirValue *results = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(MlirValue));
  MlirLocation *locs = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(MlirLocation));
  o2m_dtype *in_dtypes = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(o2m_dtype));
  o2m_dtype *out_dtypes = o2m_arena_array(&cx->scratch, MAX_IO, sizeof(o2m_dtype));
  if (!in_types || !out_types || !results || !locs || !in_dtypes || !out_dtypes) return o2m_fail(cx->diag, O2M_ERR_NOMEM, "out of memory");
  if (n_in > 256 || g->n_outputs > 256) return lw_unsupported(cx, "more than 256 graph inputs or outputs");
  for (int i = 0; i < n_in; i++) {
    const o2m_value *v = o2m_runtime_input(m, i);
    MlirLocation loc = mlirLocationNameGet(cx->mc, str_ref(v->name), mlirLocationUnknownGet(cx->mc));
    const o2m_io_value *x = cx->inputs ? &cx->inputs[i] : NULL;
    if (x && x->kind != O2M_TYPE_TENSOR) {
      const o2m_type *elem = element_type(&v->type);
      MlirType t = elem ? lw_tensor_type(cx, elem) : (MlirType){NULL};
      int count = x->present ? x->count : 0;
      if (count && mlirTypeIsNull(t))
        return lw_unsupported(cx, "the elements of graph input '%s' are not ranked tensors of one rank and a supported dtype", v->name);
      if (n_args + count > MAX_IO) return lw_unsupported(cx, "more than %d tensors in the graph inputs", MAX_IO);
      for (int k = 0; k < count; k++) in_dtypes[n_args] = elem->elem, in_types[n_args] = t, locs[n_args++] = loc;
      continue;
    }
    if (v->type.kind == O2M_TYPE_SEQUENCE || v->type.kind == O2M_TYPE_OPTIONAL)
      return lw_unsupported(cx, "graph input '%s' is %s: an imported module takes tensors only (`run` and `test` take it)",
                            v->name, v->type.kind == O2M_TYPE_SEQUENCE ? "a sequence" : "an optional");
    in_types[n_args] = lw_tensor_type(cx, &v->type);
    in_dtypes[n_args] = v->type.elem;
    locs[n_args++] = loc;
    if (mlirTypeIsNull(in_types[n_args - 1])) return lw_unsupported(cx, "graph input '%s' is not a ranked tensor of a supported dtype", v->name);
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const o2m_type *t = &g->output_values[i]->type;
    if (out_values && (t->kind == O2M_TYPE_SEQUENCE || t->kind == O2M_TYPE_OPTIONAL)) continue;
    if (t->kind == O2M_TYPE_SEQUENCE || t->kind == O2M_TYPE_OPTIONAL)
      return lw_unsupported(cx, "graph output '%s' is %s: an imported module gives tensors only (`run` and `test` give it)",
                            g->outputs[i].name, t->kind == O2M_TYPE_SEQUENCE ? "a sequence" : "an optional");
    if (mlirTypeIsNull(lw_tensor_type(cx, t))) return lw_unsupported(cx, "graph output '%s' is not a ranked tensor of a supported dtype", g->outputs[i].name);
  }
  char attrs[256];
  snprintf(attrs, sizeof(attrs), "sym_name = \"main\", llvm.emit_c_interface");
  MlirBlock module_body = mlirModuleGetBody(cx->module);
  cx->block = module_body;
  MlirOperation fn = lw_op(cx, "func.func", 0, NULL, 0, NULL, attrs, 1);
  if (mlirOperationIsNull(fn)) return lw_error(cx, "internal: cannot create func.func");
  MlirBlock entry = mlirBlockCreate(n_args, in_types, locs);
  mlirRegionAppendOwnedBlock(mlirOperationGetRegion(fn, 0), entry);
  cx->entry = cx->block = cx->main_entry = entry;
  for (int i = 0, a = 0; i < n_in; i++) {
    const o2m_value *v = o2m_runtime_input(m, i);
    const o2m_io_value *x = cx->inputs ? &cx->inputs[i] : NULL;
    if (x && x->kind != O2M_TYPE_TENSOR) {
      int count = x->present ? x->count : 0;
      MlirValue elems[count + 1];
      for (int k = 0; k < count; k++, a++) elems[k] = argument_value(cx, mlirBlockGetArgument(entry, a), in_dtypes[a]);
      o2m_status s = lw_seq_map(cx, v, x->present, count, elems);
      if (s) return s;
      continue;
    }
    lw_map(cx, v, argument_value(cx, mlirBlockGetArgument(entry, a), in_dtypes[a]));
    a++;
  }
  o2m_status s = lw_lower_graph_nodes(cx, g);
  if (s) return s;
  cx->node = NULL;
  int n_results = 0;
  for (int i = 0; i < g->n_outputs; i++) {
    const o2m_value *v = g->output_values[i];
    if (out_values && (v->type.kind == O2M_TYPE_SEQUENCE || v->type.kind == O2M_TYPE_OPTIONAL)) {
      const lw_seq *q = lw_seq_get(cx, v);
      if (!q) return lw_unsupported(cx, "graph output '%s': its sequence or optional is not known when lowering", g->outputs[i].name);
      const o2m_type *elem = element_type(&v->type);
      MlirType t = elem ? lw_tensor_type(cx, elem) : (MlirType){NULL};
      if (n_results + q->n > MAX_IO) return lw_unsupported(cx, "more than %d tensors in the graph outputs", MAX_IO);
      for (int k = 0; k < q->n; k++) {
        MlirValue e = q->elems[k];
        if (!mlirTypeIsNull(t)) e = lw_cast_tensor(cx, e, t);
        out_types[n_results] = mlirValueGetType(e);
        out_dtypes[n_results] = elem ? elem->elem : O2M_DT_UNDEFINED;
        results[n_results++] = e;
      }
      o2m_type_kind holds = v->type.kind == O2M_TYPE_OPTIONAL && v->type.inner ? v->type.inner->kind : O2M_TYPE_TENSOR;
      out_values[i] = (o2m_io_value){v->type.kind, holds, q->present, q->n, NULL};
      continue;
    }
    MlirValue r = lw_get(cx, v);
    if (mlirValueIsNull(r)) return lw_error(cx, "internal: graph output '%s' has no value", g->outputs[i].name);
    out_types[n_results] = lw_tensor_type(cx, &v->type);
    out_dtypes[n_results] = v->type.elem;
    results[n_results] = lw_cast_tensor(cx, r, out_types[n_results]);
    n_results++;
    if (out_values) out_values[i] = (o2m_io_value){O2M_TYPE_TENSOR, O2M_TYPE_TENSOR, 1, 1, NULL};
  }
  lw_op(cx, "func.return", n_results, results, 0, NULL, NULL, 0);
  if (cx->for_jit) drop_unused_values(entry); /* after the return, which uses the outputs */
  for (int k = 0; k < cx->n_weights; k++) in_types[n_args + k] = mlirValueGetType(mlirBlockGetArgument(entry, n_args + k));
  MlirType fn_type = mlirFunctionTypeGet(cx->mc, n_args + cx->n_weights, in_types, n_results, out_types);
  mlirOperationSetAttributeByName(fn, str_ref("function_type"), mlirTypeAttrGet(fn_type));
  set_io_attrs(cx, fn, n_args, in_dtypes, n_results, out_dtypes);
  lw_finish_branch_failures(cx);
  if (cx->profiled) {
    MlirBlock saved = cx->block;
    cx->block = mlirModuleGetBody(cx->module);
    lw_op(cx, "func.func", 0, NULL, 0, NULL,
          "sym_name = \"" O2M_PROFILE_FN "\", sym_visibility = \"private\", function_type = (i32) -> ()", 1);
    cx->block = saved;
  }
  return O2M_OK;
}


o2m_status lw_prepare_model(const lw_target *target, o2m_model *model, int for_jit, o2m_diag *diag) {
  target_use use = {target, for_jit};
  o2m_status s = o2m_transform_for_target(model, keeps_op, &use, diag);
  if (s) return s;
  report r = {{0}, 0, 0};
  collect_unsupported(&use, model->graph, &r);
  if (r.count)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: %d node%s cannot be lowered to %s:%s%s",
                    model->path, r.count, r.count == 1 ? "" : "s", target->name, r.text,
                    r.count > 12 ? "\n  ..." : "");
  return O2M_OK;
}

o2m_status lw_emit_module(const lw_target *target, o2m_model *model, MlirContext mc,
                          int for_jit, const o2m_io_value *inputs, o2m_io_value *outputs,
                          MlirModule *out, o2m_diag *diag) {
  o2m_status s = lw_prepare_model(target, model, for_jit, diag);
  if (!s && (for_jit & O2M_JIT_DNNL)) s = o2m_layout_channels_last(model, (for_jit & O2M_JIT_QUANT) != 0, diag);
  if (s) return s;
  target->load_dialects(mc);
  mlir_messages messages = {{0}, 0};
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(mc, on_diagnostic, &messages, NULL);
  lw_ctx cx;
  memset(&cx, 0, sizeof(cx));
  cx.target = target;
  cx.model = model;
  cx.diag = diag;
  cx.mc = mc;
  cx.for_jit = for_jit;
  cx.inputs = inputs;
  cx.loc = mlirLocationUnknownGet(mc);
  cx.module = mlirModuleCreateEmpty(cx.loc);
  s = build_function(&cx, outputs);
  if (!s && !mlirOperationVerify(mlirModuleGetOperation(cx.module)))
    s = o2m_fail(diag, O2M_ERR_INTERNAL, "%s: the %s module does not verify:\n%s", model->path, target->name, messages.text);
  mlirContextDetachDiagnosticHandler(mc, handler);
  o2m_arena_free(&cx.scratch);
  if (s) {
    mlirModuleDestroy(cx.module);
    return s;
  }
  *out = cx.module;
  return O2M_OK;
}

/* ---- printing ---------------------------------------------------------------- */

static void write_chunk(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, (FILE *)user); }

void lw_print_module(MlirModule module, int bytecode, FILE *out) {
  MlirOperation op = mlirModuleGetOperation(module);
  if (bytecode) {
    mlirOperationWriteBytecode(op, write_chunk, out);
    return;
  }
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOperationPrintWithFlags(op, flags, write_chunk, out);
  mlirOpPrintingFlagsDestroy(flags);
  fputc('\n', out);
}
