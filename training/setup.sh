#!/bin/sh
# Debian packages needed by the Voxkey training recipe (run as root).
set -e
apt-get update
apt-get install -y python3-torch python3-torchaudio python3-onnx python3-numpy python3-scipy \
  espeak-ng flite sox ffmpeg
# Note: festival is deliberately NOT installed/used for training: it is a held-out (dev-only) attack.
