/* exec_near_use.c - exec_place_near_use: the entry's buffers and views
 * placed where they are used, so that copies of a layer hold the same ops
 * in the same order.
 *
 * Bufferization leaves a top-level `memref.alloc` where its tensor was
 * first needed by any layer, and CSE leaves one `memref.cast` of a buffer
 * or a weight where it was first made, later layers reading that one:
 * the last layer of a loop-like model then lacks the next layer's buffer,
 * the first holds casts of all, and the repeat search (exec_repeats.c)
 * sees different layers. Here the entry's top-level ops other than
 * allocs and views are visited in order, each pulling in front of itself,
 * in the order of its walk's operands, the allocs and views it reads:
 *   - one not placed yet moves to just before it (an alloc, with a view
 *     of it, its first user: a buffer is only ever made later);
 *   - a view placed before, at another user, is cloned (with the views
 *     it is a view of) just before this one, which then reads the clone;
 *     an alloc placed before stays where it is.
 * Views are casts, subviews, reinterpret_casts, expand_shapes and
 * collapse_shapes: no memory read or written, so a clone is free and
 * moving one changes nothing the program does. An alloc or view no op
 * uses stays where it was.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"

static const char *const views[] = {"memref.cast", "memref.subview", "memref.reinterpret_cast", "memref.expand_shape",
                                    "memref.collapse_shape"};

static int is_view(MlirOperation op) {
  for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
    if (exec_op_named(op, views[i])) return 1;
  return 0;
}

/* An alloc or view of the entry's block, by its pointer: whether it is
 * placed, and its clone for the user being visited. */
typedef struct movable {
  const void *op;
  int placed;
  const void *clone_user;
  MlirOperation clone;
} movable;

typedef struct placing {
  MlirBlock block;
  movable *slots;
  size_t cap;
  MlirOperation user; /* the top-level op being visited */
  int changed;
} placing;

static movable *find(placing *p, MlirOperation op) {
  size_t i = exec_ptr_slot(op.ptr, p->cap);
  while (p->slots[i].op && p->slots[i].op != op.ptr) i = (i + 1) & (p->cap - 1);
  return p->slots[i].op ? &p->slots[i] : NULL;
}

/* The movable op defining v, or null. */
static movable *movable_of(placing *p, MlirValue v) {
  if (!mlirValueIsAOpResult(v)) return NULL;
  MlirOperation def = mlirOpResultGetOwner(v);
  return mlirBlockEqual(mlirOperationGetBlock(def), p->block) ? find(p, def) : NULL;
}

static void place(placing *p, MlirOperation op, movable *m);

/* A clone of view m (op) just before the visited user, reading clones of
 * the views it is a view of; the same clone for each use in this user. */
static MlirValue clone_for_user(placing *p, MlirOperation op, movable *m) {
  if (m->clone_user == p->user.ptr) return mlirOperationGetResult(m->clone, 0);
  MlirOperation copy = mlirOperationClone(op);
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(copy); i < n; i++) {
    MlirValue v = mlirOperationGetOperand(copy, i);
    movable *of = movable_of(p, v);
    if (of && is_view(mlirOpResultGetOwner(v)))
      mlirOperationSetOperand(copy, i, clone_for_user(p, mlirOpResultGetOwner(v), of));
  }
  mlirBlockInsertOwnedOperationBefore(p->block, p->user, copy);
  m->clone_user = p->user.ptr, m->clone = copy;
  p->changed++;
  return mlirOperationGetResult(copy, 0);
}

/* Moves op (not placed yet) just before the visited user, the movable
 * ops it reads that are not placed yet first. */
static void place(placing *p, MlirOperation op, movable *m) {
  m->placed = 1;
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++) {
    MlirValue v = mlirOperationGetOperand(op, i);
    movable *of = movable_of(p, v);
    if (of && !of->placed) place(p, mlirOpResultGetOwner(v), of);
  }
  if (!mlirOperationEqual(mlirOperationGetNextInBlock(op), p->user)) {
    mlirOperationMoveBefore(op, p->user);
    p->changed++;
  }
  m->clone_user = p->user.ptr, m->clone = op; /* further uses here read it */
}

static MlirWalkResult pull_operands(MlirOperation op, void *user) {
  placing *p = user;
  for (intptr_t i = 0, n = mlirOperationGetNumOperands(op); i < n; i++) {
    MlirValue v = mlirOperationGetOperand(op, i);
    movable *m = movable_of(p, v);
    if (!m) continue;
    MlirOperation def = mlirOpResultGetOwner(v);
    if (!m->placed)
      place(p, def, m);
    else if (is_view(def) && m->clone_user != p->user.ptr)
      mlirOperationSetOperand(op, i, clone_for_user(p, def, m));
    else if (is_view(def))
      mlirOperationSetOperand(op, i, mlirOperationGetResult(m->clone, 0));
  }
  return MlirWalkResultAdvance;
}

int exec_place_near_use(MlirModule module, const char *entry) {
  MlirOperation func = exec_find_entry(module, entry);
  if (mlirOperationIsNull(func)) return 0;
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (mlirBlockIsNull(block)) return 0;
  int n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    n++;
  placing p = {block, NULL, 1, {NULL}, 0};
  while (p.cap < 2 * (size_t)n + 2) p.cap *= 2;
  p.slots = calloc(p.cap, sizeof(*p.slots));
  MlirOperation *users = malloc(((size_t)n + 1) * sizeof(*users));
  int n_users = 0;
  if (p.slots && users) {
    for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
      if ((exec_op_named(op, "memref.alloc") || is_view(op)) && mlirOperationGetNumResults(op) == 1) {
        size_t i = exec_ptr_slot(op.ptr, p.cap);
        while (p.slots[i].op) i = (i + 1) & (p.cap - 1);
        p.slots[i].op = op.ptr;
      } else {
        users[n_users++] = op;
      }
    }
    for (int u = 0; u < n_users; u++) {
      p.user = users[u];
      mlirOperationWalk(users[u], pull_operands, &p, MlirWalkPreOrder);
    }
  }
  free(p.slots);
  free(users);
  return p.changed;
}
