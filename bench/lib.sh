# Shared by the bench/ scripts (sourced from the repository root).
# Open MPI as root and more ranks than cores, for these commands only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WAFER=${WAFER:-build/wafer}
py=/usr/bin/python3
# median: of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field FILE EXPR: a Python expression over the JSON summary `j` in FILE.
field() { $py -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
# machine: the CPU every results page names (model, family and model
# numbers, the widest vector ISA, cores): the kernels differ by ISA, and the
# figures move with the CPU.
machine() {
  local name fam mod isa
  name=$(lscpu | sed -n 's/^Model name: *//p')
  fam=$(lscpu | sed -n 's/^CPU family: *//p')
  mod=$(lscpu | sed -n 's/^Model: *//p')
  isa=SSE2
  grep -qw avx2 /proc/cpuinfo && isa=AVX2
  grep -qw avx512f /proc/cpuinfo && isa=AVX-512
  echo "$name (family $fam, model $mod), $isa, $(nproc) cores"
}
# The results pages name it (their Python reads it from the environment).
MACHINE=$(machine)
export MACHINE
