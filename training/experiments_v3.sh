#!/bin/bash
# The v3 comparisons (issue 12), as run in the second session of 2026-11-25 (2 shared CPU cores). Run from the
# repo root after the caches exist (data.py, gen_spoof.py). Sections: spoof-lofo (leave-one-family-out fine-tunes
# from v2; FOLDS="family:steps ..."), spoof-oc (the one-class-softmax variant on the codec-LM fold), spoof-aug (the
# same fold without RawBoost-style noise and the spoof band limit), speaker-cmp (classes drawn uniformly over clips
# vs p ~ sqrt(clips per speaker), CMP_STEPS each from the same warm start). Each run is evaluated on dev with
# training/voxkey_train/evaluate.py; the tables are in docs/accuracy.md. Third session (run by name, not in the default set):
# spoof-oc-all (the one-class softmax on every family at v3's length) and speaker-clip-full (uniform-over-clips
# sampling over a full 2,400-step cycle from v2), both run concurrently, one thread each.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}  # a python with torch 1.13 + torchaudio (Debian's, training/README.md)
DATA_DIR=${DATA_DIR:-../shared/datasets}
CMP_STEPS=${CMP_STEPS:-400}
mkdir -p training/results training/checkpoints training/work
# the v2 models (the warm-restart starting points) from git history
V2_SPEAKER_ONNX=${V2_SPEAKER_ONNX:-training/work/voxkey-speaker-v2.onnx}
V2_SPOOF_ONNX=${V2_SPOOF_ONNX:-training/work/voxkey-spoof-v2.onnx}
[ -s "$V2_SPEAKER_ONNX" ] || git show e861fd7:models/voxkey-speaker-v2.onnx > "$V2_SPEAKER_ONNX"
[ -s "$V2_SPOOF_ONNX" ] || git show e861fd7:models/voxkey-spoof-v2.onnx > "$V2_SPOOF_ONNX"
run() { nice -n "${NICE:-10}" "$PY" "$@"; }
for section in "${@:-spoof-lofo spoof-oc spoof-aug speaker-cmp}"; do
for s in $section; do
case $s in
  spoof-lofo)
    # fold:steps (the first v3 session ran 80/50/50 steps on an overloaded machine; re-run with 250 each)
    for fold in ${FOLDS:-codec-lm-tts:250 vc-any:250 neural-vocoder:250}; do
      fam=${fold%%:*}
      run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --tag "lofo-$fam" --init-onnx "$V2_SPOOF_ONNX" \
        --lr 5e-4 --max-steps "${fold##*:}" --rawboost-p 0.3 --exclude-families "$fam"
      run -m training.voxkey_train.evaluate cm --data-dir "$DATA_DIR" --ckpt "training/checkpoints/spoof_lofo-$fam.pt" \
        --out "training/results/cm-lofo-$fam.json" > /dev/null
    done
    ;;
  spoof-oc)
    # approach comparison on the codec-LM fold: one-class softmax instead of BCE, same data and steps
    run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --arch lcnn-lfb64-oc --tag lofo-oc-codec-lm-tts \
      --init-onnx "$V2_SPOOF_ONNX" --lr 5e-4 --max-steps "${OC_STEPS:-250}" --rawboost-p 0.3 --exclude-families codec-lm-tts
    run -m training.voxkey_train.evaluate cm --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_lofo-oc-codec-lm-tts.pt \
      --out training/results/cm-lofo-oc-codec-lm-tts.json > /dev/null
    ;;
  spoof-oc-all)
    # the one-class softmax at v3's length on every family (v3's recipe with the one-class head; third session)
    run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --arch lcnn-lfb64-oc --tag oc-all-v3 \
      --init-onnx "$V2_SPOOF_ONNX" --lr 5e-4 --max-steps 1200 --stop-step 984 --rawboost-p 0.3
    run -m training.voxkey_train.evaluate cm --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_oc-all-v3.pt \
      --out training/results/cm-oc-all-v3.json > /dev/null
    ;;
  spoof-aug)
    # augmentation comparison on the codec-LM fold: the same BCE run without v3's added augmentation
    # (--rawboost-p 0 turns off both the RawBoost-style noise and the Common Voice band limit on spoofs;
    # reverberation, noise, telephone and low-pass stay, as in v2)
    run -m training.voxkey_train.train_spoof --data-dir "$DATA_DIR" --tag lofo-norawboost-codec-lm-tts \
      --init-onnx "$V2_SPOOF_ONNX" --lr 5e-4 --max-steps "${OC_STEPS:-250}" --rawboost-p 0 --exclude-families codec-lm-tts
    run -m training.voxkey_train.evaluate cm --data-dir "$DATA_DIR" --ckpt training/checkpoints/spoof_lofo-norawboost-codec-lm-tts.pt \
      --out training/results/cm-lofo-norawboost-codec-lm-tts.json > /dev/null
    ;;
  speaker-clip-full)
    # the sampling comparison's winner over a whole cosine cycle (the 400-1600-step runs were cut from a 3800-step one)
    run -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch ecapa256 --tag clip-full \
      --init-onnx "$V2_SPEAKER_ONNX" --lr 1e-3 --margin-ramp 200 --max-steps 2400 --sampling clip \
      --imprint-per-class 3 --imprint-crop-s 2 --save-at 1200,1800
    run -m training.voxkey_train.evaluate sv --data-dir "$DATA_DIR" --ckpt training/checkpoints/speaker_clip-full.pt \
      --out training/results/sv-clip-full-2400.json > /dev/null
    ;;
  speaker-cmp)
    # the sampling comparison: two candidates from the same warm start (v2 weights, head imprinted from
    # class means), the same seed, LR schedule (cosine over 3800 steps) and number of steps (CMP_STEPS):
    # classes drawn uniformly over clips vs p ~ sqrt(clips per speaker) (the shipped choice)
    for samp in clip spk-sqrt; do
      run -m training.voxkey_train.train_speaker --data-dir "$DATA_DIR" --arch ecapa256 --tag "cmp-$samp" \
        --init-onnx "$V2_SPEAKER_ONNX" --lr 1e-3 --margin-ramp 200 --max-steps 3800 --stop-step "$CMP_STEPS" \
        --sampling "$samp" --imprint-per-class 3 --imprint-crop-s 2
      run -m training.voxkey_train.evaluate sv --data-dir "$DATA_DIR" --ckpt "training/checkpoints/speaker_cmp-$samp.pt" \
        --out "training/results/sv-cmp-$samp-$CMP_STEPS.json" > /dev/null
    done
    ;;
esac
done
done
