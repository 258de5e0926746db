"""Voxkey model-training recipe (speaker embedding + spoof countermeasure)."""
