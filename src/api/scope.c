/* scope.c — tensor handles and the scopes that own them.
 *
 * Every tensor belongs to one owner: the scope that was current when it was made, or
 * nobody once escaped (then the caller releases it). A scope ending releases what it
 * owns, except the tensors kept for its parent, which move there (Lamp's design).
 * Handles are generation-checked slots (see tl_slot in context.h): a double release,
 * a use after release or a release through the wrong scope is an error with a
 * message, never a write to freed memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h"
#include "core/vec.h"

enum { SLOTS_PER_SLAB = 128 };

#if UINTPTR_MAX > 0xFFFFFFFFu
#define TAG_SHIFT 48
#define ADDRESS_MASK (((uintptr_t)1 << TAG_SHIFT) - 1)
#else /* 32-bit: no spare pointer bits, handles carry no tag (the live flag still checks) */
#define TAG_SHIFT 0
#define ADDRESS_MASK UINTPTR_MAX
#endif

/* ---- slots ------------------------------------------------------------------------ */
static bool pool_grow(tl_slot_pool *p, tl_ctx *ctx) {
  if (!tl_vec_grow(&p->slabs, &p->cap, (size_t)p->nslabs + 1, sizeof *p->slabs)) return false;
  char *slab = calloc(SLOTS_PER_SLAB, p->slot_size);
  if (!slab) return false;
  if (((uintptr_t)slab + SLOTS_PER_SLAB * p->slot_size) & ~ADDRESS_MASK) {
    free(slab); /* above the 48-bit user address space: the tag would not fit */
    return false;
  }
  p->slabs[p->nslabs++] = slab;
  for (int i = 0; i < SLOTS_PER_SLAB; i++) {
    tl_slot *s = (tl_slot *)(slab + (size_t)i * p->slot_size);
    s->ctx = ctx;
    s->gen = 1;
    if (p->free_tail) p->free_tail->free_next = s;
    else p->free_head = s;
    p->free_tail = s;
  }
  return true;
}

static void *slot_take(tl_slot_pool *p, tl_ctx *ctx) {
  if (!p->free_head && !pool_grow(p, ctx)) return NULL;
  tl_slot *s = p->free_head;
  p->free_head = s->free_next;
  if (!p->free_head) p->free_tail = NULL;
  s->free_next = NULL;
  s->live = true;
  return s;
}

static void slot_give(tl_slot_pool *p, tl_slot *s) {
  s->live = false;
  s->gen = s->gen == 0xFFFF ? 1 : (uint16_t)(s->gen + 1); /* every handle to it is stale now */
  if (p->free_tail) p->free_tail->free_next = s;
  else p->free_head = s;
  p->free_tail = s;
}

static void pool_free(tl_slot_pool *p) {
  for (int i = 0; i < p->nslabs; i++) free(p->slabs[i]);
  free(p->slabs);
  memset(p, 0, sizeof *p);
}

static void *tagged(tl_slot *s) {
  return (void *)((uintptr_t)s | ((uintptr_t)s->gen << TAG_SHIFT));
}

/* The slot behind a handle and whether the handle is current. A tag of 0 is an
 * internal pointer (never given out): only the live flag decides. */
static tl_slot *slot_open(const void *handle, bool *current) {
  uintptr_t v = (uintptr_t)handle;
  tl_slot *s = (tl_slot *)(v & ADDRESS_MASK);
  uint16_t tag = (uint16_t)(TAG_SHIFT ? v >> TAG_SHIFT : 0);
  *current = s->live && (tag == 0 || tag == s->gen);
  return s;
}

/* ---- tensors ---------------------------------------------------------------------- */
static void list_push(tl_tensor **head, tl_tensor *t) {
  t->prev = NULL;
  t->next = *head;
  if (*head) (*head)->prev = t;
  *head = t;
}

static void list_unlink(tl_tensor **head, tl_tensor *t) {
  if (t->prev) t->prev->next = t->next;
  else *head = t->next;
  if (t->next) t->next->prev = t->prev;
  t->prev = t->next = NULL;
}

static tl_tensor **list_of(tl_ctx *ctx, tl_tensor *t) {
  return t->owner ? &t->owner->tensors : &ctx->escaped;
}

