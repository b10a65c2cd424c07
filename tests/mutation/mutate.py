#!/usr/bin/python3
"""Mutation testing: do wafer's checks catch planted bugs?

usage: mutate.py check                      every mutant still applies (exactly one match)
       mutate.py list [WORKLOAD ...]        the mutants, one line each
       mutate.py run [--sample N] [--runs-only] [--tree REV] [WORKLOAD | MUTANT-ID ...]
       mutate.py report [--before REV] [--output FILE]
                                            docs/verification.md from the saved results
                                            (with REV's, from run --tree REV, as "before")

A mutant is a small source edit (tests/mutation/WORKLOAD.txt). `run` copies the
tracked tree to build-mutation/src (only files that changed, so builds stay
incremental), builds it once unmutated and checks that baseline (every run `ok`,
every test passing), then for each mutant: applies the edit, builds, and asks
  (a) the workload's default runs (its embedded deck on 2 ranks, and `wafer
      demo`'s variant if it has one): caught when a run exits non-zero or its
      status is not "ok";
  (b) the workload's tests (the ctest regex in its file): caught when one fails
      or the set runs past its time limit;
then restores the file. Results go to build-mutation/results/ID.json; `report`
turns them into the scores (a run only replaces its own mutants' results).
`--sample N` runs N mutants chosen by the day of the year (CI rotates through
the list). `--runs-only` asks (a) alone. `--in-place BUILD` mutates the
working tree itself and rebuilds BUILD (already built and tested: no copy,
no baseline; fixed time limits), restoring each file and rebuilding after:
CI's sample, minutes instead of a copy's full build. `--tree REV` mutates git revision REV
instead of the working tree (in build-mutation-REV/: the scores before a
change), its results kept apart.

A mutant file has `tests = REGEX` and one or more `run = ARGS` lines, then
blocks:

    [id] what the mutant does, as a bug report would say it
    file = src/...
    - text that must occur exactly once in the file
    + the text it becomes
    survives = (for a mutant known to survive) why it is equivalent, or what
               would catch it

Several `-` (and `+`) lines make a multi-line text. Everything after "- " or
"+ " is kept as it is, indentation included.
"""
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORK = os.environ.get("WAFER_MUTATION_DIR", os.path.join(ROOT, "build-mutation"))
SRC, BUILD, RESULTS = (os.path.join(WORK, d) for d in ("src", "build", "results"))
RANKS = 2
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_odls_base_sigkill_timeout="0")
# A mutant's run or test set that takes this many times its baseline (and
# at least MIN_LIMIT seconds) hung: caught, as a user would notice.
SLOWDOWN, MIN_LIMIT = 4.0, 60.0


class Mutant:
    def __init__(self, workload, ident, what):
        self.workload, self.id, self.what = workload, ident, what
        self.file, self.old, self.new, self.survives = None, [], [], ""
        self.runs = []  # the runs that execute the mutated code, if not the default ones


class Workload:
    def __init__(self, name):
        self.name, self.tests, self.runs, self.mutants = name, None, [], []


def fail(msg):
    sys.exit(f"mutate.py: {msg}")


def parse(path):
    w = Workload(os.path.basename(path)[:-4])
    m = None
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        where = f"{os.path.relpath(path, ROOT)}:{lineno}"
        if line.startswith("- ") or line == "-":
            if not m:
                fail(f"{where}: a '-' line outside a mutant")
            m.old.append(line[2:])
        elif line.startswith("+ ") or line == "+":
            if not m:
                fail(f"{where}: a '+' line outside a mutant")
            m.new.append(line[2:])
        elif not line.strip() or line.startswith("#"):
            continue
        elif line.startswith("["):
            head = re.match(r"\[([a-z0-9][a-z0-9-]*)\]\s+(.+)$", line)
            if not head:
                fail(f"{where}: expected '[id] what it does'")
            m = Mutant(w.name, f"{w.name}.{head.group(1)}", head.group(2))
            w.mutants.append(m)
        else:
            key, sep, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if not sep:
                fail(f"{where}: expected 'key = value'")
            if key == "tests" and not m:
                w.tests = value
            elif key == "run":
                (m.runs if m else w.runs).append(shlex.split(value))
            elif key == "file" and m:
                m.file = value
            elif key == "survives" and m:
                m.survives = value
            else:
                fail(f"{where}: unexpected key '{key}'")
    if not w.tests or not w.runs:
        fail(f"{path}: needs 'tests =' and at least one 'run ='")
    for m in w.mutants:
        if not m.file or not m.old:
            fail(f"{path}: mutant {m.id} needs 'file =' and '-' lines")
    return w


