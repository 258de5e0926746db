#!/bin/bash
# Generate extra spoofs, train + export the Voxkey spoof countermeasure. Run from the repo root:
#   bash training/train_spoof.sh
# Resumable: re-running continues from training/checkpoints/.
#
# Stage A (the v1 recipe): LCNN from scratch (MAX_STEPS) + continuation (CONT_STEPS), exported to
#   training/work/stage-a/ (skipped when INIT_ONNX names an existing model, e.g. the v1 file from
#   git history: git show ee851e6:models/voxkey-spoof-v1.onnx > training/work/voxkey-spoof-v1.onnx).
# Stage B (v2): warm restart from stage A's ONNX with a new cosine cycle of V2_STEPS, then export to
#   models/ + dev eval + manifest.
# Env: DATA_DIR, ARCH (default lcnn-lfb64), MAX_STEPS (600), CONT_STEPS (900; 0 = skip), INIT_ONNX,
#      V2_STEPS (1800), NAME (default voxkey-spoof-v2), PY (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
ARCH=${ARCH:-lcnn-lfb64}
MAX_STEPS=${MAX_STEPS:-600}
CONT_STEPS=${CONT_STEPS:-900}
V2_STEPS=${V2_STEPS:-1800}
NAME=${NAME:-voxkey-spoof-v2}
INIT_ONNX=${INIT_ONNX:-training/work/stage-a/voxkey-spoof-stage-a.onnx}
mkdir -p training/work/stage-a training/checkpoints training/results
[ -f training/work/cache/index.csv ] || $PY -m training.voxkey_train.data --data-dir "$DATA_DIR"
[ -f training/work/spoofgen/index.csv ] || $PY -m training.voxkey_train.gen_spoof
. training/stages.sh
two_stage_training spoof train_spoof cm "" --lr 5e-4
