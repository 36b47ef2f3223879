#!/usr/bin/env bash
# Submits `nmc batch` to Slurm: an array of N tasks, task I compressing shard I/N of ROOT into OUT
# (nmc-batch.sbatch), and a merge job that runs after all of them, whatever their end, and writes OUT/report.json,
# .md and .csv (nmc-merge.sbatch). ROOT, OUT and NMC must be paths every node sees (a shared file system).
#
#   scripts/slurm/submit.sh [--shards N] [--gpus-per-task G] [--cpus-per-task C] [--partition P] [--time T]
#                           [--nmc PATH] [--logs DIR] ROOT OUT [-- nmc batch flags...]
#
# --gpus-per-task G asks each task for G GPUs (--gres=gpu:G) and runs its shard with --device cuda, one job per
# GPU; without it the tasks run on CPUs (--cpus-per-task C, default 4, becomes each task's thread count). The nmc
# batch flags after -- (--quality, --bpp, --seed, ...) go to every task and to the merge. Prints
# `array_job=ID merge_job=ID` on stdout; the tasks' logs go to DIR (default OUT/slurm-logs), appended across requeues.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

usage() {
  sed -n '6,7p' "$0" | sed 's/^# *//' >&2
  exit 2
}
shards=8 gpus=0 cpus=4 partition="" time_limit="" nmc="" logs=""
while [ $# -gt 0 ]; do
  case $1 in
    --shards) shards=$2; shift 2 ;;
    --gpus-per-task) gpus=$2; shift 2 ;;
    --cpus-per-task) cpus=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --nmc) nmc=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) usage ;;
    --) break ;;
    -*) echo "submit.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
root=$(realpath -m "$1") out=$(realpath -m "$2")
shift 2
if [ "${1:-}" = "--" ]; then shift; fi
for n in "$shards" "$gpus" "$cpus"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "submit.sh: --shards, --gpus-per-task and --cpus-per-task take numbers" >&2; exit 2; }
done
if [ "$shards" -lt 1 ] || [ "$cpus" -lt 1 ]; then
  echo "submit.sh: --shards and --cpus-per-task must be >= 1" >&2
  exit 2
fi
nmc=$(realpath -m "${nmc:-$(command -v nmc || echo nmc)}")
[ -x "$nmc" ] || { echo "submit.sh: $nmc: no nmc executable (put nmc on PATH or pass --nmc)" >&2; exit 2; }
[ -d "$root" ] || { echo "submit.sh: $root: not a folder" >&2; exit 3; }
logs=$(realpath -m "${logs:-$out/slurm-logs}")
mkdir -p "$out" "$logs"

# The merge takes the array's settings; the flags that only concern running are the array's alone.
batch_flags=("$@") merge_flags=()
while [ $# -gt 0 ]; do
  case $1 in
    -f|--force|--strict|--dry-run) shift ;;
    --shard) shift 2 ;;
    *) merge_flags+=("$1"); shift ;;
  esac
done

common=()
[ -n "$partition" ] && common+=(--partition="$partition")
[ -n "$time_limit" ] && common+=(--time="$time_limit")
task=(--array="0-$((shards - 1))" --cpus-per-task="$cpus" --output="$logs/nmc-batch-%A_%a.log")
if [ "$gpus" -gt 0 ]; then
  task+=(--gres="gpu:$gpus")
  [[ " ${batch_flags[*]} " == *" --device "* ]] || batch_flags=(--device cuda "${batch_flags[@]}")
fi
array_job=$(sbatch --parsable "${common[@]}" "${task[@]}" "$here/nmc-batch.sbatch" "$nmc" "$root" "$out" \
  "${batch_flags[@]}")
array_job=${array_job%%;*}  # "ID;CLUSTER" on federated clusters
merge_job=$(sbatch --parsable "${common[@]}" --dependency="afterany:$array_job" --kill-on-invalid-dep=no \
  --output="$logs/nmc-merge-%j.log" "$here/nmc-merge.sbatch" "$nmc" "$root" "$out" "${merge_flags[@]}")
merge_job=${merge_job%%;*}
echo "submit.sh: $shards tasks in array job $array_job, merge job $merge_job; logs in $logs" >&2
echo "array_job=$array_job merge_job=$merge_job"