def workloads():
    files = sorted(f for f in os.listdir(HERE) if f.endswith(".txt"))
    return [parse(os.path.join(HERE, f)) for f in files]


def apply(m, root):
    """The file's bytes under root and its mutated bytes (exactly one match
    required)."""
    text = open(os.path.join(root, m.file), "rb").read()
    old, new = "\n".join(m.old).encode(), "\n".join(m.new).encode()
    count = text.count(old)
    if count != 1:
        raise ValueError(f"{m.id}: {m.file} has the text {count} times, not once: {old.decode()!r}")
    return text, text.replace(old, new)


def check(all_workloads, root=ROOT):
    errors, seen = 0, set()
    for w in all_workloads:
        for m in w.mutants:
            if m.id in seen:
                print(f"{m.id}: the id is used twice")
                errors += 1
            seen.add(m.id)
            try:
                apply(m, root)
            except (ValueError, OSError) as e:
                print(e)
                errors += 1
    total = sum(len(w.mutants) for w in all_workloads)
    print(f"{total} mutants in {len(all_workloads)} workloads, {errors} that do not apply")
    return 1 if errors else 0


def sync_tree(rev=None):
    """Copy the working tree (tracked files and new ones git does not ignore),
    or revision `rev`, to SRC, touching only files whose bytes differ."""
    origin = ROOT
    if rev:
        origin = os.path.join(WORK, "export")
        shutil.rmtree(origin, ignore_errors=True)
        os.makedirs(origin)
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", origin], input=archive, check=True)
        files = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", rev], cwd=ROOT,
                               check=True, capture_output=True).stdout.decode().split("\0")
    else:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], cwd=ROOT, check=True,
                               capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src, dst = os.path.join(origin, rel), os.path.join(SRC, rel)
        if not os.path.isfile(src):
            continue
        data = open(src, "rb").read()
        if os.path.exists(dst) and open(dst, "rb").read() == data:
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        shutil.copymode(src, dst)


def configure():
    # Warnings as errors, as CI builds: a mutant must build there too (the
    # CI's sample mutates its own build in place, --in-place).
    r = subprocess.run(["cmake", "-S", SRC, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
                        "-DWAFER_WERROR=ON"],
                       capture_output=True, text=True)
    if r.returncode:
        fail("the copy does not configure:\n" + r.stdout[-3000:] + r.stderr[-3000:])


def build(only_wafer=False):
    target = ["--target", "wafer"] if only_wafer else []
    r = subprocess.run(["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), *target],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


class Timeout(Exception):
    pass


def run_group(cmd, cwd, limit):
    """subprocess.run in a session of its own: on a timeout the whole group
    (mpiexec and its ranks, ctest and its tests) is killed, nothing else."""
    p = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise Timeout()
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def default_run(args, limit):
    """(caught, why, seconds) for `wafer ARGS` on RANKS ranks (or `-n N` as
    ARGS begin) in a scratch folder."""
    ranks = RANKS
    if args[:1] == ["-n"]:
        ranks, args = int(args[1]), args[2:]
    with tempfile.TemporaryDirectory(prefix="wafer-mutant-") as tmp:
        cmd = ["mpiexec", "-n", str(ranks), os.path.join(BUILD, "wafer"), *args, "--quiet"]
        t0 = time.time()
        try:
            r = run_group(cmd, tmp, limit)
        except Timeout:
            return True, f"hung (over {limit:.0f} s)", time.time() - t0
        seconds = time.time() - t0
        status = "?"
        for line in reversed(r.stdout.splitlines()):
            if line.startswith("{"):
                try:
                    status = json.loads(line).get("status", "?")
                except json.JSONDecodeError:
                    pass
                break
        if r.returncode != 0:
            return True, f"exit {r.returncode}, status {status}", seconds
        if status != "ok":
            return True, f"status {status}", seconds
        return False, "ok", seconds


def failed_tests(stdout):
    """The tests ctest lists as failed (not those it skipped or did not run)."""
    section = stdout.split("The following tests FAILED:", 1)
    if len(section) < 2:
        return []
    return re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Exception|Subprocess[^)]*|"
                      r"Child aborted|Illegal|Interrupt|Numerical|OTHER_FAULT|BAD_COMMAND)[^)]*\)",
                      section[1], re.M)


