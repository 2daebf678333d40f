#!/bin/bash
# Checks the kernel accounting the phase policy reads as a throttled container's demand: under a
# CFS quota of L cores, busy loops wanting D cores are throttled for about D - L CPU-seconds per
# second (cpu.stat's throttled_time sums the throttled time of every CPU whose run queue CFS
# throttled; cAdvisor exports it as container_cpu_cfs_throttled_seconds_total), so usage plus
# that rate is D. Runs `yes` loops in a cgroup of its own under several quotas and prints, for
# each, usage, throttled seconds per second and their sum against the loops' demand.
#
# Usage: sudo bash bench/cfs-throttled.sh [SECONDS]   (default 6 per case; needs the cgroup v1
# cpu and cpuacct controllers writable, as on this project's machines, and an idle machine: CPUs
# busy with others leave the loops less than their demand, and their quota is spent later in
# each period, so they are throttled for less).
set -euo pipefail
seconds=${1:-6}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "cfs-throttled.sh: SECONDS must be a whole number > 0, not '$seconds'" >&2; exit 2; }
cpu=/sys/fs/cgroup/cpu cpuacct=/sys/fs/cgroup/cpuacct
for d in "$cpu" "$cpuacct"; do
  [[ -w $d ]] || { echo "cfs-throttled.sh: $d is not a writable cgroup v1 hierarchy (run as root where it is)" >&2; exit 2; }
done
name=phasescale-cfs-$$
group=$cpu/$name acct=$cpuacct/$name
mkdir "$group" "$acct"
trap 'rmdir "$group" "$acct" 2>/dev/null || true' EXIT

counter() { awk -v k="$1" '$1 == k {print $2}' "$group/cpu.stat"; }
run_case() {  # quota in cores (as millicores), busy loops
  local millicores=$1 loops=$2
  echo 100000 > "$group/cpu.cfs_period_us"
  echo $((millicores * 100)) > "$group/cpu.cfs_quota_us"
  local t0 p0 h0 u0 t1 p1 h1 u1
  t0=$(counter throttled_time) p0=$(counter nr_periods) h0=$(counter nr_throttled) u0=$(cat "$acct/cpuacct.usage")
  bash -c "echo \$\$ > '$group/cgroup.procs'; echo \$\$ > '$acct/cgroup.procs'
           for i in \$(seq $loops); do timeout $seconds yes > /dev/null & done; wait"
  t1=$(counter throttled_time) p1=$(counter nr_periods) h1=$(counter nr_throttled) u1=$(cat "$acct/cpuacct.usage")
  awk -v l="$millicores" -v d="$loops" -v s="$seconds" -v dt=$((t1 - t0)) -v du=$((u1 - u0)) \
      -v dp=$((p1 - p0)) -v dh=$((h1 - h0)) 'BEGIN {
    u = du / 1e9 / s; t = dt / 1e9 / s
    printf "%6.2f %6d %8.2f %10.2f %8.2f %12.2f\n", l / 1000, d, u, t, (dp ? dh / dp : 0), u + t }'
}
echo " limit  loops    usage  throttled    share  usage+thr."
echo " cores         cores     s / s   periods    (= loops)"
for c in "500 1" "500 2" "1000 2" "1500 2" "1000 1"; do run_case $c; done
