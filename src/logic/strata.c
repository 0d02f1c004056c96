/* strata.c — the rules' dependency graph in (head relation -> body relations,
 * negated or not), strata out: its strongly connected components in an order where
 * every stratum comes after those it reads. Negation inside a component is an error
 * that names a cycle through it. The check alone (tl_logic_strata_check) needs no
 * knowledge base: the language's checker runs it on a program at compile time. */
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "logic/logic.h"

typedef struct {
  int *start, *to; /* CSR: the relations relation v reads: to[start[v] .. start[v + 1]) */
  uint8_t *neg; /* tl_logic_dep.neg */
} dep_graph;

static void graph_free(dep_graph *g) {
  free(g->start);
  free(g->to);
  free(g->neg);
}

/* the graph of n relations and the dependencies, each relation's in their order */
static bool graph_build(int n, int ndeps, const tl_logic_dep *deps, dep_graph *g) {
  g->start = calloc((size_t)n + 1, sizeof *g->start);
  g->to = malloc((size_t)(ndeps ? ndeps : 1) * sizeof *g->to);
  g->neg = malloc((size_t)(ndeps ? ndeps : 1) * sizeof *g->neg);
  if (!g->start || !g->to || !g->neg) return false;
  for (int k = 0; k < ndeps; k++) g->start[deps[k].head + 1]++;
  for (int v = 0; v < n; v++) g->start[v + 1] += g->start[v];
  int *fill = malloc((size_t)(n ? n : 1) * sizeof *fill);
  if (!fill) return false;
  memcpy(fill, g->start, (size_t)n * sizeof *fill);
  for (int k = 0; k < ndeps; k++) {
    int e = fill[deps[k].head]++;
    g->to[e] = deps[k].body;
    g->neg[e] = deps[k].neg;
  }
  free(fill);
  return true;
}

/* what kb's rules read, rule by rule, literal by literal; NULL if out of memory */
static tl_logic_dep *kb_deps(const tl_kb *kb, int *ndeps) {
  int m = 0;
  for (int i = 0; i < kb->nrules; i++)
    for (int j = 0; j < kb->rules[i].nbody; j++)
      if (kb->rules[i].body[j].rel >= 0) m++;
  tl_logic_dep *d = malloc((size_t)(m ? m : 1) * sizeof *d);
  *ndeps = 0;
  for (int i = 0; d && i < kb->nrules; i++)
    for (int j = 0; j < kb->rules[i].nbody; j++) {
      const tl_logic_lit *l = &kb->rules[i].body[j];
      uint8_t neg = l->kind == TL_LIT_NOT ? 1 : l->kind == TL_LIT_AGG ? (uint8_t)(2 + l->op - TL_KB_COUNT) : 0;
      if (l->rel >= 0) d[(*ndeps)++] = (tl_logic_dep){kb->rules[i].head.rel, l->rel, neg};
    }
  return d;
}

/* Tarjan's algorithm without recursion (a chain of thousands of relations must not
 * exhaust the stack). comp[v] numbers components in the order they complete, which
 * puts every component after the components it reads. */
static int tarjan(const dep_graph *g, int n, int *comp) {
  int *index = malloc((size_t)n * sizeof *index), *low = malloc((size_t)n * sizeof *low);
  int *stack = malloc((size_t)n * sizeof *stack), *frame = malloc((size_t)n * sizeof *frame);
  int *pos = malloc((size_t)n * sizeof *pos);
  bool *on = calloc((size_t)n, sizeof *on);
  int ncomp = -1;
  if (!index || !low || !stack || !frame || !pos || !on) goto done;
  ncomp = 0;
  for (int v = 0; v < n; v++) index[v] = -1;
  int counter = 0, sp = 0;
  for (int root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    int fp = 0;
    frame[fp++] = root;
    index[root] = low[root] = counter++;
    pos[root] = g->start[root];
    stack[sp++] = root, on[root] = true;
    while (fp) {
      int v = frame[fp - 1];
      if (pos[v] < g->start[v + 1]) {
        int w = g->to[pos[v]++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          pos[w] = g->start[w];
          stack[sp++] = w, on[w] = true;
          frame[fp++] = w;
        } else if (on[w] && index[w] < low[v]) {
          low[v] = index[w];
        }
        continue;
      }
      fp--;
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack[--sp];
          on[w] = false;
          comp[w] = ncomp;
        } while (w != v);
        ncomp++;
      }
      if (fp && low[v] < low[frame[fp - 1]]) low[frame[fp - 1]] = low[v];
    }
  }
done:
  free(index), free(low), free(stack), free(frame), free(pos), free(on);
  return ncomp;
}

/* "p -> not q -> r -> p": p reads q under not, and q leads back to p inside the
 * component (a shortest way, found breadth first). */
static const char *const dep_words[] = {"", "not ", "count ", "sum ", "min ", "max "};