def test_set(regex, limit, want_output=False):
    """(caught, failed test names, seconds) for ctest -R REGEX (and its
    output, to show why, with want_output)."""
    cmd = ["ctest", "-R", regex, "-j", "2", "--stop-on-failure", "--output-on-failure"]
    t0 = time.time()
    try:
        r = run_group(cmd, BUILD, limit)
    except Timeout:
        hung = (True, [f"hung (over {limit:.0f} s)"], time.time() - t0)
        return hung + ("",) if want_output else hung
    seconds = time.time() - t0
    failed = failed_tests(r.stdout)
    if "No tests were found" in r.stdout + r.stderr:
        fail(f"no test matches {regex!r}")
    result = (r.returncode != 0, failed or ([] if r.returncode == 0 else ["ctest failed"]), seconds)
    return result + (r.stdout + r.stderr,) if want_output else result


def recorded_seconds(regex):
    """What the tests matching regex took when ctest last ran them in BUILD
    (its Testing/Temporary/CTestCostData.txt: a test, its runs, its average
    seconds a line), or None when it has no record of them. In place, the
    suite has just run: a mutant that hangs its tests costs SLOWDOWN times
    that, not the tests' own 10-minute timeouts."""
    path = os.path.join(BUILD, "Testing", "Temporary", "CTestCostData.txt")
    if not os.path.exists(path):
        return None
    total, found = 0.0, False
    for line in open(path):
        f = line.split()
        if f and f[0] == "---":
            break
        if len(f) == 3 and re.search(regex, f[0]):
            total, found = total + float(f[2]), True
    return total if found else None


def baseline(w, runs_only=False, tolerate=False):
    """Run w's default runs (and its mutants' own runs) and tests unmutated:
    they must pass (with `tolerate`, an older tree's, those that fail are
    left out). The default runs' times, the runs left out."""
    bad, seconds_of = set(), {}
    own = {tuple(a) for m in w.mutants for a in m.runs if a != ["none"]}
    for args in sorted(own | {tuple(a) for a in w.runs}):
        caught, why, seconds_of[args] = default_run(list(args), 600)
        if caught and not tolerate:
            fail(f"baseline: `wafer {' '.join(args)}` is not ok unmutated ({why})")
        if caught:
            print(f"baseline: `wafer {' '.join(args)}` is not ok unmutated ({why}): left out",
                  flush=True)
            bad.add(args)
    times = [0 if tuple(a) in bad else seconds_of[tuple(a)] for a in w.runs]
    if runs_only:
        return times, 0, bad
    caught, failed, seconds, out = test_set(w.tests, 3600, want_output=True)
    if caught:
        fail(f"baseline: {w.name}'s tests fail unmutated: {', '.join(failed)}\n{out[-4000:]}")
    return times, seconds, bad


