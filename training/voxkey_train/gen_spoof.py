"""Generate extra spoofed training audio (train split only; festival is NOT used:
it is a held-out dev attack).

  * tts-espeak: espeak-ng, many languages / voice variants / pitch / rate
  * tts-flite : flite voices with duration and pitch settings
  * griffinlim: copy-synthesis of train bona fide speech from (linear or mel) magnitude spectrograms
  * lpc-vocoder: LPC analysis + pulse/noise excitation resynthesis (simple parametric vocoder)
  * replay    : simulated replay of train bona fide speech (loudspeaker band-pass, soft clipping,
                room reverb, re-recording noise)
Then ~60% of all spoof training clips (incl. the dataset's) are MP3 round-tripped (16-48 kbit/s;
commonvoice is 24 kbit/s). Output: $VOXKEY_WORK/spoofgen/{wave.npy,index.csv} (default training/work)
"""
from __future__ import annotations

import csv
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.linalg as sl
import scipy.signal as ss

from . import augment as A
from .audio_io import load_audio
from .mel import slaney_mel
from .data import MP3_BITRATES, Cache, WORK, ffmpeg_mp3_roundtrip, to_i16

OUT = os.path.join(WORK, "spoofgen")
SEED = 777

EN = """The quick brown fox jumps over the lazy dog near the river bank.
Please verify my identity, my voice is my password.
I would like to check the balance of my savings account.
My account number is four seven two nine one eight three six.
Could you transfer three hundred dollars to my sister tomorrow morning?
The meeting has been moved to half past two on Thursday afternoon.
She sells sea shells by the sea shore every summer.
It is a beautiful day to take a walk in the park with friends.
Hello, this is Michael calling about the delivery of my new phone.
Turn left at the second traffic light and then continue straight ahead.
The weather forecast predicts heavy rain and strong winds for the weekend.
I have never seen such a large crowd at a football match before.
Remember to buy milk, eggs, bread and a bag of oranges on the way home.
Yes, I confirm the payment of twenty five euros and forty cents.
The scientists discovered a new species of frog deep in the rainforest.
Reading books before going to sleep helps me relax after a long day.
Our flight to Barcelona departs at seven fifteen from gate twelve.
Please call me back as soon as possible, it is quite urgent.
The children played happily in the garden until the sun went down.
Grandmother baked an apple pie with cinnamon for the whole family.
Artificial intelligence is changing the way we work and communicate.
My date of birth is the twelfth of March nineteen eighty seven.
Can you hear me clearly now, or should I move closer to the microphone?
The museum is closed on Mondays but open late on Friday evenings.
We need to finish the report before the end of the quarter.
A stitch in time saves nine, as my father always used to say.
The old lighthouse stood alone on the rocky cliff above the sea.
I forgot my password again, can you help me reset it please?
Seven, three, nine, zero, five, one, eight, two, four, six.
Thank you for calling, your call is important to us.""".split("\n")