static char *cycle_text(int n, const char *const *names, const dep_graph *g, const int *comp, int p, int q, int neg) {
  int *pred = malloc((size_t)n * sizeof *pred), *queue = malloc((size_t)n * sizeof *queue);
  uint8_t *pneg = malloc((size_t)n * sizeof *pneg);
  tl_strbuf sb = {0};
  if (!pred || !queue || !pneg) goto done;
  for (int v = 0; v < n; v++) pred[v] = -1;
  int head = 0, tail = 0;
  queue[tail++] = q;
  pred[q] = q;
  while (head < tail && pred[p] < 0) {
    int v = queue[head++];
    for (int k = g->start[v]; k < g->start[v + 1]; k++) {
      int w = g->to[k];
      if (comp[w] != comp[p] || pred[w] >= 0) continue;
      pred[w] = v;
      pneg[w] = g->neg[k];
      queue[tail++] = w;
    }
  }
  /* the way q -> ... -> p, reversed from the predecessors */
  int len = 0;
  if (p != q)
    for (int v = p; v != q; v = pred[v]) queue[len++] = v;
  tl_strbuf_printf(&sb, "%s -> %s%s", names[p], dep_words[neg], names[q]);
  for (int k = len - 1; k >= 0; k--)
    tl_strbuf_printf(&sb, " -> %s%s", dep_words[pneg[queue[k]]], names[queue[k]]);
done:
  free(pred), free(queue), free(pneg);
  return tl_strbuf_take(&sb);
}

void tl_logic_strata_free(tl_kb *kb) {
  for (int s = 0; s < kb->nstrata; s++) {
    free(kb->strata[s].rels);
    free(kb->strata[s].rules);
  }
  free(kb->strata);
  kb->strata = NULL;
  kb->nstrata = 0;
}

/* the body literal of kb's rules that dependency k (kb_deps' order) comes from */
static int dep_literal(const tl_kb *kb, int k) {
  for (int i = 0; i < kb->nrules; i++)
    for (int j = 0; j < kb->rules[i].nbody; j++)
      if (kb->rules[i].body[j].rel >= 0 && k-- == 0) return j;
  return -1;
}

/* The components of the graph of deps into comp (*ncomp of them), and the first
 * dependency that negates inside its head's component: -1 none, -2 out of memory. */
static int components(int n, int ndeps, const tl_logic_dep *deps, dep_graph *g, int *comp, int *ncomp) {
  *ncomp = graph_build(n, ndeps, deps, g) ? tarjan(g, n, comp) : -1;
  if (*ncomp < 0) return -2;
  for (int k = 0; k < ndeps; k++)
    if (deps[k].neg && comp[deps[k].body] == comp[deps[k].head]) return k;
  return -1;
}

int tl_logic_strata_check(int nrels, const char *const *names, int ndeps, const tl_logic_dep *deps, char **cycle) {
  dep_graph g = {0};
  int ncomp, *comp = malloc((size_t)(nrels ? nrels : 1) * sizeof *comp);
  int bad = comp ? components(nrels, ndeps, deps, &g, comp, &ncomp) : -2;
  *cycle = bad >= 0 ? cycle_text(nrels, names, &g, comp, deps[bad].head, deps[bad].body, deps[bad].neg) : NULL;
  graph_free(&g);
  free(comp);
  return bad;
}

tl_status tl_logic_stratify(tl_kb *kb, const char *what) {
  int n = kb->nrels, ndeps = 0, ncomp = -1, bad = -2;
  dep_graph g = {0};
  int *comp = malloc((size_t)(n ? n : 1) * sizeof *comp);
  tl_logic_dep *deps = comp ? kb_deps(kb, &ndeps) : NULL;
  if (deps) bad = components(n, ndeps, deps, &g, comp, &ncomp);
  if (bad == -2) {
    graph_free(&g);
    free(comp), free(deps);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "%s: out of memory", what);
  }
  if (bad >= 0) {
    const char **names = malloc((size_t)n * sizeof *names);
    for (int v = 0; names && v < n; v++) names[v] = kb->rels[v].name;
    char *cycle = names ? cycle_text(n, names, &g, comp, deps[bad].head, deps[bad].body, deps[bad].neg) : NULL;
    tl_status st = tl_logic_fail(kb, cycle ? TL_ERR_ARG : TL_ERR_NOMEM, "%s: %s is not stratified: %s", what,
                                 deps[bad].neg > 1 ? "an aggregate" : "negation", cycle ? cycle : "(out of memory)");
    kb->err_lit = dep_literal(kb, bad);
    free(cycle), free(names);
    graph_free(&g);
    free(comp), free(deps);
    return st;
  }
  graph_free(&g);
  free(deps);
  tl_logic_stratum *strata = calloc((size_t)(ncomp ? ncomp : 1), sizeof *strata);
  bool ok = strata != NULL;
  for (int v = 0; ok && v < n; v++) strata[comp[v]].nrels++;
  for (int i = 0; ok && i < kb->nrules; i++) strata[comp[kb->rules[i].head.rel]].nrules++;
  for (int s = 0; ok && s < ncomp; s++) {
    strata[s].rels = malloc((size_t)strata[s].nrels * sizeof *strata[s].rels);
    strata[s].rules = malloc((size_t)(strata[s].nrules ? strata[s].nrules : 1) * sizeof *strata[s].rules);
    ok = strata[s].rels && strata[s].rules;
    strata[s].nrels = strata[s].nrules = 0;
  }
  if (!ok) {
    for (int s = 0; strata && s < ncomp; s++) free(strata[s].rels), free(strata[s].rules);
    free(strata);
    free(comp);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "%s: out of memory", what);
  }
  for (int v = 0; v < n; v++) {
    tl_logic_stratum *s = &strata[comp[v]];
    s->rels[s->nrels++] = v;
    kb->rels[v].stratum = comp[v];
  }
  for (int i = 0; i < kb->nrules; i++) {
    tl_logic_stratum *s = &strata[comp[kb->rules[i].head.rel]];
    s->rules[s->nrules++] = i;
  }
  free(comp);
  tl_logic_strata_free(kb);
  kb->strata = strata;
  kb->nstrata = ncomp;
  return TL_OK;
}
