# Shared by the bench/ scripts (sourced from the repository root).
# Open MPI as root and more ranks than cores, for these commands only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WAFER=${WAFER:-build/wafer}
py=/usr/bin/python3
# median: of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field FILE EXPR: a Python expression over the JSON summary `j` in FILE.
field() { $py -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
