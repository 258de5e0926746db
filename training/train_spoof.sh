#!/bin/bash
# Generate extra spoofs, train + export the Voxkey spoof countermeasure. Run from the repo root:
#   bash training/train_spoof.sh
# Resumable: re-running continues from training/checkpoints/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
ARCH=${ARCH:-lcnn-lfb64}
MAX_STEPS=${MAX_STEPS:-600}
CONT_STEPS=${CONT_STEPS:-900}
NAME=${NAME:-voxkey-spoof-v1}
mkdir -p training/work training/checkpoints training/results
[ -f training/work/cache/index.csv ] || $PY -m training.voxkey_train.data --data-dir "$DATA_DIR"
[ -f training/work/spoofgen/index.csv ] || $PY -m training.voxkey_train.gen_spoof
$PY -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --arch "$ARCH" --max-steps "$MAX_STEPS"
CKPT="training/checkpoints/spoof_$ARCH.pt"
if [ "$CONT_STEPS" != 0 ]; then
  # continuation from the main checkpoint with the schedule extended to CONT_STEPS
  [ -f "training/checkpoints/spoof_$ARCH-c2.pt" ] || cp "$CKPT" "training/checkpoints/spoof_$ARCH-c2.pt"
  $PY -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --arch "$ARCH" --tag "$ARCH-c2" --max-steps "$CONT_STEPS"
  CKPT="training/checkpoints/spoof_$ARCH-c2.pt"
fi
$PY -m training.voxkey_train.export spoof --data-dir "$DATA_DIR" --ckpt "$CKPT" --name "$NAME"
$PY training/evaluate.py cm --data-dir "$DATA_DIR" --onnx "models/$NAME.onnx" --out "training/results/cm-$NAME-onnx.json" > /dev/null