OTHER = {
    "de": ["Guten Morgen, ich möchte bitte meinen Kontostand abfragen.", "Das Wetter ist heute sehr schön und sonnig.",
           "Meine Stimme ist mein Passwort, bitte bestätigen Sie mich.", "Der Zug nach Berlin fährt um halb acht ab."],
    "es": ["Buenos días, quisiera consultar el saldo de mi cuenta.", "Mañana vamos a la playa con toda la familia.",
           "Mi voz es mi contraseña, por favor verifique mi identidad.", "El autobús llega a las nueve y cuarto."],
    "fr": ["Bonjour, je voudrais vérifier le solde de mon compte.", "Il fait très beau aujourd'hui dans le jardin.",
           "Ma voix est mon mot de passe, veuillez me vérifier.", "Le train pour Lyon part à huit heures."],
    "it": ["Buongiorno, vorrei controllare il saldo del mio conto.", "Oggi il cielo è sereno e fa molto caldo.",
           "La mia voce è la mia password.", "Ci vediamo domani sera davanti al cinema."],
    "pt": ["Bom dia, gostaria de verificar o saldo da minha conta.", "Hoje o dia está muito bonito e ensolarado.",
           "A minha voz é a minha senha, por favor confirme.", "O comboio para Lisboa parte às oito horas."],
    "pt-br": ["Olá, eu gostaria de falar com o gerente do banco.", "Vamos almoçar juntos no sábado que vem?"],
    "nl": ["Goedemorgen, ik wil graag mijn saldo controleren.", "Het regent vandaag de hele dag in Amsterdam."],
    "pl": ["Dzień dobry, chciałbym sprawdzić stan mojego konta.", "Jutro pojedziemy nad morze z całą rodziną."],
    "ru": ["Добрый день, я хотел бы проверить баланс моего счёта.", "Сегодня очень хорошая погода."],
    "tr": ["Günaydın, hesap bakiyemi öğrenmek istiyorum.", "Yarın akşam sinemaya gidelim mi?"],
    "sv": ["God morgon, jag vill kontrollera mitt saldo.", "Det regnar mycket i Stockholm idag."],
    "cs": ["Dobrý den, chtěl bych zkontrolovat zůstatek na účtu.", "Zítra pojedeme na výlet do hor."],
    "fi": ["Hyvää huomenta, haluaisin tarkistaa tilini saldon.", "Tänään sataa koko päivän."],
    "ca": ["Bon dia, voldria consultar el saldo del meu compte.", "Demà anirem a la platja."],
    "cy": ["Bore da, hoffwn wirio fy nghyfrif banc.", "Mae hi'n braf iawn heddiw."],
    "id": ["Selamat pagi, saya ingin memeriksa saldo rekening saya.", "Besok kita pergi ke pantai."],
    "eo": ["Bonan matenon, mi volas kontroli mian bankan konton.", "Hodiaŭ la vetero estas tre bela."],
    "hu": ["Jó reggelt, szeretném ellenőrizni a számlám egyenlegét.", "Holnap elmegyünk a tengerpartra."],
}
VARIANTS = ["", "+m1", "+m2", "+m3", "+m4", "+m5", "+m6", "+m7", "+f1", "+f2", "+f3", "+f4", "+f5", "+klatt",
            "+klatt2", "+klatt3", "+klatt4", "+croak", "+whisper", "+Alex", "+Andy", "+anika", "+belinda",
            "+boris", "+david", "+edward", "+iven", "+john", "+linda", "+max", "+michel", "+paul", "+steph"]


def read_wav_any(path):
    return load_audio(path)


def gen_espeak(rng, n, td):
    out = []
    langs = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc"]
    for k in range(n):
        if rng.random() < 0.55:
            lang = langs[rng.integers(len(langs))]
            text = " ".join(EN[j] for j in rng.choice(len(EN), int(rng.integers(1, 3)), replace=False))
        else:
            lang = list(OTHER)[rng.integers(len(OTHER))]
            text = " ".join(OTHER[lang][j] for j in rng.choice(len(OTHER[lang]), min(2, len(OTHER[lang])), replace=False))
        var = VARIANTS[rng.integers(len(VARIANTS))]
        p = os.path.join(td, "e.wav")
        cmd = ["espeak-ng", "-v", lang + var, "-s", str(int(rng.integers(120, 200))), "-p", str(int(rng.integers(20, 80))),
               "-a", str(int(rng.integers(60, 180))), "-g", str(int(rng.integers(0, 6))), "-w", p, text]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            continue
        out.append((read_wav_any(p), "tts-espeak", f"espeak-{lang}{var}"))
    return out


