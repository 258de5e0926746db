#!/bin/bash
# Deepfake detection v4 (issue 25), run from the repo root with the venv's python (torch 2.13 CPU, no torchaudio):
#   bash training/experiments_v4.sh gen          # data cache + spoof generation stage (resumable) + pack
#   bash training/experiments_v4.sh v4           # v4 candidate: warm start from v3, every family, channels on both classes
#   bash training/experiments_v4.sh lofo         # leave-one-family-out folds (FOLDS="family:steps ..."), from v2 like v3's folds
#   bash training/experiments_v4.sh lofo-oc      # the same folds with the one-class-softmax head
#   bash training/experiments_v4.sh eval-v3      # the shipped v3 model through the same evaluation (thresholds for v3)
#   bash training/experiments_v4.sh export       # v4 checkpoint -> models/voxkey-spoof-v4.onnx + evaluation + manifest entry
# Everything runs under `nice -n ${NICE:-19}`, one thread per process. Caches and generated audio go to
# $VOXKEY_WORK (default training/work/v4, gitignored: its data cache has no MP3 round trips, so it is kept apart from
# the v3 cache in training/work/cache); checkpoints to training/checkpoints/. PY: the venv's python (default
# $VOXKEY_VENV/bin/python when VOXKEY_VENV is set, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${VOXKEY_VENV:-}" ]; then PY=${PY:-$VOXKEY_VENV/bin/python}; else PY=${PY:-python3}; fi
DATA_DIR=${DATA_DIR:-../shared/datasets}
export VOXKEY_WORK=${VOXKEY_WORK:-$PWD/training/work/v4}
GEN=$VOXKEY_WORK/spoofgen-v4
V4_STEPS=${V4_STEPS:-700}
mkdir -p training/results training/checkpoints "$VOXKEY_WORK"
V2_SPOOF_ONNX=$VOXKEY_WORK/voxkey-spoof-v2.onnx
[ -s "$V2_SPOOF_ONNX" ] || git show e861fd7:models/voxkey-spoof-v2.onnx > "$V2_SPOOF_ONNX"
run() { nice -n "${NICE:-19}" "$PY" "$@"; }
COMMON="--data-dir $DATA_DIR --spoofgen $GEN --rawboost-p 0.3 --chan-p 0.5 --lr 5e-4"
for s in "${@:-gen}"; do
case $s in
  gen)
    [ -f "$VOXKEY_WORK/cache/index.csv" ] || run -m training.voxkey_train.data --data-dir "$DATA_DIR" --jobs "${JOBS:-2}" --no-mp3
    run -m training.voxkey_train.gen_v4 --data-dir "$DATA_DIR" --jobs "${JOBS:-2}"
    run -m training.voxkey_train.gen_v4 --data-dir "$DATA_DIR" --pack
    ;;
  v4)
    run -m training.voxkey_train.train_spoof $COMMON --tag v4-bce --init-onnx models/voxkey-spoof-v3.onnx --max-steps "$V4_STEPS"
    run -m training.voxkey_train.cm_v4 --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_v4-bce.pt --out training/results/cm-v4-candidate-bce.json > /dev/null
    ;;
  v4-oc)
    run -m training.voxkey_train.train_spoof $COMMON --arch lcnn-lfb64-oc --tag v4-oc --init-onnx models/voxkey-spoof-v3.onnx --max-steps "$V4_STEPS"
    run -m training.voxkey_train.cm_v4 --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_v4-oc.pt --out training/results/cm-v4-candidate-oc.json > /dev/null
    ;;
  lofo|lofo-oc)
    arch=lcnn-lfb64; pre=lofo4
    [ "$s" = lofo-oc ] && arch=lcnn-lfb64-oc && pre=lofo4-oc
    for fold in ${FOLDS:-codec-lm-tts:250 vc-any:250 neural-vocoder:250}; do
      fam=${fold%:*}; tag="$pre-${fam/:/-}"  # family names may contain ":" (gen:piper:80)
      extra=""; case $fam in gen:*) extra="--gen-families $fam";; esac
      run -m training.voxkey_train.train_spoof $COMMON --arch $arch --tag "$tag" --init-onnx "$V2_SPOOF_ONNX" \
        --max-steps "${fold##*:}" --exclude-families "$fam"
      run -m training.voxkey_train.cm_v4 --data-dir "$DATA_DIR" --ckpt "training/checkpoints/spoof_$tag.pt" $extra \
        --out "training/results/cm-$tag.json" > /dev/null
    done
    ;;
  eval-v3)
    run -m training.voxkey_train.cm_v4 --data-dir "$DATA_DIR" --onnx models/voxkey-spoof-v3.onnx --out training/results/cm-v4-eval-voxkey-spoof-v3.json > /dev/null
    ;;
  export)
    run -m training.voxkey_train.export_v4 --data-dir "$DATA_DIR" --ckpt "${V4_CKPT:-training/checkpoints/spoof_v4-bce.pt}" --name voxkey-spoof-v4
    # then, through the engine: npm run eval -- --sv ... --cm ... --spoof-model voxkey-spoof-v4 --write-spoof-threshold --max-flagged 0.03 --write-enrolment-spoof-threshold
    ;;
esac
done
