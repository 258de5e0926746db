"""Audio I/O without torchaudio (torchaudio does not work with the venv's torch 2.13): decoding and
codec round trips through the ffmpeg CLI, resampling with scipy's polyphase filter."""
from __future__ import annotations

import io
import os
import subprocess
import tempfile
import wave
from math import gcd

import numpy as np
import scipy.signal as ss

SR = 16000


def resample(x: np.ndarray, sr_in: int, sr_out: int = SR) -> np.ndarray:
    if sr_in == sr_out:
        return np.asarray(x, np.float32)
    g = gcd(int(sr_in), int(sr_out))
    return ss.resample_poly(np.asarray(x, np.float64), sr_out // g, sr_in // g).astype(np.float32)


def load_audio(path: str, sr: int = SR) -> np.ndarray:
    """Audio file -> mono float32 at sr. libsndfile (soundfile; MP3 via mpg123, in-process, ~100x faster than
    a process per file) when it reads the file at sr, else the ffmpeg CLI (its resampler, channels averaged)."""
    try:
        import soundfile as sf

        y, file_sr = sf.read(path, dtype="float32", always_2d=True)
        if file_sr == sr:
            return np.ascontiguousarray(y.mean(1), dtype=np.float32)
    except Exception:
        pass
    out = subprocess.run(["ffmpeg", "-v", "quiet", "-nostdin", "-i", path, "-f", "s16le", "-ac", "1", "-ar", str(sr), "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(out, dtype=np.int16).astype(np.float32) / 32768.0


def to_i16(x):
    return np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype(np.int16)


def wav_bytes(x: np.ndarray, sr: int = SR) -> bytes:
    b = io.BytesIO()
    with wave.open(b, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(sr)
        w.writeframes(to_i16(x).tobytes())
    return b.getvalue()


def save_wav(path: str, x: np.ndarray, sr: int = SR):
    with open(path, "wb") as f:
        f.write(wav_bytes(x, sr))


def read_wav(path: str):
    """16-bit PCM WAV -> (float32 mono, sr)."""
    with wave.open(path, "rb") as w:
        sr, ch, n = w.getframerate(), w.getnchannels(), w.getnframes()
        y = np.frombuffer(w.readframes(n), dtype=np.int16).astype(np.float32) / 32768.0
    if ch > 1:
        y = y.reshape(-1, ch).mean(1)
    return y, sr


def ffmpeg_roundtrip(x: np.ndarray, enc_args: list, ext: str, sr: int = SR, enc_sr: int | None = None) -> np.ndarray:
    """16 kHz float -> encoded file (ffmpeg with enc_args, e.g. ["-c:a", "libopus", "-b:a", "12k"]) ->
    16 kHz float of the same length. enc_sr: sample rate the encoder is fed (8000 for GSM/codec2)."""
    with tempfile.TemporaryDirectory() as td:
        src, enc = os.path.join(td, "a.wav"), os.path.join(td, "b." + ext)
        save_wav(src, x, sr)
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src]
        if enc_sr:
            cmd += ["-ar", str(enc_sr)]
        subprocess.run(cmd + ["-ac", "1"] + enc_args + [enc], check=True, capture_output=True)
        out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", enc, "-f", "s16le", "-ac", "1", "-ar", str(sr), "-"],
                             check=True, capture_output=True).stdout
    y = np.frombuffer(out, dtype=np.int16).astype(np.float32) / 32768.0
    if len(y) >= len(x):
        return y[: len(x)]
    return np.pad(y, (0, len(x) - len(y)))


def write_mp3(x: np.ndarray, path, bitrate: str) -> None:
    """16 kHz float in [-1, 1] -> an MP3 file (LAME, CBR, 16 kHz mono), as the data set's clips are stored."""
    pcm = (np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "s16le", "-ar", str(SR), "-ac", "1", "-i", "-",
                    "-c:a", "libmp3lame", "-b:a", bitrate, "-ar", str(SR), "-ac", "1", str(path)], input=pcm, check=True)


def ffmpeg_mp3_roundtrip(x: np.ndarray, bitrate="24k", tmpdir=None) -> np.ndarray:
    """16 kHz float -> MP3 (LAME, CBR) -> 16 kHz float (length as ffmpeg decodes it)."""
    try:
        import soundfile as sf

        with tempfile.TemporaryDirectory(dir=tmpdir) as td:
            mp3 = os.path.join(td, "a.mp3")  # a file, not a pipe: ffmpeg then writes the LAME delay/padding header
            subprocess.run(["ffmpeg", "-v", "quiet", "-nostdin", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "-",
                            "-c:a", "libmp3lame", "-b:a", bitrate, mp3], input=to_i16(x).tobytes(), check=True)
            y, sr = sf.read(mp3, dtype="float32")
        if sr == 16000:
            return np.ascontiguousarray(y, dtype=np.float32)
    except ImportError:
        pass
    with tempfile.TemporaryDirectory(dir=tmpdir) as td:
        src, mp3 = os.path.join(td, "a.wav"), os.path.join(td, "a.mp3")
        save_wav(src, x)
        subprocess.run(["ffmpeg", "-v", "quiet", "-nostdin", "-y", "-i", src, "-c:a", "libmp3lame", "-b:a", bitrate, mp3], check=True)
        out = subprocess.run(["ffmpeg", "-v", "quiet", "-nostdin", "-i", mp3, "-f", "s16le", "-ac", "1", "-ar", "16000", "-"],
                             check=True, capture_output=True).stdout
    return np.frombuffer(out, dtype=np.int16).astype(np.float32) / 32768.0
