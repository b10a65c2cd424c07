/* Where the ranks run (wf_binding.h): each rank's host, allowed CPUs and physical cores,
 * gathered on rank 0; whether two ranks share a core; the binding line and its JSON. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET: Linux */
#include "wf_binding.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_strbuf.h"

/* The physical core of logical CPU `cpu` (package * 65536 + core id), or
 * the CPU itself where /sys does not say. */
static int physical_core(int cpu) {
  int core = -1, package = 0;
  char path[128];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%d", &core) != 1) core = -1;
    fclose(f);
  }
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
  f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%d", &package) != 1) package = 0;
    fclose(f);
  }
  return core < 0 ? cpu : package * 65536 + core;
}

/* This rank's record: host, CPU list, physical cores. */
static void describe_self(wf_binding_rank *r) {
  memset(r, 0, sizeof *r);
  int len = 0;
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &len);
  snprintf(r->host, sizeof r->host, "%s", name);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    snprintf(r->cpus, sizeof r->cpus, "unknown");
    return;
  }
  size_t used = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    used += (size_t)snprintf(r->cpus + used, used < sizeof r->cpus ? sizeof r->cpus - used : 0,
                             last > c ? "%s%d-%d" : "%s%d", used ? "," : "", c, last);
    for (int k = c; k <= last; k++) {
      if (k < 8 * (int)sizeof r->cpu_bits) r->cpu_bits[k / 8] |= (unsigned char)(1u << k % 8);
      int core = physical_core(k);
      bool seen = false;
      for (int i = 0; i < r->ncores; i++) seen |= r->core[i] == core;
      if (!seen && r->ncores < (int)(sizeof r->core / sizeof r->core[0])) r->core[r->ncores++] = core;
    }
    c = last;
  }
}

static bool share_core(const wf_binding_rank *a, const wf_binding_rank *b) {
  if (strcmp(a->host, b->host) != 0) return false;
  for (int i = 0; i < a->ncores; i++)
    for (int k = 0; k < b->ncores; k++)
      if (a->core[i] == b->core[k]) return true;
  return false;
}

int wf_binding_gather(MPI_Comm comm, wf_binding *b, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &b->nranks);
  b->rank = NULL;
  b->nhosts = 0;
  b->shared[0] = b->shared[1] = -1;
  wf_binding_rank me;
  describe_self(&me);
  wf_status_clear(st);
  if (rank == 0) {
    b->rank = malloc((size_t)b->nranks * sizeof *b->rank);
    if (!b->rank) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the ranks' binding");
  }
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return st->code;
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, b->rank, (int)sizeof me, MPI_BYTE, 0, comm);
  if (rank != 0) return WF_OK;
  for (int r = 0; r < b->nranks; r++) {
    bool new_host = true;
    for (int q = 0; q < r; q++) {
      new_host &= strcmp(b->rank[q].host, b->rank[r].host) != 0;
      if (b->shared[0] < 0 && share_core(&b->rank[q], &b->rank[r]))
        b->shared[0] = q, b->shared[1] = r;
    }
    b->nhosts += new_host;
  }
  return WF_OK;
}

void wf_binding_free(wf_binding *b) {
  free(b->rank);
  b->rank = NULL;
}

void wf_binding_print(const wf_binding *b, FILE *out) {
  if (!b->rank) return;
  fprintf(out, "binding: %d rank(s) on %d host(s):", b->nranks, b->nhosts);
  for (int r = 0; r < b->nranks && r < 8; r++) fprintf(out, " %d:cpus %s", r, b->rank[r].cpus);
  fprintf(out, "%s\n", b->nranks > 8 ? " ..." : "");
  if (b->shared[0] >= 0)
    fprintf(out, "binding: warning: ranks %d and %d share a core on %s (cpus %s and %s): "
            "per-rank times and scaling figures are not meaningful (bind ranks to cores: "
            "srun --cpu-bind=cores, mpiexec --bind-to core)\n",
            b->shared[0], b->shared[1], b->rank[b->shared[0]].host, b->rank[b->shared[0]].cpus,
            b->rank[b->shared[1]].cpus);
}

