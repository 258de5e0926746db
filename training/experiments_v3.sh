#!/bin/bash
# The v3 comparisons (issue 12), as run in the session of 2026-11-25 (2 shared CPU cores, ~2 h of
# training in all). Run from the repo root after the caches exist (data.py, gen_spoof.py).
# Sections: spoof-lofo (leave-one-family-out fine-tunes from v2; FOLDS="family:steps ..."), spoof-oc (the
# one-class-softmax variant on the codec-LM fold), speaker-cmp (the sampling comparison: uniform over clips, stopped at the step where the main
# run's snapshot is kept). Each run is evaluated on dev with training/evaluate.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
DATA_DIR=${DATA_DIR:-../shared/datasets}
CMP_STEPS=${CMP_STEPS:-400}
mkdir -p training/results training/checkpoints training/work
# the v2 models (the warm-restart starting points) from git history
V2_SPEAKER_ONNX=${V2_SPEAKER_ONNX:-training/work/voxkey-speaker-v2.onnx}
V2_SPOOF_ONNX=${V2_SPOOF_ONNX:-training/work/voxkey-spoof-v2.onnx}
[ -s "$V2_SPEAKER_ONNX" ] || git show e861fd7:models/voxkey-speaker-v2.onnx > "$V2_SPEAKER_ONNX"
[ -s "$V2_SPOOF_ONNX" ] || git show e861fd7:models/voxkey-spoof-v2.onnx > "$V2_SPOOF_ONNX"
run() { nice -n 10 "$PY" "$@"; }
for section in "${@:-spoof-lofo spoof-oc}"; do   # speaker-cmp: prepared, not run in the v3 session (no CPU left)
for s in $section; do
case $s in
  spoof-lofo)
    # fold:steps as run (the machine was overloaded by other jobs: 80 steps for the first fold, 50 for the others)
    for fold in ${FOLDS:-codec-lm-tts:80 vc-any:50 neural-vocoder:50}; do
      fam=${fold%%:*}
      run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --tag "lofo-$fam" --init-onnx "$V2_SPOOF_ONNX" \
        --lr 5e-4 --max-steps "${fold##*:}" --rawboost-p 0.3 --exclude-families "$fam"
      run training/evaluate.py cm --data-dir "$DATA_DIR" --ckpt "training/checkpoints/spoof_lofo-$fam.pt" \
        --out "training/results/cm-lofo-$fam.json" > /dev/null
    done
    ;;
  spoof-oc)
    # approach comparison on the codec-LM fold: one-class softmax instead of BCE, same data and steps
    run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --arch lcnn-lfb64-oc --tag lofo-oc-codec-lm-tts \
      --init-onnx "$V2_SPOOF_ONNX" --lr 5e-4 --max-steps 80 --rawboost-p 0.3 --exclude-families codec-lm-tts
    run training/evaluate.py cm --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_lofo-oc-codec-lm-tts.pt \
      --out training/results/cm-lofo-oc-codec-lm-tts.json > /dev/null
    ;;
  speaker-cmp)
    # same warm-started state as the main run (its step-0 snapshot: v2 weights + imprinted head)
    [ -f training/checkpoints/speaker_cmp-clip-sampling.pt ] || cp training/checkpoints/speaker_ecapa256-v3-step0.pt training/checkpoints/speaker_cmp-clip-sampling.pt
    # the LR schedule of the main run up to step 400 (cosine over 3800 steps to 308, over 3400 after)
    for sched in 3800:308 3400:"$CMP_STEPS"; do
      run -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch ecapa256 --tag cmp-clip-sampling \
        --init-onnx "$V2_SPEAKER_ONNX" --lr 1e-3 --margin-ramp 200 --max-steps "${sched%%:*}" --stop-step "${sched##*:}" \
        --sampling clip --imprint-per-class 3 --imprint-crop-s 2
    done
    run training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_cmp-clip-sampling.pt \
      --out "training/results/sv-cmp-clip-sampling-$CMP_STEPS.json" > /dev/null
    run training/evaluate.py sv --data-dir "$DATA_DIR" --ckpt "training/checkpoints/speaker_ecapa256-v3-step$CMP_STEPS.pt" \
      --out "training/results/sv-cmp-spk-sqrt-sampling-$CMP_STEPS.json" > /dev/null
    ;;
esac
done
done