static void set_owner(tl_ctx *ctx, tl_tensor *t, tl_scope *owner) {
  if (t->owner) t->owner->ntensors--;
  list_unlink(list_of(ctx, t), t);
  t->owner = owner;
  t->kept = false;
  if (owner) owner->ntensors++;
  list_push(list_of(ctx, t), t);
}

static void tensor_destroy(tl_ctx *ctx, tl_tensor *t) {
  if (t->owner) t->owner->ntensors--;
  list_unlink(list_of(ctx, t), t);
  tl_uop_release(&ctx->graph, t->u);
  if (t->ag) tl_ag_release(&ctx->graph, t->ag);
  t->ag = NULL;
  t->u = NULL;
  t->owner = NULL;
  ctx->stats.live_tensors--;
  slot_give(&ctx->tensor_slots, &t->slot); /* serial and creator stay for error messages */
}

/* drops one reference; the last one frees the tensor */
static void tensor_unref(tl_ctx *ctx, tl_tensor *t) {
  ctx->stats.releases++;
  if (--t->refs == 0) tensor_destroy(ctx, t);
}

tl_tensor *tl_api_handle(tl_tensor *t) { return t ? tagged(&t->slot) : NULL; }

tl_tensor *tl_api_tensor(const tl_tensor *handle, const char *what) {
  if (!handle) return NULL;
  bool current;
  tl_tensor *t = (tl_tensor *)slot_open(handle, &current);
  if (current) return t;
  tl_error_set(&t->slot.ctx->err, TL_ERR_ARG,
               "%s: use after release: the tensor behind this handle was released", what);
  return NULL;
}

tl_tensor *tl_api_wrap(tl_ctx *ctx, const char *what, tl_uop *u, size_t mark) {
  tl_tensor *t = NULL;
  if (u && !ctx->current) {
    tl_error_set(&ctx->err, TL_ERR_ARG,
                 "%s: no open scope to own the new tensor (the root scope was ended; begin a scope first)",
                 what);
  } else if (u && !(t = slot_take(&ctx->tensor_slots, ctx))) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "%s: out of memory for a tensor handle", what);
  } else if (u) {
    t->u = u;
    tl_uop_retain(u);
    t->ag = NULL;
    t->refs = 1;
    t->kept = false;
    t->owner = ctx->current;
    t->owner->ntensors++;
    list_push(&t->owner->tensors, t);
    t->serial = ++ctx->tensor_serial;
    t->creator = what;
    ctx->stats.live_tensors++;
    ctx->stats.tensors_created++;
    ctx->stats.retains++;
  } else if (ctx->err.status == TL_OK) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "%s: out of memory building the graph", what);
  }
  tl_graph_release_to(&ctx->graph, mark);
  return tl_api_handle(t);
}

static const char *scope_name(const tl_scope *s) { return s ? s->name : "(none)"; }

/* May the caller give up t's owner reference here? Only for a tensor of the current
 * scope or an escaped one: a tensor of an outer scope is borrowed. */
static bool owner_is_caller(tl_ctx *ctx, tl_tensor *t, const char *what) {
  if (!t->owner || t->owner == ctx->current) return true;
  tl_error_set(&ctx->err, TL_ERR_ARG,
               "%s: tensor #%" PRIu64 " (made by %s) belongs to scope '%s', not to the current scope '%s'",
               what, t->serial, t->creator, scope_name(t->owner), scope_name(ctx->current));
  return false;
}

tl_tensor *tl_retain(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "retain");
  if (!t) return NULL;
  t->refs++;
  t->slot.ctx->stats.retains++;
  return handle;
}

void tl_release(tl_tensor *handle) {
  if (!handle) return;
  bool current;
  tl_tensor *t = (tl_tensor *)slot_open(handle, &current);
  tl_ctx *ctx = t->slot.ctx;
  if (!current) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "release: double release: the tensor behind this handle was already released");
    return;
  }
  if (!t->owner || t->owner == ctx->current) { /* the owner's reference goes first */
    if (t->owner && t->refs > 1) set_owner(ctx, t, NULL); /* held by tl_retain: escaped */
    tensor_unref(ctx, t);
  } else if (t->refs > 1) { /* a tensor of another scope: a tl_retain reference */
    tensor_unref(ctx, t);
  } else {
    owner_is_caller(ctx, t, "release");
  }
}