def run_mutant(m, w, times, test_seconds, bad=(), runs_only=False):
    path = os.path.join(SRC, m.file)
    original, mutated = apply(m, SRC)
    result = {"id": m.id, "workload": w.name, "what": m.what, "file": m.file,
              "date": datetime.date.today().isoformat()}
    t0 = time.time()
    try:
        with open(path, "wb") as f:
            f.write(mutated)
        ok, log = build(runs_only)
        if not ok:
            result.update(built=False, log=log)
            return result
        result["built"] = True
        result["runs"] = []
        runs = [(args, None) for args in m.runs if args != ["none"]] or list(zip(w.runs, times))
        if m.runs == [["none"]]:
            runs, result["no_run"] = [], True
        runs = [(a, b) for a, b in runs if tuple(a) not in bad]
        if not runs and not result.get("no_run"):
            result["no_run"] = True
            result["baseline_not_ok"] = True
        for args, base in runs:
            caught, why, _ = default_run(args, max(MIN_LIMIT, SLOWDOWN * base) if base else 300)
            result["runs"].append({"args": " ".join(args), "caught": caught, "why": why})
        if runs_only:
            result["tests"] = None
        else:
            caught, failed, _ = test_set(w.tests, max(MIN_LIMIT, SLOWDOWN * test_seconds))
            result["tests"] = {"caught": caught, "failed": failed}
    finally:
        # back as it was, unless someone changed it meanwhile (then say so)
        if open(path, "rb").read() == mutated:
            with open(path, "wb") as f:
                f.write(original)
        else:
            print(f"mutate.py: {m.file} changed during {m.id}: not restored", file=sys.stderr)
    result["seconds"] = round(time.time() - t0, 1)
    return result


def summary_line(r):
    if not r.get("built"):
        return f"{r['id']}: does not build (fix the mutant)"
    runs = "caught" if any(x["caught"] for x in r["runs"]) else "SURVIVED"
    if r.get("no_run"):
        runs = "not run (no workload runs this code)"
    tests = "not asked" if r["tests"] is None else "caught" if r["tests"]["caught"] else "SURVIVED"
    return f"{r['id']}: run {runs}, tests {tests} ({r['seconds']} s)"


def run(args):
    global WORK, SRC, BUILD, RESULTS
    sample, rev, runs_only, in_place = None, None, False, None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--sample":
            sample = int(args.pop(0))
        elif opt == "--tree":
            rev = args.pop(0)
        elif opt == "--runs-only":
            runs_only = True
        elif opt == "--in-place":
            in_place = os.path.abspath(args.pop(0))
        else:
            fail(f"unknown option {opt}")
    if in_place:
        SRC, BUILD, RESULTS = ROOT, in_place, os.path.join(in_place, "mutation-results")
    if rev:
        WORK = f"{WORK}-{rev}"
        SRC, BUILD, RESULTS = (os.path.join(WORK, d) for d in ("src", "build", "results"))
    all_w = workloads()
    chosen = [(w, m) for w in all_w for m in w.mutants
              if not args or w.name in args or m.id in args]
    if not chosen:
        fail("no mutant matches " + " ".join(args))
    if sample:
        day = datetime.date.today().timetuple().tm_yday
        start = (day * sample) % len(chosen)
        chosen = [chosen[(start + i) % len(chosen)] for i in range(min(sample, len(chosen)))]
    os.makedirs(RESULTS, exist_ok=True)
    if not in_place:
        sync_tree(rev)
    if check(all_w, SRC):
        fail("the mutant list is stale (above)")
    if not in_place:
        configure()
    ok, log = build()
    if not ok:
        fail("the unmutated tree does not build:\n" + log)
    bases = {}
    try:
        results = run_chosen(chosen, bases, in_place, runs_only, rev)
    finally:
        build()  # leave the tree built unmutated
    return verdict(results, all_w)


def run_chosen(chosen, bases, in_place, runs_only, rev):
    results = []
    for w, m in chosen:
        if w.name not in bases:
            # the last mutant's file is restored but not yet rebuilt: the
            # baseline must run the unmutated code
            ok, log = build(runs_only)
            if not ok:
                fail("the unmutated tree does not build:\n" + log)
        if in_place and w.name not in bases:  # tested already: the runs' baseline, the tests' record
            print(f"{w.name}: baseline (default runs, unmutated)", flush=True)
            times, _, bad = baseline(w, runs_only=True)
            bases[w.name] = (times, recorded_seconds(w.tests) or 1200 / SLOWDOWN, bad)
        if w.name not in bases:
            print(f"{w.name}: baseline (default runs and tests, unmutated)", flush=True)
            bases[w.name] = baseline(w, runs_only, tolerate=rev is not None)
        r = run_mutant(m, w, *bases[w.name], runs_only)
        earlier = load_results(RESULTS, m)
        if runs_only and earlier and earlier.get("tests") is not None:
            # the tests' verdict of an earlier full run stands (stronger
            # in-run checks only make more tests fail)
            r["tests"], r["tests_date"] = earlier["tests"], earlier["date"]
        with open(os.path.join(RESULTS, m.id + ".json"), "w") as f:
            json.dump(r, f, indent=1)
        print(summary_line(r), flush=True)
        results.append(r)
    return results


