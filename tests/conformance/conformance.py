#!/usr/bin/python3
"""One fault and hostile-input conformance suite over every registered workload.

usage: conformance.py CLASS RANKS WAFER [WORKLOAD ...]

CLASS is one of:
  paths   every pair of the run's files made equal (input, output and cache
          keys, the deck, --json), each input a named pipe and a device, each
          output a directory, a device and a missing directory: refused before
          any work (exit 2), nothing written, nothing changed; and a link (hard or
          symbolic) planted at every output's NAME.part: nothing written through it.
  disk    every output and cache a small run writes, on a disk with 0 bytes,
          4 KB and 2 MB free: the run ends (exit 0, or 1 with a message about
          disk space) on every rank, never hangs or crashes, and leaves no
          partial file under any name.
  values  NaN, Inf and huge values in every input kind (HDF5 fields, dense
          operators, checkpoints, data files), and a truncated gzip corpus:
          refused (exit 2, naming the input), no output; and a deck far beyond
          the machine's memory (`oversized`): refused naming memory, in
          seconds, never the OOM killer.
  signals SIGTERM to one rank at moments spread over a run with all its
          outputs: the run ends within 1 s of the signal, exit 143 (the
          signal's; or 0 when the signal came late), no partial file, every file left whole (a checkpoint a
          stopped run names is one).
  signals_quick  the same at 10% and 50% of the run alone (`make test`; the
          five moments in `make test-conformance`).
  phases  the signals class on a large deck per workload (workloads.py `large`),
          each of its phases seconds long (the reference runs, compressions,
          checks that recompute): SIGTERM to one rank at 11 moments spread over
          the run; it ends within 1 s whatever phase the signal meets, the
          message naming the phase.
  restart every workload with a checkpoint: a run stopped part way and
          restarted, and one killed (kill -9) and restarted from its last
          checkpoint, end with the files of an uninterrupted run; a restart
          whose deck changes any key the checkpoint's state depends on is
          refused (exit 2, naming the key), one per such key.

The workloads come from `wafer --help`, their file keys from `wafer W --help`;
workloads.py adds what a trial cannot discover (a small deck, how to make a
valid input). Prints one line per failed trial and a count per class; exits 1
if any trial failed, 77 (skipped) if the class needs what this machine lacks
(disk: root, to mount a small tmpfs).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import COMMON_EXCUSED, WORKLOADS  # noqa: E402

# No SIGTERM-to-SIGKILL grace: a failing run's ranks end together, and the
# grace would cost 2 s a refused run (tests/e2e/lib.sh).
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_odls_base_sigkill_timeout="0")
# seconds: a trial that takes longer hung (WAFER_TRIAL_TIMEOUT shortens it
# for a run against a build known to hang)
TIMEOUT = int(os.environ.get("WAFER_TRIAL_TIMEOUT", "120"))
# Trials at once: one per core for runs that compute (a full disk, a
# restart), two for runs refused before any work, which spend most of their
# time starting MPI.
CORES = os.cpu_count() or 1


class Suite:
    def __init__(self, cls, ranks, wafer, mpiexec):
        self.cls, self.ranks, self.wafer, self.mpiexec = cls, ranks, wafer, mpiexec
        self.passed = self.failed = 0
        self.lock = threading.Lock()

    def expect(self, ok, what):
        with self.lock:
            self._count(ok, what)

    def _count(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + what, flush=True)

    def run(self, workload, args, ranks=None, cwd=None, timeout=TIMEOUT):
        """(exit status, stderr); 124 when it did not end in time."""
        cmd = [self.mpiexec, "-n", str(ranks or self.ranks), self.wafer, workload] + args
        cmd += ["--quiet"]
        p = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = p.communicate(timeout=timeout)
            return p.returncode, err.decode(errors="replace")
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # mpiexec and its ranks
            p.communicate()
            return 124, "timed out after %d s" % timeout


# ---- what the registry says ----

def workloads(wafer):
    text = subprocess.run([wafer, "--help"], env=ENV, capture_output=True, text=True).stdout
    names, inside = [], False
    for line in text.splitlines():
        if line.startswith("workloads:"):
            inside = True
        elif inside and re.match(r"^  [a-z]", line):
            names.append(line.split()[0])
        elif inside and line.strip() == "":
            break
    return [n for n in names if n != "demo"]


def file_keys(wafer, workload):
    """{"section.key": "input" | "output" | "cache"} from `wafer W --help`."""
    text = subprocess.run([wafer, workload, "--help"], env=ENV, capture_output=True,
                          text=True).stdout
    keys, section = {}, None
    for line in text.splitlines():
        m = re.match(r"^#### \[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^\| `(\w+)` \| (input|output|cache) file \|", line)
        if m and section:
            keys["%s.%s" % (section, m.group(1))] = m.group(2)
    return keys


def section_table(wafer, workload):
    """The workload's own section from `wafer W --help`: (name, {key: (type,
    default, allowed)}, restart key or None, [keys a restart may change]).
    WAFER_KEYS_FROM names another build to read the tables from: today's
    trials against an older build, whose help may not say them."""
    wafer = os.environ.get("WAFER_KEYS_FROM", wafer)
    text = subprocess.run([wafer, workload, "--help"], env=ENV, capture_output=True,
                          text=True).stdout
    name, table, restart, free, section = None, {}, None, [], None
    for line in text.splitlines():
        m = re.match(r"^#### \[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        if section != workload:
            continue
        name = section
        m = re.match(r"^\| `(\w+)` \| ([a-z ]+) \| `([^`]*)` \| ([^|]*) \|", line)
        if m:
            table[m.group(1)] = (m.group(2), m.group(3), m.group(4).strip())
        m = re.match(r"^A run continued from a checkpoint \(`(\w+)`\) may change (.*) and any", line)
        if m:
            restart, free = m.group(1), re.findall(r"`(\w+)`", m.group(2))
    return name, table, restart, free


def sets(assignments):
    out = []
    for k, v in assignments.items():
        out += ["--set", "%s=%s" % (k, v)]
    return out


# ---- valid inputs of every kind ----

def make_input(suite, kind, path, work):
    """Write a valid input of `kind` at `path` (a kind or (workload, key))."""
    if isinstance(kind, tuple):
        workload, key = kind
        t = WORKLOADS[workload]
        extra = sets({k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
        rc, err = suite.run(workload, t["deck"] + extra + sets({key: path}), ranks=1, cwd=work)
        if rc != 0 or not os.path.exists(path):
            raise RuntimeError("cannot make %s by %s %s: %s" % (path, workload, key, err[-300:]))
        return
    import numpy as np
    if kind == "corpus":
        with open(path, "w") as f:
            f.write("the quick brown fox jumps over the lazy dog. " * 2000)
        return
    if kind == "mtx_spd":  # a 2D Laplacian on 10 x 10 points, symmetric storage
        k = 10
        ents = [(j * k + i, j * k + i, 4.0) for j in range(k) for i in range(k)]
        ents += [(j * k + i, j * k + i - 1, -1.0) for j in range(k) for i in range(1, k)]
        ents += [(j * k + i, (j - 1) * k + i, -1.0) for j in range(1, k) for i in range(k)]
        with open(path, "w") as f:
            f.write("%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n"
                    % (k * k, k * k, len(ents)))
            f.writelines("%d %d %g\n" % (r + 1, c + 1, v) for r, c, v in ents)
        return
    import h5py
    with h5py.File(path, "w") as f:
        if kind == "fft_field":
            rng = np.random.default_rng(1)
            f["field"] = rng.standard_normal((16, 16, 16)) + 1j * rng.standard_normal((16, 16, 16))
        elif kind == "tlr_dense":
            rng = np.random.default_rng(2)
            for q in range(2):
                a = rng.standard_normal((400, 400)) + 1j * rng.standard_normal((400, 400))
                f["A_%d" % q] = (a / 400).astype(np.complex64)
        else:
            raise ValueError(kind)


_made = {}


def made(suite, kind, work):
    """A valid input of `kind`, made once per suite in `work`."""
    name = kind if isinstance(kind, str) else "%s-%s" % kind
    if name not in _made:
        ext = (".txt" if kind == "corpus" else ".mtx" if name.startswith("mtx") else
               ".data" if name.endswith("write_data") else ".h5")
        path = os.path.join(work, "valid-" + name + ext)
        make_input(suite, kind, path, work)
        _made[name] = path
    return _made[name]


# ---- trials ----

def snapshot(d):
    """Every file under d with its size and modification time."""
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            st = os.lstat(p)
            out[os.path.relpath(p, d)] = (st.st_size, st.st_mtime_ns)
    return out


def refused(suite, workload, args, cwd, what, want=None):
    """The run exits 2 before any work: nothing new in cwd, nothing changed.
    A trial of the registry, which rank 0 runs alone: one rank, no launcher
    (MPI's singleton start), in a folder of its own so trials run side by side."""
    with open(os.path.join(cwd, "deck.ini"), "w") as f:
        f.write("# a deck\n[wafer]\n")
    os.mkfifo(os.path.join(cwd, "fifo"))
    before = snapshot(cwd)
    cmd = [suite.wafer, workload] + args + ["--quiet"]
    try:
        p = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=30)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = 124, "timed out"
    after = snapshot(cwd)
    msg = err.strip().splitlines()[-1] if err.strip() else ""
    suite.expect(rc == 2, "%s %s: exit %d (wanted 2): %s" % (workload, what, rc, msg))
    if want:
        suite.expect(want in err, "%s %s: the message lacks '%s': %s" % (workload, what, want, msg))
    suite.expect(after == before, "%s %s: files changed: %s" % (
        workload, what, sorted(set(after.items()) ^ set(before.items()))))


