/* Where the ranks run (wf_binding.h): each rank's host, allowed CPUs and physical cores,
 * compared within each host and summarised up a reduction tree; whether two ranks share a
 * core; the binding line and its JSON. */
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
  for (int i = 0; i < a->ncores; i++)
    for (int k = 0; k < b->ncores; k++)
      if (a->core[i] == b->core[k]) return true;
  return false;
}

/* This host's summary, on its first rank, from its ranks' records. */
static void summarise_host(const wf_binding_rank *r, int n, wf_binding *b) {
  wf_host_kind *k = &b->kind[0];
  b->nhosts = b->nkinds = 1;
  b->nranks = n;
  k->hosts = 1, k->ranks = n;
  snprintf(k->first, sizeof k->first, "%s", r[0].host);
  for (int i = 0; i < n; i++) {
    for (size_t c = 0; c < sizeof k->cpus; c++) k->cpus[c] |= r[i].cpu_bits[c];
    for (int q = 0; q < i && b->shared[0] < 0; q++)
      if (share_core(&r[q], &r[i])) {
        b->shared[0] = r[q].rank, b->shared[1] = r[i].rank;
        snprintf(b->shared_host, sizeof b->shared_host, "%s", r[0].host);
        snprintf(b->shared_cpus[0], sizeof b->shared_cpus[0], "%s", r[q].cpus);
        snprintf(b->shared_cpus[1], sizeof b->shared_cpus[1], "%s", r[i].cpus);
      }
  }
  k->shared = b->shared[0] >= 0;
}

/* The reduction's operator: `in` (lower ranks) merged into `inout`, which
 * then holds both, lower ranks' first (the operator does not commute). */
static void merge(void *in_v, void *inout_v, int *len, MPI_Datatype *type) {
  (void)type;
  for (int e = 0; e < *len; e++) {
    const wf_binding *a = (const wf_binding *)in_v + e;
    wf_binding *b = (wf_binding *)inout_v + e, m = *a;
    m.nranks += b->nranks, m.nhosts += b->nhosts, m.other_hosts += b->other_hosts;
    if (m.shared[0] < 0 && b->shared[0] >= 0) {
      memcpy(m.shared, b->shared, sizeof m.shared);
      memcpy(m.shared_host, b->shared_host, sizeof m.shared_host);
      memcpy(m.shared_cpus, b->shared_cpus, sizeof m.shared_cpus);
    }
    for (int i = 0; i < b->nkinds; i++) {
      const wf_host_kind *k = &b->kind[i];
      int same = -1;
      for (int q = 0; q < m.nkinds && same < 0; q++)
        if (m.kind[q].ranks == k->ranks && m.kind[q].shared == k->shared &&
            memcmp(m.kind[q].cpus, k->cpus, sizeof k->cpus) == 0)
          same = q;
      if (same >= 0) m.kind[same].hosts += k->hosts;
      else if (m.nkinds < WF_BINDING_KINDS) m.kind[m.nkinds++] = *k;
      else m.other_hosts += k->hosts;
    }
    for (int r = 0; r < WF_BINDING_LISTED; r++)
      if (!m.cpus[r][0]) memcpy(m.cpus[r], b->cpus[r], sizeof m.cpus[r]);
    *b = m;
  }
}

int wf_binding_gather(MPI_Comm comm, wf_binding *b, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  memset(b, 0, sizeof *b);
  b->shared[0] = b->shared[1] = -1;
  wf_binding_rank me;
  describe_self(&me);
  me.rank = rank;
  /* The ranks of this host, its first rank their summary's (a host's
   * ranks: a handful, whatever the job's size). */
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int here, nhere;
  MPI_Comm_rank(host, &here);
  MPI_Comm_size(host, &nhere);
  wf_binding_rank *all = here == 0 ? malloc((size_t)nhere * sizeof *all) : NULL;
  wf_status_clear(st);
  if (here == 0 && !all) wf_fail(st, WF_ERR_RUNTIME, "out of memory for a host's binding");
  wf_status_agree(comm, st);
  if (st->code != WF_OK) {
    free(all);
    MPI_Comm_free(&host);
    return st->code;
  }
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, host);
  MPI_Comm_free(&host);
  wf_binding mine = *b;
  if (here == 0) summarise_host(all, nhere, &mine);
  free(all);
  if (rank < WF_BINDING_LISTED) snprintf(mine.cpus[rank], sizeof mine.cpus[rank], "%s", me.cpus);
  MPI_Datatype type;
  MPI_Type_contiguous((int)sizeof mine, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Op op;
  MPI_Op_create(merge, 0, &op);
  MPI_Reduce(&mine, b, 1, type, op, 0, comm);
  MPI_Op_free(&op);
  MPI_Type_free(&type);
  b->valid = rank == 0;
  return WF_OK;
}

void wf_binding_free(wf_binding *b) { b->valid = false; }

void wf_binding_print(const wf_binding *b, FILE *out) {
  if (!b->valid) return;
  fprintf(out, "binding: %d rank(s) on %d host(s):", b->nranks, b->nhosts);
  for (int r = 0; r < b->nranks && r < WF_BINDING_LISTED; r++)
    fprintf(out, " %d:cpus %s", r, b->cpus[r]);
  fprintf(out, "%s\n", b->nranks > WF_BINDING_LISTED ? " ..." : "");
  if (b->shared[0] >= 0)
    fprintf(out, "binding: warning: ranks %d and %d share a core on %s (cpus %s and %s): "
            "per-rank times and scaling figures are not meaningful (bind ranks to cores: "
            "srun --cpu-bind=cores, mpiexec --bind-to core)\n",
            b->shared[0], b->shared[1], b->shared_host, b->shared_cpus[0], b->shared_cpus[1]);
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

void wf_binding_json(const wf_binding *b, wf_json *j) {
  if (!b->valid) return;
  wf_json_begin(j, "binding");
  wf_json_int(j, "hosts", b->nhosts);
  wf_json_int(j, "ranks", b->nranks);
  wf_json_bool(j, "shared_core", b->shared[0] >= 0);
  wf_strbuf list = {0};
  wf_strbuf_printf(&list, "[");
  for (int i = 0; i < b->nkinds; i++) {
    char cpus[512];
    format_cpus(b->kind[i].cpus, sizeof b->kind[i].cpus, cpus, sizeof cpus);
    wf_json k;
    wf_json_init(&k);
    wf_json_int(&k, "hosts", b->kind[i].hosts);
    wf_json_str(&k, "first", b->kind[i].first);
    wf_json_int(&k, "ranks_per_host", b->kind[i].ranks);
    wf_json_str(&k, "cpus", cpus);
    wf_json_bool(&k, "shared_core", b->kind[i].shared);
    wf_strbuf_printf(&list, "%s%s", i ? "," : "", wf_json_finish(&k));
    wf_json_free(&k);
  }
  wf_strbuf_printf(&list, "]");
  wf_json_raw(j, "host_kinds", list.oom ? "null" : list.s);
  if (b->other_hosts) wf_json_int(j, "other_hosts", b->other_hosts);
  wf_json_end(j);
  wf_strbuf_free(&list);
}
