#!/bin/bash
# Train + export the Voxkey speaker model. Run from the repo root:  bash training/train_speaker.sh
# Resumable: re-running continues from training/checkpoints/ (every stage skips finished work).
# Env: DATA_DIR (default ../shared/datasets), ARCH (default ecapa256), MAX_STEPS, NAME, PY (default /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
ARCH=${ARCH:-ecapa256}
MAX_STEPS=${MAX_STEPS:-2200}
NAME=${NAME:-voxkey-speaker-v1}
mkdir -p training/work training/checkpoints training/results
[ -f training/work/cache/index.csv ] || $PY -m training.voxkey_train.data --data-dir "$DATA_DIR"
if [ "${COMPARE:-0}" = 1 ]; then
  # short architecture comparison (300 steps each, same batches), see training/README.md
  for a in ecapa256 resnet-thin; do
    $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch $a --max-steps $MAX_STEPS --stop-step 300
    $PY training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_$a.pt --out training/results/sv-compare-$a-300.json > /dev/null
  done
fi
$PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch "$ARCH" --max-steps "$MAX_STEPS"
$PY -m training.voxkey_train.export speaker --data-dir "$DATA_DIR" --ckpt "training/checkpoints/speaker_$ARCH.pt" --name "$NAME"