def verdict(keep_going, all_w):
    unbuilt = [r["id"] for r in keep_going if not r.get("built")]
    if unbuilt:
        fail("mutants that do not build: " + ", ".join(unbuilt))
    survived = [r["id"] for r in keep_going
                if r["tests"] is not None and not r["tests"]["caught"]
                and not mutant_by_id(all_w, r["id"]).survives]
    # a mutant said to be equivalent that something catches: the claim or
    # the check is wrong
    contradicted = [r["id"] for r in keep_going
                    if shown_equivalent(mutant_by_id(all_w, r["id"]))
                    and (run_caught(r) or (r["tests"] or {}).get("caught"))]
    if contradicted:
        print("said to be equivalent, but caught: " + ", ".join(contradicted))
    if survived:
        print("survived the tests, with no reason given: " + ", ".join(survived))
    return 1 if survived or contradicted else 0


def mutant_by_id(all_w, ident):
    for w in all_w:
        for m in w.mutants:
            if m.id == ident:
                return m
    return None


def load_results(directory, m):
    p = os.path.join(directory, m.id + ".json")
    return json.load(open(p)) if os.path.exists(p) else None


def shown_equivalent(m):
    return m.survives.startswith("equivalent:")


def run_caught(r):
    return any(x["caught"] for x in r["runs"])


