#!/usr/bin/env bash
# Records six runs of ../shared/tools/torch-traces/train.py (the program of ../shared/data/torch/)
# at settings its six runs do not use (another model, other sizes, threads, workers and caching),
# one at a time with that folder's record.sh, into OUTDIR: runs to judge the policy on, as in
# docs/savings.md. SET v (the default): the six of session 44 ("Six train.py runs"), 1-4.5 minutes
# each, about 13 minutes in all; SET w: six more of session 45 ("Six more train.py runs"), at
# settings neither set uses, 20 s to 2 minutes each, about 7 minutes in all; SET y: ten of session
# 51 ("Ten train.py runs"), 26 s to 2.7 minutes each, about 11 minutes in all; SET z: six of
# session 54 ("Six train.py runs, in session 54"), 1.1 to 11 minutes each, about 20 minutes in all.
# Usage: bash bench/programs/record-train.sh OUTDIR [v|w|y|z] (from the project root). The
# recordings docs/savings.md measures are kept in bench/programs/recorded/ (its README).
# Needs Debian's python3-torch, python3-numpy and libopenblas0-openmp (apt-get install).
set -euo pipefail
out="${1:?usage: record-train.sh OUTDIR [v|w|y|z]}"
set_name="${2:-v}"
here="$(cd "$(dirname "$0")" && pwd)"
record="$here/../../../shared/tools/torch-traces/record.sh"
run() { bash "$record" "$out" "$@"; }
case "$set_name" in
v)
  run v01-convae -- --model convae --n 12000 --img 32 --channels 3 --hidden 32 --batch-size 128 \
    --threads 2 --epochs 6 --max-steps 40 --ckpt-every 2 --seed 21
  run v02-mlp1t -- --model mlp --n 300000 --dim 192 --hidden 768 --layers 4 --batch-size 512 \
    --threads 1 --epochs 8 --max-steps 60 --ckpt-every 3 --seed 22
  run v03-cnncache -- --model cnn --n 20000 --img 40 --channels 3 --hidden 32 --batch-size 64 \
    --threads 2 --workers 0 --epochs 5 --max-steps 60 --cache --seed 23
  run v04-lstmw2 -- --model lstm --n 60000 --seq 64 --feat 24 --hidden 128 --layers 2 \
    --batch-size 128 --threads 1 --workers 2 --epochs 5 --max-steps 50 --seed 24
  run v05-transformer -- --model transformer --n 40000 --seq 96 --vocab 512 --hidden 128 \
    --layers 3 --batch-size 64 --threads 2 --epochs 4 --max-steps 50 --ckpt-every 1 --seed 25
  run v06-grubig -- --model gru --n 150000 --seq 64 --feat 16 --hidden 128 --layers 2 \
    --batch-size 256 --threads 2 --workers 0 --epochs 6 --max-steps 40 --seed 26
  ;;
w)
  run w02-cnn64 -- --model cnn --n 8000 --img 64 --channels 3 --hidden 48 --batch-size 32 \
    --threads 2 --workers 1 --epochs 4 --max-steps 40 --seed 32
  run w03-translong -- --model transformer --n 20000 --seq 192 --vocab 256 --hidden 96 \
    --layers 2 --batch-size 32 --threads 1 --epochs 3 --max-steps 40 --seed 33
  run w04-mlpcache -- --model mlp --n 400000 --dim 64 --hidden 256 --layers 6 \
    --batch-size 1024 --threads 2 --workers 2 --epochs 6 --max-steps 40 --cache --seed 34
  run w05-lstmckpt -- --model lstm --n 100000 --seq 32 --feat 48 --hidden 192 --layers 1 \
    --batch-size 512 --threads 2 --epochs 4 --max-steps 30 --ckpt-every 1 --keep-ckpt 2 --seed 35
  run w06-gru1t -- --model gru --n 30000 --seq 128 --feat 8 --hidden 64 --layers 3 \
    --batch-size 64 --threads 1 --epochs 5 --max-steps 50 --seed 36
  run w07-aebig -- --model ae --n 400000 --dim 512 --hidden 1024 --layers 4 --batch-size 256 \
    --threads 2 --epochs 6 --max-steps 150 --ckpt-every 2 --seed 37
  ;;
