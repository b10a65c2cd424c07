"""What the conformance suite needs to know about each registered workload.

The suite finds the workloads (`wafer --help`) and their file keys (`wafer W
--help`: input, output and cache files) by itself; this table adds only what
it cannot find: a small deck, how to make a valid input of each kind, and
which keys a run writes under that deck. A registered workload missing here,
or a file key that is neither listed nor excused, fails the suite: a new
workload or key gets the trials by being declared, not by being remembered.
"""

# `deck`: --set arguments of a run of about a second. `inputs`: how to make
# a valid file for each input key, either a kind the suite builds
# (conformance.py: fft_field, tlr_dense, corpus, mtx_spd) or (workload, key): the file
# a run of that workload writes under that key (a checkpoint, a data file).
# `needs`: input keys the run cannot go without. `reading`: --set arguments
# a run needs to read an input (a restart must have steps left). `writes`: each output or
# cache key a small run writes, with the --set arguments that make it write
# it (beyond the deck). `excused`: file keys no trial exercises, and why.
# `long`: --set arguments that make the deck's run last a few seconds (the
# signals class stops it at moments spread over that time). `split`, for a
# workload with a checkpoint: the arguments of every part ("both"), of a
# first part that stops early ("first") and of the whole run ("whole"), and
# of a run long enough to be killed after its first checkpoint ("kill").
# `segment_only`: outputs a restart writes only from its own step on, and why.
# `large`: --set arguments of a run whose every phase (the reference runs,
# compressions, checks that recompute) takes seconds: the phases class
# signals it at moments spread over it.
# `oversized`: --set arguments of a problem far beyond the machine's memory
# (hundreds of GB): the run must refuse it in seconds, naming memory.
WORKLOADS = {
    "halo": {
        "large": ["--set", "wafer.pe_grid=512x512", "--set", "halo.iterations=3000"],
        "oversized": ["--set", "wafer.pe_grid=2000x2000", "--set", "halo.elem_bytes=65536"],
        "deck": ["--set", "halo.iterations=5"],
        "long": ["--set", "halo.iterations=15000"],
        "writes": {"output.file": []},
    },
    "stencil": {
        "large": ["--set", "stencil.nx=128", "--set", "stencil.ny=128", "--set", "stencil.nz=128",
                  "--set", "wafer.pe_grid=128x128", "--set", "stencil.crosscheck=auto"],
        "oversized": ["--set", "stencil.nx=4000", "--set", "stencil.ny=4000", "--set",
                      "stencil.nz=4000", "--set", "wafer.pe_grid=400x400"],
        "deck": ["--set", "stencil.crosscheck=none", "--set", "stencil.nx=16", "--set",
                 "stencil.ny=16", "--set", "stencil.nz=16", "--set", "wafer.pe_grid=16x16"],
        "long": ["--set", "stencil.nx=96", "--set", "stencil.ny=96", "--set", "stencil.nz=96",
                 "--set", "wafer.pe_grid=96x96", "--set", "stencil.rtol=1e-14",
                 "--set", "stencil.crosscheck=auto"],  # and PETSc's solve
        "writes": {"output.file": [], "stencil.plot": []},
    },
    "eam": {
        "large": ["--set", "eam.cells=20x20x20", "--set", "eam.steps=200", "--set",
                  "eam.crosscheck=auto", "--set", "wafer.pe_grid=32x32"],
        "oversized": ["--set", "eam.cells=400x400x400", "--set", "wafer.pe_grid=64x64"],
        "deck": ["--set", "eam.crosscheck=none", "--set", "eam.cells=8x8x4", "--set",
                 "eam.steps=10", "--set", "wafer.pe_grid=4x4"],
        "inputs": {"eam.data": ("eam", "eam.write_data"), "eam.restart": ("eam", "eam.checkpoint")},
        "reading": {"eam.restart": ["--set", "eam.steps=20"]},
        "long": ["--set", "eam.steps=1500", "--set", "eam.checkpoint_every=20", "--set",
                 "eam.dump_every=20"],
        # every part checkpoints (and so rebuilds its lists) at the same steps
        "split": {"both": ["--set", "eam.checkpoint_every=10"], "first": [],
                  "whole": ["--set", "eam.steps=20"],
                  "kill": ["--set", "eam.steps=300"]},
        "segment_only": {"output.file": "an H5MD trajectory: a restart writes its frames from its "
                                        "own step on (frames are large; chain the two files)"},
        "writes": {"output.file": [], "eam.checkpoint": [], "eam.write_data": [],
                   "eam.plot": []},
    },
    "fft": {
        # FFTW's planner cannot be interrupted (docs/reliability.md): measured
        # plans are left out of this deck; the transforms and FFTW-MPI's are in
        "large": ["--set", "fft.nx=128", "--set", "fft.ny=128", "--set", "fft.nz=128", "--set",
                  "fft.planner=estimate", "--set", "fft.crosscheck=auto", "--set", "fft.repeat=40"],
        "oversized": ["--set", "fft.nx=4096", "--set", "fft.ny=4096", "--set", "fft.nz=4096"],
        "deck": ["--set", "fft.crosscheck=none", "--set", "fft.planner=estimate", "--set",
                 "fft.nx=16", "--set", "fft.ny=16", "--set", "fft.nz=16", "--set",
                 "wafer.pe_grid=4x4"],
        "inputs": {"fft.input": "fft_field"},
        # with the planner's measurements and the FFTW-MPI cross-check: phases that do not poll
        "long": ["--set", "fft.nx=64", "--set", "fft.ny=64", "--set", "fft.nz=64", "--set",
                 "fft.repeat=20", "--set", "fft.planner=measure", "--set", "fft.crosscheck=auto"],
        "writes": {"output.file": [], "fft.wisdom": []},
    },
    "tlrmvm": {
        "large": ["--set", "tlrmvm.src_nx=64", "--set", "tlrmvm.src_ny=64", "--set",
                  "tlrmvm.rec_nx=64", "--set", "tlrmvm.rec_ny=64", "--set", "tlrmvm.nb=64"],
        "deck": ["--set", "tlrmvm.src_nx=20", "--set", "tlrmvm.src_ny=20", "--set",
                 "tlrmvm.rec_nx=20", "--set", "tlrmvm.rec_ny=20", "--set", "tlrmvm.nb=50"],
        "inputs": {"tlrmvm.input": "tlr_dense", "tlrmvm.compressed": ("tlrmvm", "tlrmvm.compressed")},
        "long": ["--set", "tlrmvm.repeat=10000"],
        "writes": {"output.file": [], "tlrmvm.compressed": [], "tlrmvm.plot": [],
                   "tlrmvm.mdd_plot": []},
        "excused": {"oversized": "not estimated yet: a 160,000-square survey compresses tile by "
                                 "tile for minutes before its bases fill memory (issue 50)"},
    },
    "cfd": {
        "large": ["--set", "cfd.nx=128", "--set", "cfd.ny=128", "--set", "cfd.nz=128", "--set",
                  "wafer.pe_grid=128x128", "--set", "cfd.steps=1500", "--set", "cfd.stream=true"],
        "oversized": ["--set", "cfd.nx=4000", "--set", "cfd.ny=4000", "--set", "cfd.nz=4000",
                      "--set", "wafer.pe_grid=400x400"],
        "deck": ["--set", "cfd.stream=false", "--set", "cfd.nx=16", "--set", "cfd.ny=16",
                 "--set", "cfd.nz=16", "--set", "cfd.steps=20", "--set", "wafer.pe_grid=16x16",
                 "--set", "cfd.sponge=4"],
        "inputs": {"cfd.restart": ("cfd", "cfd.checkpoint")},
        "reading": {"cfd.restart": ["--set", "cfd.steps=30"]},
        "long": ["--set", "cfd.steps=1500", "--set", "cfd.checkpoint_every=100",
                 "--set", "cfd.nx=32", "--set", "cfd.ny=32", "--set", "cfd.nz=32"],
        # energies every 7 steps: the first part's last is not one the whole run has
        "split": {"both": ["--set", "cfd.energy_every=7"], "first": [],
                  "whole": ["--set", "cfd.steps=30"],
                  "kill": ["--set", "cfd.steps=300", "--set", "cfd.checkpoint_every=10"]},
        "writes": {"output.file": [], "cfd.checkpoint": [],
                   "cfd.plot": ["--set", "cfd.problem=convection", "--set", "cfd.steps=10"],
                   "cfd.gather_plot": ["--set", "cfd.init=source"]},
    },
    "train": {
        "large": ["--set", "train.steps=40", "--set", "train.batch=32", "--set", "train.eval_every=10"],
        "oversized": ["--set", "train.channels=8192", "--set", "train.layers=40", "--set",
                      "train.heads=8", "--set", "train.steps=1"],
        "deck": ["--set", "train.steps=4", "--set", "train.batch=8", "--set", "train.sgemm=false",
                 "--set", "train.eval_every=2"],
        "inputs": {"train.corpus": "corpus", "train.restart": ("train", "train.checkpoint")},
        "reading": {"train.restart": ["--set", "train.steps=6"]},
        "long": ["--set", "train.steps=60", "--set", "train.checkpoint_every=5"],
        # validation every 2 steps: the first part's last (step 3) is not one the whole run has
        "split": {"both": [], "first": ["--set", "train.stop_at=3"], "whole": [],
                  "kill": ["--set", "train.steps=60", "--set", "train.checkpoint_every=2"]},
        "writes": {"output.file": [], "train.checkpoint": [], "train.plot": []},
    },
    "generate": {
        "large": ["--set", "generate.length=4000"],
        "deck": ["--set", "generate.length=8"],
        # needs a checkpoint: the suite trains one first
        "needs": ["generate.checkpoint"],
        "inputs": {"generate.checkpoint": ("train", "train.checkpoint")},
        "long": ["--set", "generate.length=1500"],
        "writes": {},
        "excused": {"output.file": "generate writes no HDF5 output (it prints text)",
                    "oversized": "its model is the checkpoint's, which train refused if too large"},
    },
    "mandelbrot": {
        # the serial reference (rank 0) takes as long as the image on one rank
        "large": ["--set", "mandelbrot.width=3200", "--set", "mandelbrot.height=2400"],
        "oversized": ["--set", "mandelbrot.width=100000000", "--set",
                      "mandelbrot.height=100000000"],
        "deck": ["--set", "mandelbrot.width=128", "--set", "mandelbrot.height=96", "--set",
                 "wafer.pe_grid=16x16"],
        "long": ["--set", "mandelbrot.repeat=4000", "--set", "mandelbrot.check=false"],
        "writes": {"output.file": [], "mandelbrot.plot": []},
    },
    "gemm": {
        # the product and the check's dgemm take seconds; the fills poll
        "large": ["--set", "gemm.m=2048", "--set", "gemm.n=2048", "--set", "gemm.k=2048"],
        "oversized": ["--set", "gemm.m=1000000", "--set", "gemm.n=1000000", "--set",
                      "gemm.k=1000000"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "gemm.m=64", "--set", "gemm.n=64",
                 "--set", "gemm.k=64"],
        "long": ["--set", "gemm.repeat=100000", "--set", "gemm.check=false"],
        "writes": {"output.file": []},
    },
    "cholesky": {
        # the factorisation and the check's LAPACK reference take seconds
        "large": ["--set", "cholesky.n=2400"],
        "oversized": ["--set", "cholesky.n=1000000"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "cholesky.n=64"],
        "inputs": {"cholesky.matrix": "mtx_spd"},
        "long": ["--set", "cholesky.n=512", "--set", "cholesky.repeat=200", "--set",
                 "cholesky.check=false"],
        "writes": {"output.file": []},
    },
    "spmv": {
        # the passes over a large R-MAT's entries and the check's take seconds
        "large": ["--set", "spmv.scale=18", "--set", "spmv.balance=true"],
        "oversized": ["--set", "spmv.scale=30", "--set", "spmv.edge_factor=1024"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "spmv.scale=8"],
        "inputs": {"spmv.matrix": "mtx_spd"},
        "long": ["--set", "spmv.scale=14", "--set", "spmv.repeat=4000", "--set", "spmv.check=false"],
        "writes": {"output.file": []},
    },
    "gemv": {
        "large": ["--set", "gemv.m=5000", "--set", "gemv.n=5000", "--set", "gemv.repeat=150"],
        "oversized": ["--set", "gemv.m=10000000", "--set", "gemv.n=10000000"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "gemv.m=64", "--set", "gemv.n=64"],
        "long": ["--set", "gemv.repeat=800000", "--set", "gemv.check=false"],
        "writes": {"output.file": []},
    },
    "histogram": {
        # the serial count and the model's walk of every path take seconds
        "large": ["--set", "histogram.values_per_pe=65536", "--set", "histogram.repeat=3"],
        "oversized": ["--set", "histogram.values_per_pe=100000000"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "histogram.values_per_pe=32"],
        "long": ["--set", "histogram.repeat=50000", "--set", "histogram.check=false"],
        "writes": {"output.file": []},
    },
    "widemul": {
        "large": ["--set", "widemul.bits=262144", "--set", "widemul.repeat=2"],
        "oversized": ["--set", "widemul.bits=100000000", "--set", "wafer.pe_grid=64x100000"],
        "deck": ["--set", "wafer.pe_grid=8x8", "--set", "widemul.bits=2048"],
        "long": ["--set", "widemul.repeat=200000", "--set", "widemul.check=false"],
        "writes": {"output.file": []},
    },
    "life": {
        "large": ["--set", "life.cells_per_pe=16x16", "--set", "life.generations=2500"],
        "oversized": ["--set", "life.cells_per_pe=65536x65536"],
        "deck": ["--set", "life.cells_per_pe=4x4", "--set", "wafer.pe_grid=16x16", "--set",
                 "life.generations=20"],
        "long": ["--set", "life.cells_per_pe=16x16", "--set", "life.generations=300000", "--set",
                 "life.check=false"],
        "writes": {"output.file": [], "life.plot": []},
    },
}

# Keys every workload shares ([wafer], [output]).
COMMON_EXCUSED = {
    "wafer.defects": "a defect map is text read by the bounded reader (FIFO/device trials)",
}
