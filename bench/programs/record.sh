#!/usr/bin/env bash
# Records the training programs of this folder (shapes the train.py of
# ../shared/tools/torch-traces/ does not have) under that folder's recorder, one at a time, into
# OUTDIR: runs of other programs to judge the policy on, as in docs/savings.md.
# SET o (the default): the thirteen of session 43, about 3.5 minutes each (46 minutes in all);
# SET x: six of session 48, recorded after every rule of the policy was chosen (variable-length
# batches, progressive resizing, a leak of kept losses, evaluations at a larger batch, an
# embedding table with Adam, CPU that changes with a flat memory), about 3.2 minutes each (20
# minutes in all); SET a: six of session 58, recorded to judge the policy as it stood then (text
# generated with a growing key/value cache, distillation that frees its teacher, a dataset
# re-augmented into a second copy every epoch, neighbour sampling on a power-law graph, a wait for
# peers before a 200M-parameter model loads, two tasks alternating), about 3 minutes each (18
# minutes in all); SET b: six of session 59, common shapes none of the others had (DataLoader
# workers started afresh every epoch, a batch-size finder before training, two tuning trials at a
# time, a memory-mapped dataset, weight averaging that copies the model late, length-bucketed
# batches), about 3 minutes each (19 minutes in all); SET c: six of session 60, more common shapes
# (a dataset streamed in shards, gradual unfreezing, five-fold cross-validation, a batch size
# doubled during training, rollouts and updates of a policy-gradient learner, export steps at the
# end), about 3 minutes each (19 minutes in all); SET d: four of session 61, eight minutes each,
# loops a long job repeats (evaluations and checkpoints every minute or two, gradient
# accumulation with validation, a streaming shuffle buffer filling, early stopping's best copy
# with hard-example mining), 33 minutes in all; SET e: five of session 62, about 3 minutes each
# (an embedding table grown as new IDs arrive, profiler windows, iterative magnitude pruning,
# retrieval evaluations over a growing validation set, multi-scale inputs), 16 minutes in all; SET
# f: five of session 63 that outgrow the 4 GiB the replays start them at (Adam's state of a
# 320M-weight model, a dataset decoded into memory, evaluations at a large batch, checkpoints that
# copy the state, a cache filled by the first epoch), about 3 minutes each (17 minutes in all).
# Usage: bash bench/programs/record.sh OUTDIR [o|x|a|b|c|d|e|f] (from the project root). The
# recordings docs/savings.md measures are kept in bench/programs/recorded/ (its README).
# Needs Debian's python3-torch, python3-numpy and libopenblas0-openmp (apt-get install).
set -euo pipefail
out="${1:?usage: record.sh OUTDIR [o|x|a|b|c|d|e|f]}"
set_name="${2:-o}"
here="$(cd "$(dirname "$0")" && pwd)"
recorder="$here/../../../shared/tools/torch-traces/recorder.py"
case "$set_name" in
o) runs="o01-lazyadam o02-replay o03-stages o04-gan o05-finetune o06-workers o07-bursty
    o08-cache o09-ckpt o10-sweep o11-ddp o12-prep o13-upload" ;;
x) runs="x01-varlen x02-progressive x03-leak x04-evalbig x05-embed x06-threads" ;;
a) runs="a01-generate a02-distill a03-shuffle a04-graph a05-rendezvous a06-multitask" ;;
b) runs="b01-respawn b02-batchfind b03-trials b04-mmapdata b05-swa b06-bucket" ;;
c) runs="c01-shards c02-unfreeze c03-kfold c04-growbatch c05-rollout c06-export" ;;
d) runs="d01-longckpt d02-accum d03-shufflebuf d04-bestcopy" ;;
e) runs="e01-growvocab e02-profiler e03-prune e04-retrieval e05-multiscale" ;;
f) runs="f01-bigadam f02-loadramp f03-bigeval f04-ckptcopy f05-epochcache" ;;
*) echo "record.sh: unknown set \"$set_name\" (o, x, a, b, c, d, e or f)" >&2; exit 2 ;;
esac
mkdir -p "$out/extra"
for run in $runs; do
  /usr/bin/python3 "$recorder" --out "$out/$run.csv" --pod "$run" --service torch-dev \
    --interval 2.0 --extra "$out/extra/$run.diag.csv" --log "$out/extra/$run.log" -- \
    /usr/bin/python3 "$here/${run#*-}.py"
done