int tl_handle_refs(const tl_tensor *handle) {
  const tl_tensor *t = tl_api_tensor(handle, "handle_refs");
  return t ? t->refs : 0;
}

void tl_unretain(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "unretain");
  if (!t) return;
  if (t->refs - (t->owner ? 1 : 0) < 1) {
    tl_error_set(&t->slot.ctx->err, TL_ERR_ARG,
                 "unretain: tensor #%" PRIu64 " (made by %s) holds no tl_retain reference", t->serial, t->creator);
    return;
  }
  tensor_unref(t->slot.ctx, t);
}

tl_tensor *tl_escape(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "escape");
  if (!t) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  if (!owner_is_caller(ctx, t, "escape")) return NULL;
  if (t->owner) set_owner(ctx, t, NULL);
  return handle;
}

tl_ctx *tl_context(const tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "context");
  return t ? t->slot.ctx : NULL;
}

/* ---- scopes ----------------------------------------------------------------------- */
static tl_scope *scope_open(const tl_scope *handle, const char *what) {
  if (!handle) return NULL;
  bool current;
  tl_scope *s = (tl_scope *)slot_open(handle, &current);
  if (current) return s;
  tl_error_set(&s->slot.ctx->err, TL_ERR_ARG, "%s: this scope was already ended or freed", what);
  return NULL;
}

static tl_scope *scope_make(tl_ctx *ctx, const char *name, tl_scope_state state) {
  tl_scope *s = slot_take(&ctx->scope_slots, ctx);
  if (!s) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "scope: out of memory");
    return NULL;
  }
  s->state = state;
  s->parent = NULL;
  s->tensors = NULL;
  s->ntensors = 0;
  s->serial = ++ctx->scope_serial;
  snprintf(s->name, sizeof s->name, "%s", name ? name : "scope");
  s->prev = NULL;
  s->next = ctx->scopes;
  if (ctx->scopes) ctx->scopes->prev = s;
  ctx->scopes = s;
  ctx->stats.open_scopes++;
  return s;
}

/* Releases what s owns (kept tensors go to its parent) and frees s. */
static void scope_destroy(tl_ctx *ctx, tl_scope *s) {
  while (s->tensors) {
    tl_tensor *t = s->tensors;
    if (t->kept && s->parent) set_owner(ctx, t, s->parent);
    else if (t->refs > 1) { /* retained by the caller: it outlives the scope, escaped */
      set_owner(ctx, t, NULL);
      tensor_unref(ctx, t);
    } else
      tensor_unref(ctx, t);
  }
  if (s->prev) s->prev->next = s->next;
  else ctx->scopes = s->next;
  if (s->next) s->next->prev = s->prev;
  if (ctx->root == s) ctx->root = NULL;
  ctx->stats.open_scopes--;
  slot_give(&ctx->scope_slots, &s->slot);
}

bool tl_api_scopes_init(tl_ctx *ctx) {
  ctx->tensor_slots.slot_size = sizeof(tl_tensor);
  ctx->scope_slots.slot_size = sizeof(tl_scope);
  ctx->root = ctx->current = scope_make(ctx, "root", TL_SCOPE_OPEN);
  return ctx->root != NULL;
}

void tl_api_release_all(tl_ctx *ctx) {
  ctx->current = NULL;
  for (tl_scope *s = ctx->scopes; s; s = s->next) s->parent = NULL; /* nothing moves now */
  while (ctx->scopes) scope_destroy(ctx, ctx->scopes);
  while (ctx->escaped) {
    ctx->escaped->refs = 1;
    tensor_unref(ctx, ctx->escaped);
  }
  pool_free(&ctx->tensor_slots);
  pool_free(&ctx->scope_slots);
}

tl_scope *tl_scope_begin(tl_ctx *ctx, const char *name) {
  if (!ctx) return NULL;
  tl_scope *s = scope_make(ctx, name, TL_SCOPE_OPEN);
  if (!s) return NULL;
  s->parent = ctx->current;
  ctx->current = s;
  if (!ctx->root) ctx->root = s; /* the root was ended: this one is the outermost now */
  return tagged(&s->slot);
}