y)
  run y01-convae -- --model convae --n 20000 --img 32 --channels 3 --hidden 32 --batch-size 64 \
    --threads 2 --workers 1 --epochs 6 --max-steps 80 --ckpt-every 2 --seed 511
  run y02-mlp1t -- --model mlp --n 400000 --dim 64 --hidden 256 --layers 4 --batch-size 512 \
    --threads 1 --epochs 10 --max-steps 120 --ckpt-every 3 --seed 512
  run y03-cnn2w -- --model cnn --n 40000 --img 40 --channels 3 --hidden 32 --batch-size 128 \
    --threads 2 --workers 2 --epochs 5 --max-steps 60 --seed 513
  run y04-gru-cache -- --model gru --n 120000 --seq 64 --feat 12 --hidden 48 --batch-size 128 \
    --threads 2 --epochs 6 --max-steps 100 --cache --seed 514
  run y05-trf-w -- --model transformer --n 60000 --seq 64 --vocab 128 --hidden 96 --layers 3 \
    --batch-size 64 --threads 2 --workers 1 --epochs 5 --max-steps 60 --seed 515
  run y06-ae-big -- --model ae --n 150000 --dim 1024 --hidden 512 --batch-size 256 --threads 1 \
    --epochs 8 --max-steps 80 --ckpt-every 2 --seed 516
  run y07-convae-long -- --model convae --n 30000 --img 32 --channels 3 --hidden 32 \
    --batch-size 64 --threads 2 --workers 1 --epochs 10 --max-steps 150 --ckpt-every 3 --seed 517
  run y08-mlp-long -- --model mlp --n 300000 --dim 128 --hidden 512 --layers 3 --batch-size 256 \
    --threads 2 --epochs 14 --max-steps 200 --ckpt-every 4 --seed 518
  run y09-gru-1t -- --model gru --n 100000 --seq 64 --feat 16 --hidden 64 --batch-size 128 \
    --threads 1 --workers 1 --epochs 8 --max-steps 120 --cache --seed 519
  run y10-ae-w -- --model ae --n 200000 --dim 768 --hidden 384 --batch-size 256 --threads 2 \
    --workers 2 --epochs 10 --max-steps 150 --ckpt-every 2 --seed 520
  ;;
z)
  run z01-cnn-big -- --model cnn --n 60000 --img 48 --channels 3 --hidden 48 --batch-size 96 \
    --threads 2 --workers 0 --epochs 6 --max-steps 80 --ckpt-every 2 --seed 601
  run z02-transformer-w -- --model transformer --n 40000 --seq 32 --vocab 3000 --hidden 64 \
    --layers 2 --batch-size 64 --threads 2 --workers 2 --epochs 5 --max-steps 60 --seed 602
  run z03-lstm-1t -- --model lstm --n 150000 --seq 32 --feat 24 --hidden 64 --batch-size 128 \
    --threads 1 --workers 1 --epochs 8 --max-steps 300 --ckpt-every 2 --seed 603
  run z04-mlp-wide -- --model mlp --n 400000 --dim 256 --hidden 1024 --layers 2 --batch-size 512 \
    --threads 2 --epochs 6 --max-steps 400 --seed 604
  run z05-ae-cache -- --model ae --n 700000 --dim 256 --hidden 256 --batch-size 256 --threads 2 \
    --epochs 8 --max-steps 2000 --cache --seed 605
  run z06-convae-w2 -- --model convae --n 40000 --img 32 --channels 3 --hidden 24 --batch-size 48 \
    --threads 1 --workers 2 --epochs 5 --max-steps 500 --seed 606
  ;;
*)
  echo "record-train.sh: unknown set '$set_name' (v, w, y or z)" >&2
  exit 2
  ;;
esac
