# Shared by train_speaker.sh and train_spoof.sh (sourced, not run).
# two_stage_training KIND MODULE EVAL_KIND "STAGE_A_EXPORT_ARGS" STAGE_B_ARGS...
#   KIND: speaker | spoof (checkpoint prefix and export kind); MODULE: training.voxkey_train.<MODULE>;
#   EVAL_KIND: sv | cm. Needs PY, DATA_DIR, ARCH, MAX_STEPS, CONT_STEPS, V2_STEPS, INIT_ONNX, NAME.
# Stage A: main cosine cycle + continuation from its checkpoint, exported to training/work/stage-a/
#   (skipped when INIT_ONNX exists). Stage B: warm restart from INIT_ONNX, export to models/ + ONNX eval.
two_stage_training() {
  local kind=$1 module=$2 eval_kind=$3 export_a_args=$4
  shift 4
  local ckpt
  if [ ! -f "$INIT_ONNX" ]; then
    $PY -m "training.voxkey_train.$module" --data-dir "$DATA_DIR" --arch "$ARCH" --max-steps "$MAX_STEPS"
    ckpt="training/checkpoints/${kind}_$ARCH.pt"
    if [ "$CONT_STEPS" != 0 ]; then
      [ -f "training/checkpoints/${kind}_$ARCH-c2.pt" ] || cp "$ckpt" "training/checkpoints/${kind}_$ARCH-c2.pt"
      $PY -m "training.voxkey_train.$module" --data-dir "$DATA_DIR" --arch "$ARCH" --tag "$ARCH-c2" --max-steps "$CONT_STEPS"
      ckpt="training/checkpoints/${kind}_$ARCH-c2.pt"
    fi
    # shellcheck disable=SC2086
    $PY -m training.voxkey_train.export "$kind" --data-dir "$DATA_DIR" --ckpt "$ckpt" --name "$(basename "$INIT_ONNX" .onnx)" \
      --out-dir "$(dirname "$INIT_ONNX")" --results-dir "$(dirname "$INIT_ONNX")" --no-manifest $export_a_args
  fi
  $PY -m "training.voxkey_train.$module" --data-dir "$DATA_DIR" --arch "$ARCH" --tag "$ARCH-v2" --init-onnx "$INIT_ONNX" \
    --max-steps "$V2_STEPS" "$@"
  ckpt="training/checkpoints/${kind}_$ARCH-v2.pt"
  $PY -m training.voxkey_train.export "$kind" --data-dir "$DATA_DIR" --ckpt "$ckpt" --name "$NAME"
  $PY -m training.voxkey_train.evaluate "$eval_kind" --data-dir "$DATA_DIR" --onnx "models/$NAME.onnx" \
    --out "training/results/$eval_kind-$NAME-onnx.json" > /dev/null
}

# v3: warm restart from the v2 ONNX file (from git history; without it, stages A and B rebuild v2
# first, exported to models/ under the v2 name and moved to training/work/).
# v3_training KIND MODULE EVAL_KIND V2_NAME TAG V3_ARGS...   Needs PY, DATA_DIR, V3_NAME.
v3_training() {
  local kind=$1 module=$2 eval_kind=$3 v2_name=$4 tag=$5
  shift 5
  local v2="training/work/$v2_name.onnx"
  [ -s "$v2" ] || git show "e861fd7:models/$v2_name.onnx" > "$v2" 2>/dev/null || rm -f "$v2"
  if [ ! -s "$v2" ]; then
    NAME=$v2_name two_stage_training "$kind" "$module" "$eval_kind" "${STAGE_A_EXPORT_ARGS:-}" ${V2_ARGS:-}
    mv "models/$v2_name.onnx" "$v2"
  fi
  nice -n 10 $PY -m "training.voxkey_train.$module" --data-dir "$DATA_DIR" --tag "$tag" --init-onnx "$v2" "$@"
  $PY -m training.voxkey_train.export "$kind" --data-dir "$DATA_DIR" --ckpt "training/checkpoints/${kind}_$tag.pt" \
    --name "$V3_NAME" ${V3_EXPORT_ARGS:-}
  $PY -m training.voxkey_train.evaluate "$eval_kind" --data-dir "$DATA_DIR" --onnx "models/$V3_NAME.onnx" \
    --out "training/results/$eval_kind-$V3_NAME-onnx.json" > /dev/null
}