tl_status tl_scope_end(tl_scope *handle) {
  tl_scope *s = scope_open(handle, "scope_end");
  if (!s) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (s->state != TL_SCOPE_OPEN)
    return tl_error_set(&ctx->err, TL_ERR_ARG,
                        "scope_end: '%s' is free-standing: leave it with tl_scope_leave, free it with tl_scope_free",
                        s->name);
  if (s != ctx->current)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_end: '%s' is not the innermost scope: end '%s' first",
                        s->name, scope_name(ctx->current));
  ctx->current = s->parent;
  scope_destroy(ctx, s);
  return TL_OK;
}

static bool is_ancestor(const tl_scope *a, const tl_scope *s) {
  for (s = s->parent; s; s = s->parent)
    if (s == a) return true;
  return false;
}

tl_status tl_scope_keep(tl_scope *scope, tl_tensor *handle) {
  tl_scope *s = scope_open(scope, "scope_keep");
  tl_tensor *t = s ? tl_api_tensor(handle, "scope_keep") : NULL;
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (s->state != TL_SCOPE_OPEN || !s->parent)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_keep: scope '%s' has no parent to hand tensors to",
                        s->name);
  if (t->owner == s) {
    t->kept = true;
    return TL_OK;
  }
  if (!t->owner || is_ancestor(t->owner, s)) return TL_OK; /* it already outlives s */
  return tl_error_set(&ctx->err, TL_ERR_ARG,
                      "scope_keep: tensor #%" PRIu64 " (made by %s) belongs to scope '%s', not to '%s'",
                      t->serial, t->creator, scope_name(t->owner), s->name);
}

tl_tensor *tl_scope_return(tl_scope *scope, tl_tensor *handle) {
  tl_status kept = handle ? tl_scope_keep(scope, handle) : TL_ERR_ARG;
  tl_status ended = tl_scope_end(scope);
  return kept == TL_OK && ended == TL_OK ? handle : NULL;
}

tl_scope *tl_scope_root(tl_ctx *ctx) { return ctx && ctx->root ? tagged(&ctx->root->slot) : NULL; }
tl_scope *tl_scope_current(tl_ctx *ctx) {
  return ctx && ctx->current ? tagged(&ctx->current->slot) : NULL;
}

tl_scope *tl_scope_new(tl_ctx *ctx, const char *name) {
  tl_scope *s = ctx ? scope_make(ctx, name, TL_SCOPE_DETACHED) : NULL;
  return s ? tagged(&s->slot) : NULL;
}

tl_status tl_scope_enter(tl_scope *handle) {
  tl_scope *s = scope_open(handle, "scope_enter");
  if (!s) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (s->state != TL_SCOPE_DETACHED)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_enter: '%s' is %s", s->name,
                        s->state == TL_SCOPE_ENTERED ? "entered already" : "not free-standing");
  s->state = TL_SCOPE_ENTERED;
  s->parent = ctx->current;
  ctx->current = s;
  return TL_OK;
}

tl_status tl_scope_leave(tl_scope *handle) {
  tl_scope *s = scope_open(handle, "scope_leave");
  if (!s) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (s->state != TL_SCOPE_ENTERED)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_leave: '%s' was not entered", s->name);
  if (s != ctx->current)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_leave: '%s' is not the innermost scope: end '%s' first",
                        s->name, scope_name(ctx->current));
  ctx->current = s->parent;
  s->parent = NULL;
  s->state = TL_SCOPE_DETACHED;
  return TL_OK;
}

tl_status tl_scope_free(tl_scope *handle) {
  tl_scope *s = scope_open(handle, "scope_free");
  if (!s) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (s->state != TL_SCOPE_DETACHED)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_free: '%s' is %s", s->name,
                        s->state == TL_SCOPE_ENTERED ? "entered: leave it first" : "nested: end it with tl_scope_end");
  scope_destroy(ctx, s);
  return TL_OK;
}

tl_status tl_scope_adopt(tl_scope *scope, tl_tensor *handle) {
  tl_scope *s = scope_open(scope, "scope_adopt");
  tl_tensor *t = s ? tl_api_tensor(handle, "scope_adopt") : NULL;
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = s->slot.ctx;
  if (t->slot.ctx != ctx) /* moving it would link it into the other context's lists */
    return tl_error_set(&ctx->err, TL_ERR_ARG, "scope_adopt: the tensor and scope '%s' belong to different contexts",
                        s->name);
  if (t->owner == s) return TL_OK;
  if (!owner_is_caller(ctx, t, "scope_adopt")) return ctx->err.status;
  set_owner(ctx, t, s);
  return TL_OK;
}

