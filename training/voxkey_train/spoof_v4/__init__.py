"""Deepfake detection v4 (issue 25): the generation stage (gen.py), the engine-style evaluation (evaluate.py), the
export and proposed manifest entry (export.py), the report tables (report.py); `python -m
training.voxkey_train.spoof_v4 <stage> ...` runs the recipe (__main__.py).

v4's work files are kept apart from the v3 recipe's (its data cache has no MP3 round trips): VOXKEY_WORK defaults
to training/work/v4 for everything under this package. Set before any module reads it (data.py)."""
import os

os.environ.setdefault("VOXKEY_WORK", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                                  "work", "v4"))
