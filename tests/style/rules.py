#!/usr/bin/python3
"""The house rules a newcomer relies on, checked.

usage: rules.py links|layout REPO

  links   every link in README.md and docs/*.md resolves inside the
          repository: a file that exists without leaving it, and an anchor
          (#section) naming a heading of its target (GitHub's slugs: lower
          case, punctuation dropped, spaces to hyphens). Web links are not
          followed (CI has no network) but must be https.
  layout  over src/: every .c and .h file opens with a comment saying what
          it is for; no include circle between modules (module X is X.c
          with X.h, and, split over files, X_parts.h, the private header
          they share, with every .c file that includes it; X uses Y when one
          of them includes Y.h): a circle means two files that can only be
          read together; no file over MAX_LINES
          lines, except those listed in LONG (still to split) or KERNELS
          (one kernel each) with the length they may not grow past; a workload (src/ but common/ and
          app/) writes its JSON summary only through wf_report, which writes
          each quantity's text from the same declaration (no wf_json_ or
          wf_projection_json call of its own: the two would drift); the
          hardware's cycle figures (SIMD widths, ports, ramps, hops, links,
          square roots, divisions, clock) are read only by the shared model,
          src/mesh_decomp/wf_model.c: no other source names those fields
          of any structure, so every workload costs its phases through its
          helpers (docs/model.md, "What overlaps what"), and none combines a
          phase by wf_range_max of its own. A guard against a workload that
          costs a phase by its own formula, not a proof: a literal cycle
          count in a workload's file still passes it.

Prints each breach; exits 1 if there is one."""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slugs(path):
    """The anchors of a Markdown file's headings."""
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        title = re.sub(r"[^\w\- ]", "", title)
        out.add(title.replace(" ", "-"))
    return out


