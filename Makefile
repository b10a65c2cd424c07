# Thin wrapper around CMake. The two quick-start commands:
#   make run    install what is missing, build (Release), run `wafer demo` on 2 ranks
#   make test   install what is missing, build, run the whole test suite
BUILD       ?= build
RANKS       ?= 2
CMAKE_FLAGS ?=
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)

# Open MPI refuses to run as root without these; more ranks than cores need
# oversubscription. Set for the commands below only, never in your shell.
MPIENV = OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

.PHONY: all setup build build-sim run test test-sim test-conformance test-scale test-mutation test-mpich test-asan test-valgrind fuzz clean

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).cmake.log 2>&1 || \
	  { cat $(BUILD).cmake.log; exit 1; }
	@cmake --build $(BUILD) -j $(JOBS)

# A build for SimGrid's SMPI (docs/scaling.md): the same sources, simulated
# ranks. Run it under smpirun on a platform of inputs/platforms/, e.g.
#   smpirun -np 1024 -platform inputs/platforms/ib_hdr_fat_tree.xml --cfg=smpi/host-speed:1Gf \
#     --cfg=smpi/coll-selector:ompi --cfg=smpi/reduce:binomial build-sim/wafer halo
build-sim: setup
	@CC=smpicc $(MAKE) --no-print-directory build BUILD=build-sim \
	  CMAKE_FLAGS="$(CMAKE_FLAGS) -DWAFER_SIMULATE=ON -DBUILD_TESTING=OFF"

# Every workload's small deck on 1 and SIM_RANKS ranks simulated by SMPI on
# the InfiniBand HDR fat tree, against 1 rank (2 minutes at 64), and the
# calibration: simulated against measured times at 1 and 2 ranks on this
# machine's platform, within 25% (CI runs both).
SIM_RANKS ?= 64
test-sim: build build-sim
	tests/e2e/scale.sh simulated $(SIM_RANKS) $(CURDIR)/build-sim/wafer
	tests/e2e/scale.sh calibration 2 $(CURDIR)/build-sim/wafer $(CURDIR)/$(BUILD)/wafer

run: build
	$(MPIENV) mpiexec -n $(RANKS) $(BUILD)/wafer demo

test: build
	cd $(BUILD) && ctest --output-on-failure -LE 'scale|conformance-full'

# The whole conformance suite (tests/conformance, docs/reliability.md): the
# quick half `make test` runs, and the full disk trials at 1 rank too.
test-conformance: build
	cd $(BUILD) && ctest --output-on-failure -L conformance

# Every workload on 1, 16 and 64 ranks (oversubscribed) against 1 rank, and
# memory per rank flat (ctest label `scale`; minutes on 2 cores).
test-scale: build build-sim
	cd $(BUILD) && ctest --output-on-failure -L 'scale|scale-sim'

# Mutation testing (tests/mutation, docs/verification.md): do the checks
# catch planted bugs? The whole list is `tests/mutation/mutate.py run` (an
# hour or so, in a copy of the tree) then `... report`. CI runs MUTANTS of
# them, a sample that rotates with the day, mutating this tree in place and
# rebuilding $(BUILD) incrementally; a mutant the workload's tests let pass
# with no reason given in its file fails.
MUTANTS ?= 2
test-mutation: build
	tests/mutation/mutate.py run --in-place $(BUILD) --sample $(MUTANTS)

# The whole suite again against MPICH and its own parallel HDF5 (Debian's
# names: the second MPI is not the default `mpicc`). Debian builds PETSc and
# FFTW-MPI for Open MPI only, so this is also a build without those two
# references, as at many centres: their checks report unavailable. Its
# ch4:ucx busy-polls, so 4 ranks on 2 cores run 10-40x slower than Open
# MPI's (test_tlrmvm_np4: 28 s against 0.7; train_grid_np3 111 s against
# 14): the cases above 2 ranks (and eam_ranks, which runs 4 ranks inside)
# run in the Open MPI pass only, as do the 1-rank twins of the 2-rank cases
# (a singleton's start is two_mpis.sh's), the physics cases (no MPI in
# question there), and of the conformance suite all but the full disk at 2
# ranks (MPI-IO's part; the registry, the input checks, signals and
# restarts are wafer's code whichever the MPI: tests/e2e/faults.sh runs
# signals and kill -9 under both). Then the same decks under both MPIs, at
# 1 and 2 ranks, must agree (two_mpis.sh).
# Built as centres (and Cray's cc) do, with the MPI wrapper as the compiler;
# the MPI_C_COMPILER form is configured by the build test mpi_wrappers.
MPICH_FLAGS = -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
              -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich
test-mpich: build
	@CC=mpicc.mpich $(MAKE) --no-print-directory build BUILD=build-mpich CMAKE_FLAGS="$(CMAKE_FLAGS) $(MPICH_FLAGS)"
	cd build-mpich && ctest --output-on-failure -LE 'scale|physics|conformance-full' -E '_np[13-9]$$|^eam_ranks_np2$$|^conformance_(paths|values|signals|phases|restart)'
	tests/e2e/two_mpis.sh $(BUILD) build-mpich

# The whole suite's code under AddressSanitizer + UBSan (CI runs this too),
# each end-to-end case once: the unit tests with leak detection; every MPI
# program (test_*, at 1, 2 and 4 ranks: cheap) and the end-to-end cases at 2
# ranks without it (Open MPI itself does not free everything at
# MPI_Finalize). Their 1- and 4-rank twins run the same code on other
# blocks and are left to the Open MPI pass, but for the cases that exist at
# more ranks only, whose code the 2-rank ones do not reach: training's 2 x 2
# and 3-rank wafers (tiles on a 2D grid, streaming roles), TLR-MVM's
# systems side by side, CFD against its rank counts (not h5_repeat_np4, an
# MPI-IO library's regression, nor memory_np3, resident sets ASan inflates).
# Left out too: the Slurm scripts and the TCP-only
# transports (no code of wafer's runs there that the other cases do not
# run), kill -9 (no code runs) and the signal timings (timing, not memory).
# The whole CI ran in 50 minutes with the twins (2026-11-27, this pass 15),
# 29.5 without them (2026-11-29, this pass 6.6; docs/testing.md).
test-asan: setup
	@$(MAKE) --no-print-directory build BUILD=build-asan CMAKE_FLAGS="$(CMAKE_FLAGS) -DWAFER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug"
	cd build-asan && ctest --output-on-failure -L unit
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -L mpi
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -L e2e \
	  -E '_np[13-9]$$|^(slurm_|nodes_|faults_kill9_|faults_signals_)'
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure \
	  -R '^(train_grid_np4|train_streamed_grid_np3|tlrmvm_systems_np4|cfd_ranks_np4)$$'

# The unit tests under valgrind's memcheck (errors and leaks are failures),
# on the main build (optimised, as users run it; a build of its own cost CI 2
# minutes). The portable build: its multiversioned kernels pick the clone
# valgrind's CPU offers (it does not emulate AVX-512).
test-valgrind: build
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	  $(BUILD)/tests/unit_tests

# libFuzzer on the deck, potential, data file and checkpoint readers: 15 s
# each (FUZZ_SECONDS); docs/reliability.md gives the long runs' figures.
FUZZ_SECONDS ?= 15
fuzz: setup
	tests/fuzz/run.sh --seconds $(FUZZ_SECONDS)

clean:
	rm -rf build build-sim build-mpich build-asan build-valgrind build-fuzz build*.cmake.log build-fuzz.build.log