def report(args):
    out, before = os.path.join(ROOT, "docs", "verification.md"), None
    while args:
        opt = args.pop(0)
        if opt == "--output":
            out = args.pop(0)
        elif opt == "--before":
            before = args.pop(0)
        else:
            fail(f"unknown option {opt}")
    before_dir = os.path.join(f"{WORK}-{before}", "results") if before else None
    all_w = workloads()
    lines = [
        "# Verification: do the checks catch planted bugs?",
        "",
        "Generated by `tests/mutation/mutate.py report` from the results of",
        "`tests/mutation/mutate.py run` (the mutants: `tests/mutation/WORKLOAD.txt`). Do not edit.",
        "",
        "A *mutant* is a small edit of the source, the kind of bug a tired author",
        "makes: a coefficient, an index off by one, a sign, a dropped term, a skipped",
        "halo side, a wrong normalisation, a precision slip, a wrong reduction. For",
        "each one the script builds the tree and asks two questions:",
        "",
        "* **run**: does the workload's own run say so (exit status not 0, or its",
        "  status not `ok`)? The runs are the embedded deck on 2 ranks and, where",
        "  `wafer demo` runs a second variant, that one too; for code those decks",
        "  never execute (an r2c transform, a 2 x 2 rank grid, weight streaming),",
        "  the run named in the row, which does: the question is whether the in-run",
        "  checks catch a bug in code the run executes.",
        "* **tests**: does the workload's test set fail (the ctest regex in its file)?",
        "",
        "A survivor of the tests is listed with why it is equivalent or what would",
        "catch it. A mutant shown equivalent (it changes no result any correct check",
        "could see) is left out of both scores and counted apart. A survivor of the",
        "run is what the workload's guide says its run cannot see. Mutants the run's",
        "code never executes (a fabric primitive only the tests call) are left out of",
        "the run's score and named.",
        "",
        "The first twelve mutants of each workload were written with its checks; the",
        "last four (`r2-*`) by a reviewer afterwards, hunting for weak checks, not to",
        "suit them. Both sets count in the scores.",
        "",
        "To reproduce: `tests/mutation/mutate.py run` (every mutant, in a copy of the",
        "tree under `build-mutation/`, about an hour on 2 cores), or `run WORKLOAD`,",
        "`run WORKLOAD.ID`; `run --runs-only --tree REV` for a revision's runs (the",
        "column \"before\"); then `tests/mutation/mutate.py report --before REV`.",
        "CI runs two mutants a day in place (`make test-mutation`).",
        "",
        f"| workload | mutants | caught by its own run | caught by its tests |"
        + (f" its run before ({before}) |" if before else "") + " results from |",
        "| --- | --- | --- | --- |" + (" --- |" if before else "") + " --- |",
    ]
    details = []
    for w in all_w:
        results = [(m, load_results(RESULTS, m)) for m in w.mutants]
        done = [(m, r) for m, r in results if r and r.get("built")]
        # a mutant shown equivalent (`survives = equivalent: WHY`) no correct
        # check can catch: out of both scores, counted apart
        equivalent = [(m, r) for m, r in done if shown_equivalent(m)]
        done = [(m, r) for m, r in done if not shown_equivalent(m)]
        ran = [(m, r) for m, r in done if not r.get("no_run")]
        caught_runs = sum(run_caught(r) for _, r in ran)
        asked = [(m, r) for m, r in done if r["tests"] is not None]
        test_caught = sum(r["tests"]["caught"] for _, r in asked)
        dates = sorted({r["date"] for _, r in done + equivalent})
        n = len(done) + len(equivalent)

        def pct(k, n):
            return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"
        span = (dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}") if dates else "not run"
        missing = len(w.mutants) - n
        no_run = len(done) - len(ran)
        same = f" (+{len(equivalent)} equivalent)" if equivalent else ""
        cells = [f"{len(w.mutants)}{f' ({missing} not run)' if missing else ''}",
                 pct(caught_runs, len(ran)) + (f" (+{no_run} no run executes)" if no_run else "")
                 + same,
                 pct(test_caught, len(asked)) + same]
        if before:
            old = [load_results(before_dir, m) for m, r in ran]
            old = [r for r in old if r and r.get("built")]
            cells.append(pct(sum(run_caught(r) for r in old), len(old)))
        lines.append(f"| {w.name} | " + " | ".join(cells) + f" | {span} |")
        details += ["", f"## {w.name}", "",
                    f"Default runs: " + "; ".join(f"`wafer {' '.join(a)}`" for a in w.runs)
                    + f" on {RANKS} ranks. Tests: `ctest -R '{w.tests}'`.", "",
                    "| mutant | what it does | run | tests |", "| --- | --- | --- | --- |"]
        for m, r in results:
            short = m.id.split(".", 1)[1]
            if not r or not r.get("built"):
                details.append(f"| {short} | {m.what} | not run | not run |")
                continue
            run_cell = "; ".join(x["why"] for x in r["runs"] if x["caught"]) or "**survived**"
            if r.get("baseline_not_ok"):
                run_cell = "its run fails unmutated"
            elif r.get("no_run"):
                run_cell = "no run executes this code"
            elif m.runs:
                run_cell += " (" + "; ".join(f"`wafer {' '.join(a)}`" for a in m.runs) + ")"
            test_cell = ("not asked" if r["tests"] is None
                         else ", ".join(r["tests"]["failed"][:3]) if r["tests"]["caught"]
                         else "**survived**")
            details.append(f"| {short} | {m.what} | {run_cell} | {test_cell} |")
        notes = [m for m, r in results if m.survives]
        if notes:
            details += ["", "Survivors:", ""]
            details += [f"* `{m.id.split('.', 1)[1]}`: {m.survives}" for m in notes]
    lines += details
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


def main(argv):
    # SIGTERM (a cancelled CI job) as an exception: the mutated file is
    # restored by run_mutant's finally
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd, args = argv[0], argv[1:]
    if cmd == "check":
        return check(workloads())
    if cmd == "list":
        for w in workloads():
            if not args or w.name in args:
                for m in w.mutants:
                    print(f"{m.id}: {m.what} ({m.file})")
        return 0
    if cmd == "run":
        return run(args)
    if cmd == "report":
        return report(args)
    fail(f"unknown command {cmd} (see --help)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