def trial_paths(suite, workload, keys, work):
    t = WORKLOADS[workload]
    needs = {k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])}
    claims = [("key", k, kind) for k, kind in sorted(keys.items())]
    claims += [("deck", "the deck", "input"), ("json", "--json", "output")]
    trials = []  # (args, what, wanted message); paths relative to the trial's folder

    def args_for(claim, path):
        how, name, _ = claim
        if how == "key":
            return [("set", name, path)]
        if how == "json":
            return [("json", path)]
        return [("deck", path)]

    # Every pair where one of them is written.
    for i, a in enumerate(claims):
        for b in claims[i + 1:]:
            if a[2] == "input" and b[2] == "input":
                continue
            path = "deck.ini" if "deck" in (a[0], b[0]) else "same.h5"
            trials.append((args_for(a, path) + args_for(b, path), "%s = %s" % (a[1], b[1]),
                           "the same file as"))
    # An output's sidecar or temporary file named as an input.
    for other, okind in keys.items():
        if okind == "input" and "output.file" in keys:
            for derived in ("x.xmf", "x.h5.part.a1B2c3"):
                trials.append(([("set", "output.file", "x.h5"), ("set", other, derived)],
                               "%s = output.file's %s" % (other, derived), "the same file as"))
    # Inputs that are not files.
    for k, kind in keys.items():
        if kind == "input":
            for special in ("fifo", "/dev/zero"):
                trials.append(([("set", k, special)], "%s = %s" % (k, special),
                               "named pipe or a device"))
    trials.append(([("deck", "fifo")], "deck = a named pipe", "named pipe or a device"))
    # Outputs that cannot be files.
    for k, kind in keys.items():
        if kind != "input":
            for bad, want in ((".", "directory"), ("/dev/null", "device or pipe"),
                              ("missing/x.h5", "does not exist")):
                trials.append(([("set", k, bad)], "%s = %s" % (k, bad), want))
    trials.append(([("json", "missing/s.json"), ("set", "output.file", "o.h5")],
                   "--json in a missing directory", "does not exist"))

    def one(n, trial):
        spec, what, want = trial
        cwd = os.path.join(work, "t%d" % n)
        os.makedirs(cwd)
        given = dict(needs)
        deck, extra = [], []
        for item in spec:
            if item[0] == "set":
                given[item[1]] = item[2]
            elif item[0] == "json":
                extra += ["--json", item[1]]
            else:
                deck = [item[1]]
        refused(suite, workload, deck + t["deck"] + sets(given) + extra, cwd, what, want)

    with ThreadPoolExecutor(max_workers=2 * CORES) as pool:
        list(pool.map(lambda nt: one(*nt), enumerate(trials)))
    planted_links(suite, workload, work)


