#!/bin/bash
# Train + export the Voxkey speaker model. Run from the repo root:  bash training/train_speaker.sh
# Resumable: re-running continues from training/checkpoints/ (each stage skips/finishes its own work).
# Env: DATA_DIR (default ../shared/datasets), ARCH (default ecapa256), MAX_STEPS (main cosine cycle,
#      default 1000), CONT_STEPS (end of the low-LR continuation, default 1400; 0 = skip),
#      NAME (default voxkey-speaker-v1), PY (default /usr/bin/python3), COMPARE=1 (arch comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
ARCH=${ARCH:-ecapa256}
MAX_STEPS=${MAX_STEPS:-1000}
CONT_STEPS=${CONT_STEPS:-1400}
NAME=${NAME:-voxkey-speaker-v1}
mkdir -p training/work training/checkpoints training/results
[ -f training/work/cache/index.csv ] || $PY -m training.voxkey_train.data --data-dir "$DATA_DIR"
if [ "${COMPARE:-0}" = 1 ]; then
  # short architecture comparison at ~equal CPU time (same seed and batches): ECAPA 300 steps vs thin ResNet 190 steps
  $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch ecapa256 --tag cmp-ecapa256 --max-steps 2200 --stop-step 300
  $PY training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_cmp-ecapa256.pt --out training/results/sv-compare-ecapa256-300.json > /dev/null
  $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch resnet-thin --tag cmp-resnet-thin --max-steps 1400 --stop-step 190
  $PY training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_cmp-resnet-thin.pt --out training/results/sv-compare-resnet-thin-190.json > /dev/null
fi
# main cosine cycle
$PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch "$ARCH" --max-steps "$MAX_STEPS"
CKPT="training/checkpoints/speaker_$ARCH.pt"
if [ "$CONT_STEPS" != 0 ]; then
  # low-LR continuation: same schedule formula extended to CONT_STEPS, starting from the main checkpoint
  [ -f "training/checkpoints/speaker_$ARCH-c2.pt" ] || cp "$CKPT" "training/checkpoints/speaker_$ARCH-c2.pt"
  $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch "$ARCH" --tag "$ARCH-c2" --max-steps "$CONT_STEPS"
  CKPT="training/checkpoints/speaker_$ARCH-c2.pt"
fi
$PY -m training.voxkey_train.export speaker --data-dir "$DATA_DIR" --ckpt "$CKPT" --name "$NAME"
$PY training/evaluate.py sv --data-dir "$DATA_DIR" --onnx "models/$NAME.onnx" --out "training/results/sv-$NAME-onnx.json" > /dev/null
