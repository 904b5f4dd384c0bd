#!/usr/bin/env bash
# Submits a fleet campaign on Slurm: campaign.sbatch as a job array (one task per node) and
# campaign-compare.sbatch after it, into one shared folder. docs/distributed.md.
#   ci/slurm/campaign.sh [--tasks N] [--wait] [--sbatch-arg ARG]... [-- TIPBENCH RUN FLAGS...]
#     --tasks N         array tasks (default 2): one per node to measure
#     --wait            wait for both jobs (sbatch --wait) and exit with the comparison's code
#     --sbatch-arg ARG  passed to both sbatch calls (e.g. --sbatch-arg=--partition=h100)
# Environment: TIPBENCH (the binary), TIPBENCH_CAMPAIGN (default results/campaigns/<UTC time>),
# TIPBENCH_HISTORY_STORE (ingest the results there). Prints the job ids and the folder.
# Exit: 0 submitted (with --wait: compared); 1 a job failed; 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
tasks=2 wait=0 sbatch_args=()
while (($#)); do
  case $1 in
    --tasks) tasks=${2:?--tasks needs a number}; shift 2 ;;
    --wait) wait=1; shift ;;
    --sbatch-arg=*) sbatch_args+=("${1#--sbatch-arg=}"); shift ;;
    --sbatch-arg) sbatch_args+=("${2:?--sbatch-arg needs a value}"); shift 2 ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "campaign.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $tasks =~ ^[1-9][0-9]*$ ]] || { echo "campaign.sh: --tasks needs a positive number, got '$tasks'" >&2; exit 2; }
export TIPBENCH_CAMPAIGN=${TIPBENCH_CAMPAIGN:-$PWD/results/campaigns/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$TIPBENCH_CAMPAIGN"
array=$(sbatch --parsable --array="0-$((tasks - 1))" "${sbatch_args[@]}" \
  --output="$TIPBENCH_CAMPAIGN/task-%a.log" "$here/campaign.sbatch" "$@")
array=${array%%;*}
wait_flag=()
((wait)) && wait_flag=(--wait)
echo "campaign.sh: array job $array ($tasks tasks) -> $TIPBENCH_CAMPAIGN"
set +e
compare=$(sbatch --parsable "${wait_flag[@]}" --dependency="afterany:$array" "${sbatch_args[@]}" \
  --output="$TIPBENCH_CAMPAIGN/compare.log" "$here/campaign-compare.sbatch" "$TIPBENCH_CAMPAIGN")
code=$?
set -e
echo "campaign.sh: compare job ${compare%%;*} -> $TIPBENCH_CAMPAIGN/compare.md"
((wait)) && exit $((code == 0 ? 0 : 1))
exit 0
