#!/usr/bin/env bash
# record.sh pods NAMESPACE | record.sh vpa NAMESPACE NAME | record.sh metrics NAMESPACE:
# JSON lines on stdout, each with the wall time it was seen ("t", unix seconds). pods: a watch
# (its first list may come as List objects of many pods: one line per pod); per event its type,
# name, UID, the container "main"'s spec requests and limits and the
# requests its status reports. vpa: a watch; per update the recommendation of container "main"
# (target, lowerBound, upperBound, uncappedTarget). metrics: what metrics-server serves for the
# namespace's pods (metrics.k8s.io, what the VPA recommender reads), every 5 s: per pod its
# metrics' timestamp and window, CPU and memory of "main". Runs until SIGTERM, then stops.
# A watch that ends starts again (said on stderr). Start it in a session of its own (setsid):
# on SIGTERM it ends its whole process group.
set -euo pipefail
what=$1 ns=$2
case $what in
pods)
    # A watch the API server ends (it may end a slow one at any time) starts again: the list
    # it begins with (ADDED events) brings the recording up to date.
    while :; do
        kubectl get pods -n "$ns" -l app=train --watch --output-watch-events -o json || true
        echo "record.sh: the watch of pods in $ns ended at $(date +%s.%N); watching again" >&2
        sleep 1
    done |
        jq -c --unbuffered '. as $e | (.object.items // [.object])[]
            | {t: now, type: $e.type, pod: .metadata.name, uid: .metadata.uid,
               requests: .spec.containers[0].resources.requests,
               limits: .spec.containers[0].resources.limits,
               status_requests: (.status.containerStatuses[0].resources.requests // null)}' &
    ;;
vpa)
    while :; do
        kubectl get vpa "$3" -n "$ns" --watch -o json || true
        echo "record.sh: the watch of vpa $3 in $ns ended at $(date +%s.%N); watching again" >&2
        sleep 1
    done |
        jq -c --unbuffered '(.status.recommendation.containerRecommendations // []
                | map(select(.containerName == "main"))[0]) as $r
            | {t: now, target: ($r.target // null), lowerBound: ($r.lowerBound // null),
               upperBound: ($r.upperBound // null), uncappedTarget: ($r.uncappedTarget // null)}' &
    ;;
metrics)
    while :; do
        kubectl get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/$ns/pods" 2> /dev/null |
            jq -c '.items[] | {t: now, pod: .metadata.name, timestamp, window,
                cpu: (.containers[] | select(.name == "main") | .usage.cpu),
                memory: (.containers[] | select(.name == "main") | .usage.memory)}' || true
        sleep 5
    done &
    ;;
*) echo "usage: record.sh pods NAMESPACE | record.sh vpa NAMESPACE NAME | record.sh metrics NAMESPACE" >&2; exit 2 ;;
esac
# `wait` returns on a signal (a foreground pipeline would delay the trap until it ended).
trap 'trap - TERM; kill 0' TERM
wait