int64_t tl_scope_size(const tl_scope *handle) {
  tl_scope *s = scope_open(handle, "scope_size");
  return s ? s->ntensors : -1;
}

/* ---- the memory report ---------------------------------------------------------- */
static void print_tensor(FILE *out, const tl_tensor *t, const char *why) {
  char shape[TL_SHAPE_TEXT_MAX];
  fprintf(out, "  leaked: tensor #%" PRIu64 " %s%s made by %s: %s\n", t->serial, tl_dtype_name((tl_dtype)t->u->dtype),
          tl_format_shape(shape, sizeof shape, t->u->ndim, t->u->shape), t->creator, why);
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* Objects that would be lost at shutdown: tensors escaped or retained and never
 * released, and scopes other than the root left open or never freed. */
size_t tl_mem_report(tl_ctx *ctx, FILE *out) {
  if (!ctx) return 0;
  size_t leaks = 0;
  tl_stats st = tl_get_stats(ctx);
  if (out) {
    fprintf(out, "tl memory report\n");
    fprintf(out, "  tensors: %" PRIu64 " live, %" PRIu64 " made, %" PRIu64 " retains, %" PRIu64 " releases\n",
            st.live_tensors, st.tensors_created, st.retains, st.releases);
    fprintf(out, "  scopes: %" PRIu64 " open; graph nodes: %" PRIu64 " live\n", st.open_scopes, st.live_nodes);
    fprintf(out, "  buffers: %" PRIu64 " live, %.2f MiB live, %.2f MiB peak, %" PRIu64 " mallocs, %" PRIu64
                 " frees, %" PRIu64 " cache hits, %.2f MiB cached\n",
            st.live_buffers, mib(st.live_bytes), mib(st.peak_bytes), st.buffer_mallocs, st.buffer_frees,
            st.buffer_cache_hits, mib(st.cached_bytes));
    fprintf(out, "  arenas: last %.2f MiB for %.2f MiB of intermediates, %.2f MiB planned in all\n",
            mib(st.plan_arena_bytes), mib(st.plan_naive_bytes), mib(st.arena_bytes_total));
    if (st.device_allocs)
      fprintf(out, "  device: %" PRIu64 " buffers, %.2f MiB, %.2f MiB peak, %" PRIu64 " allocations, %.2f MiB cached\n",
              st.device_buffers, mib(st.device_bytes), mib(st.device_peak_bytes), st.device_allocs,
              mib(st.device_cached_bytes));
  }
  for (tl_scope *s = ctx->scopes; s; s = s->next) {
    if (s != ctx->root) {
      leaks++;
      if (out)
        fprintf(out, "  leaked: scope #%" PRIu64 " '%s' holding %" PRId64 " tensor(s): %s\n", s->serial, s->name,
                s->ntensors, s->state == TL_SCOPE_OPEN ? "never ended" : "never freed");
    }
    for (tl_tensor *t = s->tensors; t; t = t->next)
      if (t->refs > 1) {
        leaks++;
        if (out) print_tensor(out, t, "retained and never released");
      }
  }
  for (tl_tensor *t = ctx->escaped; t; t = t->next) {
    leaks++;
    if (out) print_tensor(out, t, "escaped and never released");
  }
  if (out) fprintf(out, "  %zu leaked object(s)\n", leaks);
  return leaks;
}

/* Hands r to the caller's scope. A failure inside (a stale handle, a bad shape
 * reaching tl_randn) carries the inner operation's name; ours goes in front so every
 * message starts with the public function the caller called. */
tl_tensor *tl_api_finish(tl_ctx *ctx, tl_scope *s, tl_tensor *r, const char *what) {
  r = tl_scope_return(s, r);
  size_t n = strlen(what);
  char *msg = ctx->err.msg;
  if (r || tl_last_status(ctx) == TL_OK || (strncmp(msg, what, n) == 0 && msg[n] == ':')) return r;
  size_t len = strlen(msg), cap = sizeof ctx->err.msg;
  if (n + 2 + len >= cap) len = cap - n - 3; /* the end of an overlong message goes */
  memmove(msg + n + 2, msg, len);
  msg[n + 2 + len] = 0;
  memcpy(msg, what, n);
  msg[n] = ':';
  msg[n + 1] = ' ';
  return NULL;
}
