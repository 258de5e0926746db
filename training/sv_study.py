#!/usr/bin/env python3
"""Moved to voxkey_train/sv_study.py: `python -m training.voxkey_train.sv_study` from the repository root.

This wrapper stays because packages/engine and models/manifest.json name training/sv_study.py."""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
runpy.run_module("voxkey_train.sv_study", run_name="__main__", alter_sys=True)