def gen_flite(rng, n, td):
    out = []
    voices = ["kal", "kal16", "awb", "rms", "slt"]
    for k in range(n):
        v = voices[rng.integers(len(voices))]
        text = " ".join(EN[j] for j in rng.choice(len(EN), int(rng.integers(1, 3)), replace=False))
        p = os.path.join(td, "f.wav")
        cmd = ["flite", "-voice", v, "--setf", f"duration_stretch={rng.uniform(0.8, 1.3):.2f}",
               "--setf", f"int_f0_target_mean={rng.uniform(80, 220):.0f}", "-t", text, "-o", p]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            continue
        out.append((read_wav_any(p), "tts-flite", f"flite-{v}"))
    return out


def griffinlim(x, rng):
    """Fast Griffin-Lim copy-synthesis of linear or mel magnitudes (weight-free, torch only: no torchaudio)."""
    import torch

    n_fft = int(rng.choice([512, 1024]))
    hop = n_fft // 4
    win = torch.hann_window(n_fft)
    X = torch.stft(torch.from_numpy(x), n_fft, hop, window=win, return_complex=True).abs()
    if rng.random() < 0.5:  # mel-domain bottleneck (like a mel vocoder)
        n_mels = int(rng.choice([40, 64, 80]))
        fb = torch.from_numpy(slaney_mel(16000, n_fft, n_mels, 0, 8000))  # [M, F]
        X = (torch.linalg.pinv(fb) @ (fb @ X)).clamp(min=0)
    n_iter, momentum = int(rng.integers(8, 40)), 0.99
    angles = torch.exp(2j * np.pi * torch.rand(X.shape, generator=torch.Generator().manual_seed(int(rng.integers(1 << 30)))))
    tprev = torch.zeros_like(angles)
    for _ in range(n_iter):  # fast Griffin-Lim (Perraudin et al.), as torchaudio.functional.griffinlim
        inv = torch.istft(X * angles, n_fft, hop, window=win, length=len(x))
        rebuilt = torch.stft(inv, n_fft, hop, window=win, return_complex=True)
        angles = rebuilt - (momentum / (1 + momentum)) * tprev
        angles = angles / (angles.abs() + 1e-16)
        tprev = rebuilt
    return torch.istft(X * angles, n_fft, hop, window=win, length=len(x)).numpy().astype(np.float32)