/* A bit set of CPUs as a list: "0-3,8". */
static void format_cpus(const unsigned char *bits, size_t nbytes, char *out, size_t len) {
  size_t used = 0;
  int n = (int)(8 * nbytes);
  out[0] = '\0';
  for (int c = 0; c < n; c++) {
    if (!(bits[c / 8] >> c % 8 & 1)) continue;
    int last = c;
    while (last + 1 < n && bits[(last + 1) / 8] >> (last + 1) % 8 & 1) last++;
    used += (size_t)snprintf(out + used, used < len ? len - used : 0, last > c ? "%s%d-%d" : "%s%d",
                             used ? "," : "", c, last);
    c = last;
  }
}

/* One host's ranks: how many, the union of their CPUs, whether two share a core. */
typedef struct host_kind {
  int hosts, ranks;
  const char *first;
  unsigned char cpus[128];
  bool shared;
} host_kind;

static void summarise_host(const wf_binding *b, int first, host_kind *k) {
  memset(k, 0, sizeof *k);
  k->hosts = 1;
  k->first = b->rank[first].host;
  for (int r = first; r < b->nranks; r++) {
    if (strcmp(b->rank[r].host, k->first) != 0) continue;
    k->ranks++;
    for (size_t i = 0; i < sizeof k->cpus; i++) k->cpus[i] |= b->rank[r].cpu_bits[i];
    for (int q = first; q < r && !k->shared; q++)
      k->shared = strcmp(b->rank[q].host, k->first) == 0 && share_core(&b->rank[q], &b->rank[r]);
  }
}

void wf_binding_json(const wf_binding *b, wf_json *j) {
  if (!b->rank) return;
  host_kind *kinds = calloc((size_t)b->nhosts + 1, sizeof *kinds);
  if (!kinds) return;
  int nkinds = 0;
  for (int r = 0; r < b->nranks; r++) {
    bool seen = false; /* this host summarised already */
    for (int q = 0; q < r && !seen; q++) seen = strcmp(b->rank[q].host, b->rank[r].host) == 0;
    if (seen) continue;
    host_kind k;
    summarise_host(b, r, &k);
    int same = -1;
    for (int i = 0; i < nkinds && same < 0; i++)
      if (kinds[i].ranks == k.ranks && kinds[i].shared == k.shared &&
          memcmp(kinds[i].cpus, k.cpus, sizeof k.cpus) == 0)
        same = i;
    if (same >= 0)
      kinds[same].hosts++;
    else
      kinds[nkinds++] = k;
  }
  wf_json_begin(j, "binding");
  wf_json_int(j, "hosts", b->nhosts);
  wf_json_int(j, "ranks", b->nranks);
  wf_json_bool(j, "shared_core", b->shared[0] >= 0);
  wf_strbuf list = {0};
  wf_strbuf_printf(&list, "[");
  for (int i = 0; i < nkinds; i++) {
    char cpus[512];
    format_cpus(kinds[i].cpus, sizeof kinds[i].cpus, cpus, sizeof cpus);
    wf_json k;
    wf_json_init(&k);
    wf_json_int(&k, "hosts", kinds[i].hosts);
    wf_json_str(&k, "first", kinds[i].first);
    wf_json_int(&k, "ranks_per_host", kinds[i].ranks);
    wf_json_str(&k, "cpus", cpus);
    wf_json_bool(&k, "shared_core", kinds[i].shared);
    wf_strbuf_printf(&list, "%s%s", i ? "," : "", wf_json_finish(&k));
    wf_json_free(&k);
  }
  wf_strbuf_printf(&list, "]");
  wf_json_raw(j, "host_kinds", list.oom ? "null" : list.s);
  wf_json_end(j);
  wf_strbuf_free(&list);
  free(kinds);
}
