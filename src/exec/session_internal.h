/* session_internal.h - what the session's files share (session.c: the
 * handles and the calls; session_variants.c: the model, the input checks
 * and the compiled variants). Not for use outside src/exec.
 */
#ifndef O2M_SESSION_INTERNAL_H
#define O2M_SESSION_INTERNAL_H

#include <pthread.h>

#include "exec/exec.h"

/* The outputs of one call (o2m_results_* in run_api.c). */
struct o2m_results {
  o2m_arena arena; /* the output tensors */
  int n;
  o2m_tensor_data *items;
};

/* Code compiled for one key (see the header's "Variants"). */
typedef struct session_variant {
  struct session_variant *next; /* the session's list, most recently used first */
  char *key;
  int generic;
  uint64_t params;       /* the hash of the parameter inputs' values */
  int refs;              /* 1 for the list while in it, 1 per call in flight */
  o2m_model *model;      /* as the variant specialised it; holds its weights */
  o2m_exec *exec;
  o2m_arena arena;
  int n_args;            /* inputs, then weights */
  const o2m_tensor **args; /* [0, inputs) NULL, then the weights */
} session_variant;

typedef struct session {
  int refs; /* the registry's and each call's (under the registry's lock) */
  o2m_session_options options; /* defaults filled in; strings our copies */
  char *path, *name, *data_dir, *cache_dir;
  void *bytes; /* a model given in memory (our copy) */
  size_t size;
  o2m_model *model; /* as declared: describes the inputs, never rewritten */
  int n_inputs, n_outputs;
  o2m_value_desc *input_desc, *output_desc;
  unsigned char *may_be_parameter; /* per input: some value of it could act as a parameter */
  int has_dynamic;                 /* some input has a dim (or rank) not fixed */
  pthread_mutex_t lock;            /* the variants list, the flags below, stats */
  pthread_mutex_t compile_lock;    /* one variant made at a time */
  session_variant *variants;
  int n_variants;
  int generic_refused; /* the generic variant failed: a variant per size */
  char generic_refusal[sizeof(((o2m_diag *)0)->message)]; /* why (stats.generic_refused) */
  o2m_session_stats stats;
} session;

/* session_variants.c */
char *session_default_cache_dir(const char *given); /* malloc'd, or NULL */
o2m_status session_load_model(const session *s, o2m_model **out, o2m_diag *diag);
o2m_status session_describe(session *s, o2m_diag *diag);
/* Checks the target lowers every node; compiles a static model's variant. */
o2m_status session_prepare(session *s, o2m_diag *diag);
void session_destroy(session *s);
/* Input i of a call (`d`) checked against its declared description
 * (dtype, rank, fixed dims, byte count, data present), as a tensor in
 * `arena`; messages name `model_name`. o2m_model_run checks with it too. */
o2m_status session_check_input(const char *model_name, int i, const o2m_value_desc *want, const o2m_tensor_data *d,
                               o2m_arena *arena, o2m_tensor **out, o2m_diag *diag);
/* The call's inputs checked against the declared ones, as tensors in `arena`. */
o2m_status session_check_inputs(const session *s, int n, const o2m_tensor_data *inputs, o2m_arena *arena,
                                o2m_tensor ***out, o2m_diag *diag);
/* The variant for `inputs` (made when missing), with a reference the
 * caller gives back with session_variant_release. */
o2m_status session_variant_for(session *s, const o2m_tensor *const *inputs, session_variant **out, o2m_diag *diag);
void session_variant_release(session *s, session_variant *v);

#endif