def lpc_vocoder(x, rng, order=18, flen=400, hop=160):
    """Frame-wise LPC + autocorrelation f0 -> pulse train / noise excitation -> overlap-add."""
    x = x.astype(np.float64)
    xp = np.append(x[0], x[1:] - 0.97 * x[:-1])
    win = np.hanning(flen)
    nfr = max(1, 1 + (len(x) - flen) // hop)
    y = np.zeros(len(x) + flen)
    phase = 0.0
    f0_shift = rng.uniform(0.85, 1.2)
    jitter = rng.uniform(0, 0.02)
    for i in range(nfr):
        fr = xp[i * hop: i * hop + flen] * win
        if len(fr) < flen:
            break
        r = np.correlate(fr, fr, "full")[flen - 1:]
        if r[0] < 1e-8:
            continue
        try:
            a = sl.solve_toeplitz(r[:order], -r[1: order + 1])
        except Exception:
            continue
        g = np.sqrt(max(r[0] + np.dot(a, r[1: order + 1]), 1e-12) / flen)
        lo, hi = 16000 // 400, 16000 // 60
        rr = r[lo:hi] / r[0]
        k = int(np.argmax(rr))
        voiced = rr[k] > 0.35
        if voiced:
            period = (lo + k) / f0_shift * (1 + jitter * rng.standard_normal())
            exc = np.zeros(flen)
            t = phase
            while t < flen:
                exc[int(t)] = np.sqrt(period)
                t += period
            phase = t - hop
            if phase < 0:
                phase = 0
        else:
            exc = rng.standard_normal(flen)
            phase = 0
        s = ss.lfilter([g], np.concatenate([[1.0], a]), exc) * win
        y[i * hop: i * hop + flen] += s
    y = y[: len(x)]
    y = ss.lfilter([1.0], [1.0, -0.97], y)
    y = y / (np.abs(y).max() + 1e-9) * min(0.9, np.abs(x).max() + 0.05)
    return y.astype(np.float32)


def replay(x, rng):
    lo, hi = rng.uniform(120, 400), rng.uniform(4500, 7800)
    y = ss.sosfilt(ss.butter(4, [lo, hi], "bandpass", fs=16000, output="sos"), x)
    # loudspeaker resonance
    f = rng.uniform(600, 3000)
    b, a = ss.iirpeak(f, rng.uniform(1, 4), fs=16000)
    y = y + rng.uniform(0.2, 0.8) * ss.lfilter(b, a, y)
    drive = rng.uniform(1.5, 6)
    y = np.tanh(drive * y / (np.abs(y).max() + 1e-9)) / np.tanh(drive)
    y = A.reverb(y.astype(np.float32), rng, rt60=rng.uniform(0.2, 0.7))
    y = A.add_noise(y, A.coloured_noise(len(y), rng), rng.uniform(15, 35))
    return y.astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(SEED)
    cache = Cache()
    t0 = time.time()
    clips = []  # (wave, attack, voice, src)
    with tempfile.TemporaryDirectory() as td:
        for w, att, v in gen_espeak(rng, 420, td):
            clips.append((w, att, v, "generated"))
        print("espeak", len(clips), f"{time.time()-t0:.0f}s", flush=True)
        for w, att, v in gen_flite(rng, 220, td):
            clips.append((w, att, v, "generated"))
        print("flite", len(clips), f"{time.time()-t0:.0f}s", flush=True)
    bona = [i for i, r in enumerate(cache.rows) if r["kind"] == "bonafide" and r["split"] == "train"]
    # source for copy-synthesis: mix of corpora (non-commonvoice over-represented)
    ncv = [i for i in bona if cache.rows[i]["corpus"] != "commonvoice"]
    cv = [i for i in bona if cache.rows[i]["corpus"] == "commonvoice"]
    def pick(k):
        a = list(rng.choice(ncv, k // 2, replace=False)) + list(rng.choice(cv, k - k // 2, replace=False))
        return a
    for i in pick(360):
        x = cache.wav(i)[: 16000 * 8]
        clips.append((griffinlim(x, rng), "griffinlim", cache.rows[i]["speaker"], cache.rows[i]["path"]))
    print("gl", len(clips), f"{time.time()-t0:.0f}s", flush=True)
    for i in pick(260):
        x = cache.wav(i)[: 16000 * 8]
        clips.append((lpc_vocoder(x, rng), "lpc-vocoder", cache.rows[i]["speaker"], cache.rows[i]["path"]))
    print("lpc", len(clips), f"{time.time()-t0:.0f}s", flush=True)
    for i in pick(160):
        x = cache.wav(i)[: 16000 * 8]
        clips.append((replay(x, rng), "replay", cache.rows[i]["speaker"], cache.rows[i]["path"]))
    print("replay", len(clips), f"{time.time()-t0:.0f}s", flush=True)
    # dataset's own train spoofs
    for i, r in enumerate(cache.rows):
        if r["kind"] == "spoof" and r["split"] == "train":
            clips.append((cache.wav(i), "dataset:" + r["attack"], r["speaker"], r["path"]))
    waves, rows, off = [], [], 0
    for k, (w, att, v, src) in enumerate(clips):
        w = w / (np.abs(w).max() + 1e-9) * rng.uniform(0.3, 0.95)
        mp3 = rng.random() < 0.6
        if mp3:
            w = ffmpeg_mp3_roundtrip(w, str(rng.choice(MP3_BITRATES)))
        wi = to_i16(w)
        waves.append(wi)
        rows.append({"off": off, "len": len(wi), "attack": att, "voice": v, "src": src, "mp3": int(mp3)})
        off += len(wi)
    np.save(os.path.join(OUT, "wave.npy"), np.concatenate(waves))
    with open(os.path.join(OUT, "index.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader(); wr.writerows(rows)
    print("done", len(rows), f"{time.time()-t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
