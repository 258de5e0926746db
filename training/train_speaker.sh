#!/bin/bash
# Train + export the Voxkey speaker model. Run from the repo root:  bash training/train_speaker.sh
# Resumable: re-running continues from training/checkpoints/ (each stage skips/finishes its own work).
#
# Stage A (the v1 recipe): ECAPA-TDNN from scratch, main cosine cycle + low-LR continuation, exported
#   to training/work/stage-a/ (skipped when INIT_ONNX names an existing model, e.g. the v1 file from
#   git history: git show ee851e6:models/voxkey-speaker-v1.onnx > training/work/voxkey-speaker-v1.onnx).
# Stage B (v2): warm restart from stage A's ONNX (new AAM head imprinted from class means), new
#   cosine cycle of V2_STEPS, then export to models/ + dev eval + calibration + manifest.
# Env: DATA_DIR (default ../shared/datasets), ARCH (default ecapa256), MAX_STEPS (stage A main cycle,
#      default 1000), CONT_STEPS (end of stage A's continuation, default 1400; 0 = skip),
#      INIT_ONNX, V2_STEPS (default 3600), NAME (default voxkey-speaker-v2), PY (default
#      /usr/bin/python3), COMPARE=1 (architecture comparison first).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
ARCH=${ARCH:-ecapa256}
MAX_STEPS=${MAX_STEPS:-1000}
CONT_STEPS=${CONT_STEPS:-1400}
V2_STEPS=${V2_STEPS:-3600}
NAME=${NAME:-voxkey-speaker-v2}
INIT_ONNX=${INIT_ONNX:-training/work/stage-a/voxkey-speaker-stage-a.onnx}
mkdir -p training/work/stage-a training/checkpoints training/results
[ -f training/work/cache/index.csv ] || $PY -m training.voxkey_train.data --data-dir "$DATA_DIR"
if [ "${COMPARE:-0}" = 1 ]; then
  # short architecture comparison at ~equal CPU time (same seed and batches): ECAPA 300 steps vs thin ResNet 190 steps
  $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch ecapa256 --tag cmp-ecapa256 --max-steps 2200 --stop-step 300
  $PY training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_cmp-ecapa256.pt --out training/results/sv-compare-ecapa256-300.json > /dev/null
  $PY -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch resnet-thin --tag cmp-resnet-thin --max-steps 1400 --stop-step 190
  $PY training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_cmp-resnet-thin.pt --out training/results/sv-compare-resnet-thin-190.json > /dev/null
fi
. training/stages.sh
two_stage_training speaker train_speaker sv "--backend none" --lr 1e-3 --margin-ramp 200