def planted_links(suite, workload, work):
    """A link planted at each output's temporary name (NAME.part, symbolic and
    hard in turn) towards a file of the user's: the run writes every output
    whole, and never through the link."""
    import hashlib
    t = WORKLOADS[workload]
    writes = [k for k in t["writes"] if not k.endswith("plot")]
    if not writes:
        return
    d = os.path.join(work, "planted")
    os.makedirs(d)
    outputs = {k: v for k, v in outputs_in(t, d).items() if k in writes}
    victims = {}
    for n, (key, path) in enumerate(sorted(outputs.items())):
        victim = os.path.join(d, "mine%d.txt" % n)
        with open(victim, "w") as f:
            f.write("a user's file, not %s's output\n" % key)
        (os.symlink if n % 2 == 0 else os.link)(victim, path + ".part")
        victims[victim] = hashlib.sha256(open(victim, "rb").read()).hexdigest()
    base = t["deck"] + sets({k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
    rc, err = suite.run(workload, base + sets(outputs) + [x for k in writes for x in t["writes"][k]],
                        cwd=d)
    what = "%s with links at its outputs' NAME.part" % workload
    suite.expect(rc == 0, "%s: exit %d: %s" % (what, rc, err.strip()[-300:]))
    for victim, digest in victims.items():
        now = hashlib.sha256(open(victim, "rb").read()).hexdigest()
        suite.expect(now == digest, "%s: the run wrote through a link into %s" % (what, victim))
    for key, path in outputs.items():
        suite.expect(os.path.isfile(path) and not os.path.islink(path),
                     "%s: %s is not a file of its own" % (what, key))


class SmallDisk:
    """A tmpfs with `free` bytes left (about: tmpfs counts pages)."""

    def __init__(self, where, free):
        self.where, self.free = where, free

    def __enter__(self):
        os.makedirs(self.where, exist_ok=True)
        filler = 256 * 1024
        size = (filler + self.free) // 1024
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % size, "tmpfs", self.where],
                       check=True, capture_output=True)
        with open(os.path.join(self.where, ".filler"), "wb", buffering=0) as f:
            try:
                f.write(b"\0" * filler)
                while self.free == 0 and f.write(b"\0" * 512):  # to the last byte
                    pass
            except OSError:
                pass
        return self

    def __exit__(self, *exc):
        # A run that crashed may leave a process holding a file here: then
        # detach the mount at once (lazy), so that none outlives the suite.
        if subprocess.run(["umount", self.where], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", self.where], capture_output=True)


def is_whole_h5(path):
    if not path.endswith(".h5"):
        return os.path.getsize(path) > 0
    return subprocess.run(["h5dump", "-H", path], capture_output=True).returncode == 0


def trial_disk(suite, workload, keys, work):
    t = WORKLOADS[workload]
    base = t["deck"] + sets({k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
    plots_ok = subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                              capture_output=True).returncode == 0
    trials = []
    for key, extra in t["writes"].items():
        if key.endswith("plot") and not plots_ok:
            continue
        name = {"fft.wisdom": "w.txt", "eam.write_data": "d.data"}.get(key, "")
        name = name or ("p.png" if key.endswith("plot") else "o.h5")
        for free in (0, 4096, 2 << 20):
            trials.append((key, extra, name, free))

    def one(n, trial):
        key, extra, name, free = trial
        disk = os.path.join(work, "disk%d" % n)
        os.makedirs(disk + "-cwd")
        with SmallDisk(disk, free):
            path = os.path.join(disk, name)
            rc, err = suite.run(workload, base + extra + sets({key: path}), cwd=disk + "-cwd")
            what = "%s %s on a disk with %d bytes free (%d ranks)" % (
                workload, key, free, suite.ranks)
            last = err.strip().splitlines()[-1] if err.strip() else ""
            suite.expect(rc in (0, 1), "%s: exit %d (124 = hung): %s" % (what, rc, last))
            if rc == 1:
                suite.expect(re.search(r"disk|[Nn]o space|cannot write", err) is not None,
                             "%s: the message does not say the disk is full: %s" % (what, last))
            left = [f for f in os.listdir(disk) if f != ".filler"]
            partial = [f for f in left if ".part" in f]
            suite.expect(not partial, "%s: partial files left: %s" % (what, partial))
            if os.path.exists(path):
                suite.expect(is_whole_h5(path), "%s: %s is not a whole file" % (what, name))
            # A cache (FFTW wisdom) only saves time: one that cannot be
            # written is a warning, said on stderr.
            cache = keys.get(key) == "cache" and "not saved" in err
            suite.expect(rc != 0 or os.path.exists(path) or cache,
                         "%s: exit 0 but %s is missing" % (what, name))

    # Side by side, each on a disk of its own.
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        list(pool.map(lambda nt: one(*nt), enumerate(trials)))


def tamper_h5(src, dst, value):
    """A copy of an HDF5 file with the first element of every floating-point
    dataset (or complex compound's real part) set to `value`."""
    import h5py
    import numpy as np
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset) or obj.size == 0:
                return
            dt = obj.dtype
            if dt.kind in "fc" or (dt.names and all(dt[n].kind == "f" for n in dt.names)):
                data = obj[...]
                flat = data.reshape(-1)
                if dt.names:
                    flat[dt.names[0]][0] = value
                elif dt.kind == "f" and dt.itemsize == 4 and np.isfinite(value):
                    flat[0] = np.float32(min(value, 3e38))
                elif dt.kind == "c" and dt.itemsize == 8 and np.isfinite(value):
                    flat[0] = np.complex64(min(value, 3e38))
                else:
                    flat[0] = value
                obj[...] = data
        f.visititems(visit)


def trial_values(suite, workload, keys, work):
    t = WORKLOADS[workload]
    for key, kind in t.get("inputs", {}).items():
        if key not in keys:
            suite.expect(False, "%s: workloads.py names %s, which is not a file key" % (workload, key))
            continue
        valid = made(suite, kind, work)
        base = t["deck"] + t.get("reading", {}).get(key, []) + sets(
            {k: made(suite, t["inputs"][k], work) for k in t.get("needs", []) if k != key})
        bad = []
        if valid.endswith(".h5"):
            for label, value in (("NaN", float("nan")), ("Inf", float("inf")),
                                 ("huge", 1e308)):
                p = os.path.join(work, "bad-%s-%s.h5" % (key, label))
                tamper_h5(valid, p, value)
                bad.append((label, p))
        elif valid.endswith(".data"):
            text = open(valid).read()
            lines = text.splitlines()
            at = next(i for i, l in enumerate(lines) if l.strip() == "Atoms" or
                      l.strip().startswith("Atoms "))
            for label, word in (("NaN", "nan"), ("Inf", "inf"), ("huge", "1e308")):
                p = os.path.join(work, "bad-%s-%s.data" % (key, label))
                ls = list(lines)
                f = ls[at + 2].split()
                f[-1] = word
                ls[at + 2] = " ".join(f)
                open(p, "w").write("\n".join(ls) + "\n")
                bad.append((label, p))
        elif valid.endswith(".mtx"):  # the first entry's value
            lines = open(valid).read().splitlines()
            at = next(i for i, l in enumerate(lines) if not l.startswith("%")) + 1
            for label, word in (("NaN", "nan"), ("Inf", "inf"), ("huge", "1e308")):
                p = os.path.join(work, "bad-%s-%s.mtx" % (key, label))
                ls = list(lines)
                ls[at] = " ".join(ls[at].split()[:2] + [word])
                open(p, "w").write("\n".join(ls) + "\n")
                bad.append((label, p))
        elif kind == "corpus":
            import gzip
            p = os.path.join(work, "bad-corpus.gz")
            blob = gzip.compress(open(valid, "rb").read())
            open(p, "wb").write(blob[: len(blob) // 2])
            bad.append(("truncated gzip", p))
        for label, p in bad:
            out = os.path.join(work, "v.h5")
            rc, err = suite.run(workload, base + sets({key: p, "output.file": out})
                                if "output.file" in keys and workload != "generate"
                                else base + sets({key: p}), ranks=suite.ranks, cwd=work)
            last = next((l for l in err.splitlines() if "error" in l), "")
            what = "%s %s with %s values" % (workload, key, label)
            # NaN and Inf are refused as input (exit 2). Huge but finite values
            # are refused where the reader can bound them (exit 2), else the
            # run fails when they overflow (exit 1): never an "ok" run.
            wanted = (1, 2) if label == "huge" else (2,)
            suite.expect(rc in wanted, "%s: exit %d (wanted %s): %s" % (what, rc, wanted, last))
            suite.expect(os.path.basename(p) in err or rc == 1,
                         "%s: the message does not name the file: %s" % (what, last))
            suite.expect(not os.path.exists(out), "%s: output written" % what)
            if os.path.exists(out):
                os.remove(out)
    oversized(suite, workload, keys, work)


# The most memory a refused run may take on its way to the refusal (MB a rank).
OVERSIZED_RSS_MB = 4096


def oversized(suite, workload, keys, work):
    """A deck far beyond the machine's memory (workloads.py `oversized`):
    refused in seconds, naming memory (exit 2 from an estimate made before
    allocating, or 1 from an allocation that failed), no output written, never
    the OOM killer (exit 137) nor a run that goes on."""
    t = WORKLOADS[workload]
    if "oversized" not in t:
        return
    out = os.path.join(work, "big.h5")
    args = t["deck"] + t["oversized"] + sets(
        {k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
    if "output.file" in keys and workload != "generate":
        args += sets({"output.file": out})
    rc, err = suite.run(workload, args, cwd=work, timeout=60)
    last = next((l for l in err.splitlines() if "error" in l), err.strip()[-200:])
    what = "%s far beyond the machine's memory (%s)" % (workload, " ".join(t["oversized"][1::2]))
    suite.expect(rc in (1, 2) and "memory" in last, "%s: exit %d (wanted 2, or 1 naming memory): "
                 "%s" % (what, rc, last))
    suite.expect(not os.path.exists(out), "%s: output written" % what)


# ---- signals ----

def rank_pids(mpiexec_pid, name):
    """The job's ranks: mpiexec's children (Open MPI) or grandchildren (MPICH's Hydra)."""
    def children(pid):
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def named(pid):
        try:
            return open("/proc/%d/comm" % pid).read().strip() == name[:15]
        except OSError:
            return False
    pids = [p for p in children(mpiexec_pid) if named(p)]
    for proxy in children(mpiexec_pid):
        pids += [p for p in children(proxy) if named(p)]
    return pids


def outputs_in(t, d):
    """--set arguments writing every output key of a small run into folder d
    (plots aside: they add a Python start to every run), and their paths."""
    paths = {}
    for key in t["writes"]:
        if key.endswith("plot"):
            continue
        name = {"fft.wisdom": "w.txt", "eam.write_data": "d.data"}.get(key, key.replace(".", "_") + ".h5")
        paths[key] = os.path.join(d, name)
    return paths


def whole_files(suite, d, what):
    """No partial file in d, every HDF5 file in it whole."""
    left = os.listdir(d)
    suite.expect(not [f for f in left if ".part" in f], "%s: partial files left: %s" % (
        what, [f for f in left if ".part" in f]))
    for f in left:
        if f.endswith(".h5"):
            suite.expect(is_whole_h5(os.path.join(d, f)), "%s: %s is not a whole file" % (what, f))


# Seconds from a signal to the end of every rank: a step of the small decks
# takes milliseconds, so this is the launcher's and the output's time, not
# a step's (a run that polls nowhere runs on to its end: seconds).
STOP_SECONDS = 1.0


def trial_signals(suite, workload, keys, work, large=False, quick=False):
    t = WORKLOADS[workload]
    if large and "large" not in t:
        suite.expect(False, "%s: no `large` deck in workloads.py" % workload)
        return
    base = t["deck"] + (t["large"] if large else t.get("long", [])) + sets(
        {k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
    writes = [k for k in t["writes"] if not k.endswith("plot")] if not large else []

    def start(d):
        os.makedirs(d)
        cmd = [suite.mpiexec, "-n", str(suite.ranks), suite.wafer, workload] + base + sets(
            outputs_in(t, d)) + [x for k in t["writes"] if k in writes for x in t["writes"][k]]
        cmd += ["--quiet"]
        return subprocess.Popen(cmd, cwd=d, env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)

    t0 = time.monotonic()
    p = start(os.path.join(work, "whole"))
    _, err = p.communicate()
    whole = time.monotonic() - t0
    suite.expect(p.returncode == 0, "%s: the uninterrupted run failed (exit %d): %s" % (
        workload, p.returncode, err.decode(errors="replace").strip()[-300:]))
    if p.returncode != 0:
        return
    stopped, slowest = 0, 0.0
    moments = ((0.1, 0.5) if quick else (0.1, 0.3, 0.5, 0.7, 0.9)) if not large else [
        k / 12 for k in range(1, 12)]
    phases = set()
    for n, frac in enumerate(moments):
        d = os.path.join(work, "sig%d" % n)
        p = start(d)
        time.sleep(frac * whole)
        pids = rank_pids(p.pid, os.path.basename(suite.wafer))
        sent = time.monotonic()
        try:
            os.kill(pids[-1], signal.SIGTERM)
        except (IndexError, ProcessLookupError):
            pass  # not started yet, or already ended: a run the signal missed
        rc, err, took = wait_for_job(p, pids, sent)
        what = "%s SIGTERM at %.0f%% of the run (%.1f s)" % (workload, 100 * frac, frac * whole)
        last = next((l for l in err.splitlines() if "wafer:" in l), err.strip()[-200:])
        m = re.search(r"interrupted by SIGTERM (.*)", err)
        phase = m.group(1).strip() if m else "(no phase named)"
        if large:
            what += " %s" % phase
            phases.add(phase)
        # Up to half way the run is far from its last poll: it must stop. A
        # large deck's moments may fall in its last second, after its last
        # poll: it may finish (the 1 s bound below still holds).
        wanted = (143,) if frac <= 0.5 and not large else (0, 143)
        suite.expect(rc is None or rc in wanted, "%s: exit %s (wanted %s): %s" % (
            what, rc, " or ".join(map(str, wanted)), last))
        slowest = max(slowest, took)
        suite.expect(took <= STOP_SECONDS, "%s: the ranks ended %.1f s after the signal" % (what, took))
        whole_files(suite, d, what)
        stopped += rc in (143, None)
        if rc == 0:
            missing = [k for k, path in outputs_in(t, d).items() if not os.path.exists(path)]
            suite.expect(not missing, "%s: exit 0 without %s" % (what, missing))
    print("%s: an uninterrupted run takes %.1f s; %d of %d signals stopped a run (the others came "
          "before the handler or after the last poll); the slowest end %.2f s after its signal%s" % (
              workload, whole, stopped, len(moments), slowest,
              "; phases: " + "; ".join(sorted(phases)) if large else ""), flush=True)


def alive(pid):
    """A process that has not ended (a zombie has: its parent has yet to reap it)."""
    try:
        return open("/proc/%d/stat" % pid).read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_for_job(p, pids, sent):
    """Wait for a signalled job: (exit status, stderr, seconds from the signal to its ranks'
    end). Open MPI 4's mpiexec can hang in its own finalize (PMIx_server_finalize, a mutex)
    after a rank it launched died of the signal, its ranks all gone: that is the launcher's
    bug, not the run's, so the ranks' end is what is timed, the launcher is given 20 s more
    and then killed, and the status is None: the ranks' own is lost with it."""
    deadline, ended = sent + 60, None
    while time.monotonic() < deadline:
        try:
            _, err = p.communicate(timeout=0.05)
            took = (ended or time.monotonic()) - sent
            return p.returncode, err.decode(errors="replace"), took
        except subprocess.TimeoutExpired:
            pass
        if ended is None and pids and not any(alive(q) for q in pids):
            ended = time.monotonic()
            deadline = min(deadline, ended + 20)
    os.killpg(p.pid, signal.SIGKILL)
    _, err = p.communicate()
    if ended is not None:
        print("note: mpiexec hung in its own finalize %.1f s after its ranks had ended; "
              "killed (Open MPI's PMIx)" % (time.monotonic() - ended), flush=True)
        return None, "mpiexec hung after its ranks ended", ended - sent
    return 124, "hung", time.monotonic() - sent


def trial_phases(suite, workload, keys, work):
    trial_signals(suite, workload, keys, work, large=True)


def trial_signals_quick(suite, workload, keys, work):
    trial_signals(suite, workload, keys, work, quick=True)


# ---- restarts ----

def other_value(kind, default, allowed):
    """A valid value of a key other than its default, or None."""
    if kind == "bool":
        return "false" if default in ("true", "yes", "on", "1") else "true"
    if kind == "choice":
        rest = [c for c in allowed.split("/") if c != default]
        return rest[0] if rest else None
    if kind in ("integer", "real"):
        lo, hi = (float(x) for x in allowed.split(" .. "))
        d = float(default)
        for v in ((d + 1, d - 1) if kind == "integer" else (d * 2 if d else 1.0, d / 2, (d + hi) / 2)):
            if lo <= v <= hi and v != d:
                return ("%d" % v) if kind == "integer" else repr(v)
    return None


def wafer_error(err):
    """The run's own error line, not the launcher's."""
    return next((l for l in err.splitlines() if l.startswith("wafer:")), err.strip()[-300:])


def trial_restart(suite, workload, keys, work):
    t = WORKLOADS[workload]
    section, table, restart, free = section_table(suite.wafer, workload)
    if restart is None:
        return
    split = t.get("split")
    if split is None:
        suite.expect(False, "%s restarts (%s.%s) but workloads.py gives no split" % (
            workload, section, restart))
        return
    rkey = "%s.%s" % (section, restart)
    ckey = t["inputs"][rkey][1]
    base = t["deck"] + split["both"] + sets(
        {k: made(suite, t["inputs"][k], work) for k in t.get("needs", [])})
    segment_only = t.get("segment_only", {})

    def run_in(d, args):
        os.makedirs(d, exist_ok=True)
        return suite.run(workload, base + args + sets(outputs_in(t, d)), cwd=d)

    def same_files(a, b, what):
        for key, pa in outputs_in(t, a).items():
            pb = outputs_in(t, b)[key]
            if key in segment_only or not os.path.exists(pa):
                continue
            if pa.endswith(".h5"):
                r = subprocess.run(["/usr/bin/python3", H5SAME, pa, pb], capture_output=True, text=True)
                suite.expect(r.returncode == 0, "%s: %s differs from the uninterrupted run's: %s" % (
                    what, key, r.stdout.strip()[:300]))
            else:
                suite.expect(os.path.exists(pb) and open(pa, "rb").read() == open(pb, "rb").read(),
                             "%s: %s differs from the uninterrupted run's" % (what, key))

    # Uninterrupted, then stopped part way and restarted.
    whole, part = os.path.join(work, "whole"), os.path.join(work, "part")
    rc, err = run_in(whole, split["whole"])
    suite.expect(rc == 0, "%s: the uninterrupted run failed: %s" % (workload, wafer_error(err)))
    first = os.path.join(work, "first")
    rc, err = run_in(first, split["first"])
    ck = outputs_in(t, first)[ckey]
    suite.expect(rc == 0 and os.path.exists(ck), "%s: the first part failed: %s" % (
        workload, wafer_error(err)))
    rc, err = run_in(part, split["whole"] + sets({rkey: ck}))
    suite.expect(rc == 0, "%s: the restart failed: %s" % (workload, wafer_error(err)))
    if rc == 0:
        same_files(whole, part, "%s restarted" % workload)

    # Killed (kill -9, every rank) once a checkpoint is there, restarted from it.
    kill, resumed = os.path.join(work, "kill"), os.path.join(work, "resumed")
    os.makedirs(kill)
    cmd = [suite.mpiexec, "-n", str(suite.ranks), suite.wafer, workload] + base + split["whole"] + \
        split.get("kill", []) + sets(outputs_in(t, kill)) + ["--quiet"]
    p = subprocess.Popen(cmd, cwd=kill, env=ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    kck = outputs_in(t, kill)[ckey]
    deadline = time.monotonic() + 60
    while not os.path.exists(kck) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    # Every rank, not only the launcher's process group (Open MPI's ranks
    # have their own): a rank left running would write on under the restart.
    for pid in rank_pids(p.pid, os.path.basename(suite.wafer)):
        os.kill(pid, signal.SIGKILL)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    suite.expect(os.path.exists(kck), "%s: no checkpoint to restart from after kill -9" % workload)
    if os.path.exists(kck):
        rc, err = run_in(resumed, split["whole"] + split.get("kill", []) + sets({rkey: kck}))
        nothing = "nothing to run" in err  # killed after its last step: nothing to compare
        suite.expect(rc == 0 or nothing, "%s: the restart after kill -9 failed: %s" % (
            workload, wafer_error(err)))
        if rc == 0:
            ref = os.path.join(work, "whole-kill")
            run_in(ref, split["whole"] + split.get("kill", []))
            same_files(ref, resumed, "%s killed and restarted" % workload)

    # Every key the state depends on, changed: refused, naming it.
    trials = []
    for key, (kind, default, allowed) in sorted(table.items()):
        if key == restart or key in free or kind.endswith("file") or kind == "string":
            continue
        alt = other_value(kind, default, allowed)
        if alt is None:
            suite.expect(False, "%s: no other value of %s.%s to try" % (workload, section, key))
            continue
        trials.append((key, alt))

    def one(n, trial):
        key, alt = trial
        cwd = os.path.join(work, "deck%d" % n)
        os.makedirs(cwd)
        refused(suite, workload, base + split["whole"] + sets({rkey: ck, "%s.%s" % (section, key): alt}),
                cwd, "restart with %s.%s = %s" % (section, key, alt),
                "%s = %s: checkpoint '%s' was written by a run with %s = " % (key, alt, ck, key))

    if os.path.exists(ck):
        with ThreadPoolExecutor(max_workers=CORES) as pool:
            list(pool.map(lambda nt: one(*nt), enumerate(trials)))


def coverage(suite, workload, keys):
    """Every file key is written by a trial or excused; every table entry exists."""
    t = WORKLOADS.get(workload)
    if t is None:
        suite.expect(False, "%s is registered but has no entry in tests/conformance/workloads.py"
                     % workload)
        return False
    excused = dict(COMMON_EXCUSED, **t.get("excused", {}))
    suite.expect("oversized" in t or "oversized" in excused,
                 "%s: no `oversized` deck in workloads.py, and not excused" % workload)
    for k, kind in keys.items():
        if kind in ("output", "cache"):
            suite.expect(k in t["writes"] or k in excused,
                         "%s: %s is written by no disk trial and not excused" % (workload, k))
        else:
            suite.expect(k in t.get("inputs", {}) or k in excused,
                         "%s: input %s has no valid-input maker and is not excused" % (workload, k))
    return True


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in CLASSES:
        print(__doc__)
        return 2
    cls, ranks, wafer = sys.argv[1], int(sys.argv[2]), os.path.abspath(sys.argv[3])
    only = sys.argv[4:]
    mpiexec = os.environ.get("WAFER_MPIEXEC", "mpiexec")
    if cls == "disk" and os.geteuid() != 0:
        print("SKIP: the disk trials mount a small tmpfs (root only)")
        return 77
    suite = Suite(cls, ranks, wafer, mpiexec)
    work = tempfile.mkdtemp(prefix="wafer-conformance.")
    counts = {}
    try:
        for w in workloads(wafer):
            if only and w not in only:
                continue
            keys = file_keys(wafer, w)
            if not coverage(suite, w, keys):
                continue
            before = suite.passed + suite.failed
            d = os.path.join(work, w)
            os.makedirs(d)
            CLASSES[cls](suite, w, keys, d)
            counts[w] = suite.passed + suite.failed - before
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("conformance %s (%d ranks): %d trials passed, %d failed (%s)" % (
        cls, ranks, suite.passed, suite.failed,
        ", ".join("%s %d" % kv for kv in counts.items())))
    return 1 if suite.failed or not suite.passed else 0


CLASSES = {"paths": trial_paths, "disk": trial_disk, "values": trial_values,
           "signals": trial_signals, "signals_quick": trial_signals_quick, "phases": trial_phases,
           "restart": trial_restart}
H5SAME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "h5same.py")

if __name__ == "__main__":
    sys.exit(main())