def check_links(repo):
    files = [os.path.join(repo, "README.md")]
    docs = os.path.join(repo, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    bad = 0
    for path in files:
        fence = False
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                where = f"{os.path.relpath(path, repo)}:{number}: {target}"
                if re.match(r"[a-z]+:", target):
                    if not target.startswith("https://"):
                        print(f"{where}: a web link that is not https")
                        bad += 1
                    continue
                name, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
                if os.path.commonpath([dest, repo]) != repo:
                    print(f"{where}: outside the repository")
                    bad += 1
                elif not os.path.exists(dest):
                    print(f"{where}: no such file")
                    bad += 1
                elif anchor and dest.endswith(".md") and anchor not in slugs(dest):
                    print(f"{where}: no heading #{anchor} there")
                    bad += 1
    print(f"links: {len(files)} files, {bad} broken")
    return bad


MAX_LINES = 500
# Files still over MAX_LINES, to split (issue 35): none may grow, and a
# split one leaves the list.
LONG = {
}
# One kernel each, read as a whole (the exception): over MAX_LINES,
# but they may not grow either.
KERNELS = {
    "src/solvers/ff_pencil.c": 531,  # +9: one message a peer at scale (issue 51)
    "src/cfd/cf_rb.c": 520,
}
# Workload code talks to other ranks through the counted fabric (src/mesh_decomp)
# or the common layer's run-level collectives, never MPI itself (issue 51):
# the census tests (tests/e2e/census.py) hold every main loop to that. The
# set-up, checks, checkpoints and reports below still call MPI directly:
# none of these files may add a call, a file not listed may have none, and
# the list only shrinks.
DIRECT_MPI = re.compile(r'\bMPI_(I?Allreduce|I?Reduce|I?Bcast|I?Allgatherv?|I?Gatherv?|I?Scatterv?|I?Alltoallv?|Send|Recv|Isend|Irecv|Sendrecv|I?Barrier|Exscan|Scan|Reduce_scatter|Probe|Start|Startall)\s*\(')
WORKLOAD_DIRS = ("src/halo/", "src/solvers/", "src/cfd/", "src/md_eam/", "src/tlrmvm/",
                 "src/weight_stream/")
DIRECT_MPI_DEBT = {
    "src/halo/halo_workload.c": 4,
    "src/solvers/ff_pencil.c": 3,
    "src/solvers/fft_field.c": 9,
    "src/solvers/fft_reference.c": 10,
    "src/solvers/fft_workload.c": 4,
    "src/solvers/st_cg_fused.h": 1,
    "src/solvers/st_mesh.c": 1,
    "src/solvers/stencil_check.c": 1,
    "src/cfd/cf_checkpoint.c": 2,
    "src/cfd/cf_rb.c": 2,
    "src/cfd/cf_rb_checkpoint.c": 2,
    "src/cfd/cf_wave_checkpoint.c": 6,
    "src/cfd/cf_wave_probe.c": 1,
    "src/cfd/cfd_convection.c": 3,
    "src/cfd/cfd_convection_output.c": 5,
    "src/cfd/cfd_wave_check.c": 5,
    "src/cfd/cfd_wave_run.c": 3,
    "src/cfd/cfd_workload.c": 1,
    "src/md_eam/eam_crosscheck.c": 2,
    "src/md_eam/eam_setup.c": 2,
    "src/md_eam/eam_workload.c": 3,
    "src/md_eam/md_checkpoint.c": 2,
    "src/md_eam/md_domain.c": 1,
    "src/md_eam/md_sim.c": 2,
    "src/md_eam/md_system.c": 4,
    "src/tlrmvm/tl_compress.c": 3,
    "src/tlrmvm/tl_dense.c": 2,
    "src/tlrmvm/tl_io.c": 5,
    "src/tlrmvm/tl_matrix.c": 3,
    "src/tlrmvm/tl_mdd.c": 3,
    "src/tlrmvm/tlrmvm_mdd.c": 2,
    "src/tlrmvm/tlrmvm_naive.c": 3,
    "src/tlrmvm/tlrmvm_operators.c": 7,
    "src/tlrmvm/tlrmvm_products.c": 7,
    "src/tlrmvm/tlrmvm_systems.c": 1,
    "src/tlrmvm/tlrmvm_workload.c": 1,
    "src/weight_stream/train_loop.c": 8,
    "src/weight_stream/train_trainer.c": 10,
    "src/weight_stream/train_workload.c": 2,
    "src/weight_stream/ws_check.c": 4,
    "src/weight_stream/ws_checkpoint.c": 4,
    "src/weight_stream/ws_corpus.c": 3,
    "src/weight_stream/ws_gpt.c": 1,
    # the training grid's products, a fabric of their own: every collective
    # counted (ws_grid_counts), census_train_np4 holds the count to MPI's;
    # +1: the reduce-scatter (issue 51)
    "src/weight_stream/ws_grid.c": 7,
    "src/weight_stream/ws_relay.c": 7,
    "src/weight_stream/ws_stream.c": 9,
    "src/weight_stream/ws_stream_memx.c": 6,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
# The summary's writers: the common layer's and the app's; a workload's report
# goes through wf_report (src/common/wf_report.h).
OWN_JSON = re.compile(r"\b(wf_json_[a-z]+|wf_projection_json)\s*\(")
JSON_LAYERS = ("src/common/", "src/app/")


PARTS = re.compile(r'^\s*#\s*include\s+"([^"]+)_parts\.h"', re.M)


def module_of(name, text=""):
    """A module split over several files is one module: X_parts.h (its
    private half) and every .c file that includes it belong to X."""
    if name.endswith("_parts"):
        return name[:-len("_parts")]
    # the most specific of the parts it includes: cfd_wave_run.c is cfd_wave's
    shared = sorted(PARTS.findall(text), key=lambda m: (not name.startswith(m), -len(m)))
    return shared[0] if shared else name


def sources(repo):
    for root, _, files in os.walk(os.path.join(repo, "src")):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


# The hardware's cycle figures, which only the shared model reads.
HW_FIGURE = re.compile(r"(?:->|\.)\s*(simd|read_bytes|write_bytes|ramp_cycles|hop_cycles|"
                       r"ramp_words_per_cycle|link_bytes_per_cycle|sqrt_cycles|div_cycles|clock_hz)\b")
SHARED_MODEL = ("src/mesh_decomp/wf_model.c", "src/mesh_decomp/wf_hw.c", "src/mesh_decomp/wf_hw.h")


def check_layout(repo):
    bad = 0
    modules = {}  # name -> set of modules it uses
    for path in sources(repo):
        rel = os.path.relpath(path, repo)
        text = open(path, encoding="utf-8").read()
        if not text.lstrip().startswith(("/*", "//")) or not text.startswith(("/*", "//")):
            print(f"{rel}: does not open with a comment saying what it is for")
            bad += 1
        lines = text.count("\n")
        cap = LONG.get(rel, KERNELS.get(rel, MAX_LINES))
        if lines > cap:
            print(f"{rel}: {lines} lines, more than {cap}"
                  + (" (it is on the list of files to split: it may not grow)" if rel in LONG else ""))
            bad += 1
        if not rel.startswith(JSON_LAYERS):
            for call in sorted(set(OWN_JSON.findall(text))):
                print(f"{rel}: calls {call} (a report's quantities go through wf_report)")
                bad += 1
        if rel.startswith(WORKLOAD_DIRS):
            code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)  # calls, not comments
            calls, cap = len(DIRECT_MPI.findall(code)), DIRECT_MPI_DEBT.get(rel, 0)
            if calls > cap:
                print(f"{rel}: {calls} MPI calls of its own, more than {cap} (talk to other ranks "
                      "through the fabric, src/mesh_decomp/wf_fabric.h)")
                bad += 1
        if rel not in SHARED_MODEL:
            code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
            for figure in sorted(set(HW_FIGURE.findall(code))):
                print(f"{rel}: reads the hardware's {figure} (cost a phase through "
                      "src/mesh_decomp/wf_model.h)")
                bad += 1
            if "wf_range_max(" in code and not rel.endswith("wf_range.h"):
                print(f"{rel}: combines a phase by wf_range_max (wf_model_phase, wf_model_links)")
                bad += 1
        base = os.path.splitext(os.path.basename(path))[0]
        name = module_of(base, text if path.endswith(".c") else "")
        modules.setdefault(name, set()).update(module_of(m) for m in INCLUDE.findall(text))
    for name in modules:
        modules[name] = {m for m in modules[name] if m in modules and m != name}
    # Depth-first search for a circle; report each once.
    state, seen = {}, set()

    def visit(m, stack):
        nonlocal bad
        state[m] = 1
        stack.append(m)
        for d in sorted(modules[m]):
            if state.get(d) == 1:
                circle = stack[stack.index(d):] + [d]
                key = frozenset(circle)
                if key not in seen:
                    seen.add(key)
                    print("include circle: " + " -> ".join(circle))
                    bad += 1
            elif d not in state:
                visit(d, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m, [])
    print(f"layout: {len(modules)} modules, {bad} breaches")
    return bad


CHECKS = {"links": check_links, "layout": check_layout}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        sys.exit(__doc__.split("\n\n")[1])
    sys.exit(1 if CHECKS[sys.argv[1]](os.path.abspath(sys.argv[2])) else 0)
