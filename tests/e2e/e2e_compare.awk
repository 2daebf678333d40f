# A read-only helper of e2e.sh: compares what the operator showed on the pods (polled into
# OBS.tsv: wall-seconds, namespace, pod, phase label, cpu request, memory request) with a
# reference computed offline on the same trace.
#   awk -v MODE=phase  -f e2e_compare.awk PREDICT.csv OBS.tsv   (phasescale predict --out)
#   awk -v MODE=resize -f e2e_compare.awk SIM.csv OBS.tsv       (simulate --allocations, cut to: id,index,timestamp,cpu,memory)
# Variables: SPEED (trace s per wall s); STARTS "ns=wall,..." (when each exporter started);
# FIRSTS "pod=ts,..." (each pod's first trace timestamp); an observation at wall w is at trace
# time T = first + (w - start) * SPEED and is matched against the samples in [T - LAG, T + LEAD]
# (trace seconds). MODE=resize also: NS (the namespace resized), TOL_CPU, TOL_MEM (relative),
# and the clamp of the containerPolicies (MIN_CPU, MAX_CPU cores, MIN_MEM, MAX_MEM bytes).
# FROM (wall time): before it is the operator's warm-up: labels and resizes are only counted.
# NAMES (MODE=phase): the model's phase names in phase order, which the labels show.
# Prints one line per mismatch and a last line "phase N MATCHED MAXLAG WARMUP_MISMATCHES" or
# "resize N SIZE_OK DIRECTION_OK WORST_CPU% WORST_MEMORY% WARMUP_RESIZES" (the largest
# closest-match errors after the warm-up; SIZE_OK and DIRECTION_OK count warm-up resizes as ok).
BEGIN {
    FS = ","
    n = split(STARTS, a, ",")
    for (i = 1; i <= n; ++i) { split(a[i], b, "="); start[b[1]] = b[2] + 0 }
    n = split(FIRSTS, a, ",")
    for (i = 1; i <= n; ++i) { split(a[i], b, "="); first[b[1]] = b[2] + 0 }
    npods = 0
    nnames = split(NAMES, phase_name, ",")
}
function cores(q) { return q ~ /m$/ ? substr(q, 1, length(q) - 1) / 1000 : q + 0 }
function bytes(q,   u) {
    u = 1
    if (q ~ /Ki$/) u = 1024; else if (q ~ /Mi$/) u = 1048576; else if (q ~ /Gi$/) u = 1073741824
    if (u > 1) q = substr(q, 1, length(q) - 2)
    return q * u
}
function clamp(x, lo, hi) { return x < lo ? lo : (x > hi ? hi : x) }
function sign(x) { return x > 0 ? 1 : (x < 0 ? -1 : 0) }
function abs(x) { return x < 0 ? -x : x }
# The reference: pods in the order of their first row (the exporter's #0, #1, ...).
FNR == NR {
    if (FNR == 1 || $1 ~ /^#/) next
    if (!($1 in pod)) pod[$1] = "trainer-" npods++
    p = pod[$1]
    i = count[p]++
    if (MODE == "phase") { ts[p, i] = $2 + 0; ref[p, i] = ($4 != "" && nnames) ? phase_name[$4 + 1] : $4 }
    else { ts[p, i] = $3 + 0; cpu[p, i] = clamp($4 + 0, MIN_CPU, MAX_CPU); mem[p, i] = clamp($5 + 0, MIN_MEM, MAX_MEM) }
    next
}
{
    split($0, o, "\t")
    wall = o[1] + 0; ns = o[2]; p = o[3]
    if (!(ns in start) || !(p in first)) next
    T = first[p] + (wall - start[ns]) * SPEED
    if (MODE == "phase") {
        if (o[4] == "-" || o[4] == "unknown") next
        if (wall < FROM) warm = 1; else { warm = 0; ++seen }
        # The latest sample up to T + LEAD whose predicted phase is the label: how far back.
        found = 0
        for (i = 0; i < count[p] && ts[p, i] <= T + LEAD; ++i) {
            if (ref[p, i] == o[4]) { found = 1; lag = T - ts[p, i] }
        }
        if (warm) { if (!found || lag > LAG) ++warm_mismatched; next }
        if (found && lag <= LAG) ++matched
        else printf "phase mismatch: %s/%s label %s at trace time +%.0f s: predict's latest %s is %s\n", ns, p, o[4], T - first[p], o[4], found ? sprintf("%.0f s earlier", lag) : "nowhere before"
        if (found && lag <= LAG && lag > maxlag) maxlag = lag
        next
    }
    if (ns != NS) next
    c = cores(o[5]); m = bytes(o[6])
    if (p in prev_c && (c != prev_c[p] || m != prev_m[p])) {
        for (r = 0; r < 2; ++r) {
            now = r ? m : c; was = r ? prev_m[p] : prev_c[p]; tol = r ? TOL_MEM : TOL_CPU
            if (now == was) continue
            ++resizes
            best = -1; dir = 0; lo = -1; hi = -1
            for (i = 0; i < count[p]; ++i) {
                if (ts[p, i] < T - LAG || ts[p, i] > T + LEAD) continue
                s = r ? mem[p, i] : cpu[p, i]
                e = abs(now - s) / s
                if (best < 0 || e < best) best = e
                if (sign(s - was) == sign(now - was)) dir = 1
                if (lo < 0 || s < lo) lo = s
                if (s > hi) hi = s
            }
            # The warm-up's resizes are only counted (the simulator's first decisions may not be
            # in the window yet); a resize within the size tolerance agrees in direction too
            # (a tiny change can go either way of the simulator's request).
            if (wall < FROM) { ++warm_resizes; ++size_ok; ++dir_ok; continue }
            if (best > worst[r]) worst[r] = best
            if (best >= 0 && best <= tol) { ++size_ok; dir = 1 }
            if (dir) ++dir_ok
            if (best < 0 || best > tol || !dir)
                printf "resize mismatch: %s/%s %s %g -> %g at trace time +%.0f s: simulate %g..%g in the window (closest %.0f%% off)%s\n", ns, p, r ? "memory" : "cpu", was, now, T - first[p], lo, hi, 100 * best, dir ? "" : ", other direction"
        }
    }
    prev_c[p] = c; prev_m[p] = m
}
END {
    if (MODE == "phase") printf "phase %d %d %.0f %d\n", seen, matched, maxlag, warm_mismatched
    else printf "resize %d %d %d %.1f%% %.1f%% %d\n", resizes, size_ok, dir_ok, 100 * worst[0], 100 * worst[1], warm_resizes
}
