"""Spoof attack families: groups of the dataset's attack labels (and of gen_spoof.py's generated
attacks) used for family-balanced sampling in train_spoof.py and for leave-one-family-out (LOFO)
evaluation. The dev-only held-out attacks (festival, seed-tts, yourtts-vc) are listed so that every
attack of the manifest has a family; they never occur in training."""
from __future__ import annotations

import json
from pathlib import Path

# The families live in families.json, which the engine's eval reads too (packages/engine/src/tools/families-data.ts
# is generated from it): edit them there.
FAMILIES: dict[str, list[str]] = {
    name: family["attacks"]
    for name, family in json.loads(Path(__file__).with_name("families.json").read_text(encoding="utf-8"))["families"].items()
}
FAMILY_OF = {a: f for f, atts in FAMILIES.items() for a in atts}
LOFO_FOLDS = ("vc-any", "neural-vocoder", "codec-lm-tts")
# v4 leave-one-family-out: a fold leaves out the named family AND the generated families that make the same kind
# of attack (so that e.g. the neural-vocoder fold never sees HiFi-GAN or LPCNet output, which its dev attacks
# include): the held-out family is unseen in every form.
LOFO_GROUPS = {
    "neural-vocoder": ("neural-vocoder", "gen:hifigan", "gen:lpcnet"),
    "classic-tts": ("classic-tts", "gen:world", "gen:piper"),
    "rule-tts": ("rule-tts", "gen:tts"),
    "gen:hifigan": ("gen:hifigan", "neural-vocoder"),
    "gen:world": ("gen:world", "classic-tts"),
    "gen:tts": ("gen:tts", "rule-tts"),
}


def lofo_excluded(fold: str) -> tuple:
    return LOFO_GROUPS.get(fold, (fold,))


def family_of(attack: str) -> str:
    a = attack.split(":", 1)[1] if attack.startswith("dataset:") else attack
    return FAMILY_OF.get(a, "other")


# Leave-one-corpus-out for real speech (issue 30): a fold per corpus with at least this many real clips in the data
# set, and one for the smaller corpora (mostly TTS demo pages' reference recordings) pooled.
LOCO_MIN_CLIPS = 100
SMALL_CORPORA_FOLD = "demo-pages (pooled)"


def loco_folds(rows: list[dict]) -> dict[str, set[str]]:
    """{fold: the corpora it leaves out} from the data set's manifest rows (`kind`, `corpus`; lossless twins,
    when a row marks one with `lossless_of`, do not count)."""
    counts: dict[str, int] = {}
    for r in rows:
        if r["kind"] == "bonafide" and not r.get("lossless_of"):
            counts[r["corpus"]] = counts.get(r["corpus"], 0) + 1
    folds = {c: {c} for c, n in sorted(counts.items()) if n >= LOCO_MIN_CLIPS}
    folds[SMALL_CORPORA_FOLD] = {c for c, n in counts.items() if n < LOCO_MIN_CLIPS}
    return folds


def real_corpora_named(names: str, rows: list[dict]) -> set[str]:
    """Comma-separated corpora of real speech ('small': those of the SMALL_CORPORA_FOLD) as a set; ValueError naming
    any that has no real clip in `rows`."""
    corpora = {x for x in names.split(",") if x}
    if "small" in corpora:
        corpora = (corpora - {"small"}) | loco_folds(rows)[SMALL_CORPORA_FOLD]
    if unknown := corpora - {r["corpus"] for r in rows if r["kind"] == "bonafide"}:
        raise ValueError(f"no real clips of {', '.join(sorted(unknown))}")
    return corpora
