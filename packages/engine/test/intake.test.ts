import { describe, expect, it } from 'vitest';
import { decodeBase64Audio } from '../src/audio/base64.js';
import { EngineError } from '../src/errors.js';
import { decodeAudio, inspectBytes } from '../src/audio/intake.js';
import { decodeMp3 } from '../src/audio/mp3.js';
import { scanMp3 } from '../src/audio/mp3-frames.js';
import { resample } from '../src/audio/resample.js';
import { sniffFormat } from '../src/audio/sniff.js';
import { decodeWav, encodeWav, parseWavHeader } from '../src/audio/wav.js';
import { audioBase64, audioBytes, b64, sine } from './helpers.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof EngineError) return e.code;
    throw e;
  }
  return undefined;
}

async function codeAsync(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    if (e instanceof EngineError) return e.code;
    throw e;
  }
  return undefined;
}

function interleave(mono: Float32Array, channels: number): Float32Array {
  const out = new Float32Array(mono.length * channels);
  for (let i = 0; i < mono.length; i++)
    for (let c = 0; c < channels; c++) out[i * channels + c] = mono[i]!;
  return out;
}

describe('base64', () => {
  it('decodes standard, URL-safe, unpadded, data-URI and wrapped base64', () => {
    const bytes = new Uint8Array([0xfb, 0xff, 0xbf, 1, 2]);
    const std = Buffer.from(bytes).toString('base64');
    for (const s of [
      std,
      std.replace(/=+$/, ''),
      Buffer.from(bytes).toString('base64url'),
      `data:audio/wav;base64,${std}`,
      std.slice(0, 4) + '\n' + std.slice(4),
    ]) {
      expect(Array.from(decodeBase64Audio(s))).toEqual(Array.from(bytes));
    }
  });
  it('rejects invalid base64 with invalid_base64', () => {
    for (const s of ['', 'abc$', 'a', 'ab=c', '====', 'abcd=', '%%%'])
      expect(
        code(() => decodeBase64Audio(s)),
        s,
      ).toBe('invalid_base64');
    expect(code(() => decodeBase64Audio(42 as unknown as string))).toBe('invalid_base64');
  });
  it('rejects oversize input before decoding it', () => {
    expect(code(() => decodeBase64Audio('A'.repeat(20_000), 1000))).toBe('audio_too_large');
  });
  it('gives the same bytes on its fast path (canonical base64) as on the strict one, for every length and padding', () => {
    for (let length = 1; length <= 66; length++) {
      const bytes = new Uint8Array(Array.from({ length }, (_, i) => (i * 97 + length * 31) & 255));
      const std = Buffer.from(bytes).toString('base64');
      // the wrapped form takes the strict path (whitespace); every form must decode alike
      for (const s of [std, std.replace(/=+$/, ''), `${std.slice(0, 3)}\n${std.slice(3)}`])
        expect(Array.from(decodeBase64Audio(s)), s).toEqual(Array.from(bytes));
    }
    // non-canonical trailing bits ("QR" is "A" too): not the fast path's, accepted by the strict one as before
    expect(Array.from(decodeBase64Audio('QR'))).toEqual([0x41]);
    expect(code(() => decodeBase64Audio('QQ='))).toBe('invalid_base64');
    expect(code(() => decodeBase64Audio('QQ==', 0))).toBe('audio_too_large');
  });
});

describe('format sniffing', () => {
  it('detects WAV and MP3 from the bytes', () => {
    expect(sniffFormat(audioBytes('alice_1.wav'))).toBe('wav');
    expect(sniffFormat(audioBytes('alice_1_44k_stereo.mp3'))).toBe('mp3');
  });
  it('names common unsupported containers', () => {
    const pad = (s: string | number[]) =>
      new Uint8Array([...(typeof s === 'string' ? Buffer.from(s) : s), ...new Uint8Array(64)]);
    for (const head of [
      'fLaC',
      'OggS',
      '\0\0\0\x20ftypM4A ',
      'FORM\0\0\0\0AIFF',
      [0x1a, 0x45, 0xdf, 0xa3],
      'RIFX\0\0\0\0WAVE',
      'hello world, plain text',
    ]) {
      expect(
        code(() => sniffFormat(pad(head))),
        String(head),
      ).toBe('unsupported_format');
    }
    expect(code(() => sniffFormat(new Uint8Array(5)))).toBe('corrupt_audio');
  });
});

describe('WAV decoding', () => {
  const tone = sine(0.5, 16000, 440, 0.5);
  for (const bits of [8, 16, 24, 32] as const) {
    it(`decodes ${bits}-bit PCM`, () => {
      const d = decodeWav(encodeWav(tone, 16000, { bitsPerSample: bits }));
      const tol = bits === 8 ? 1 / 100 : 1e-4;
      expect(d.samples.length).toBe(tone.length);
      for (let i = 0; i < tone.length; i += 97)
        expect(Math.abs(d.samples[i]! - tone[i]!)).toBeLessThan(tol);
    });
  }
  it('decodes 32-bit float and WAVE_FORMAT_EXTENSIBLE', () => {
    for (const wav of [
      encodeWav(tone, 16000, { float: true }),
      encodeWav(tone, 16000, { float: true, extensible: true }),
      encodeWav(tone, 16000, { bitsPerSample: 24, extensible: true }),
    ]) {
      const d = decodeWav(wav);
      for (let i = 0; i < tone.length; i += 97)
        expect(Math.abs(d.samples[i]! - tone[i]!)).toBeLessThan(1e-4);
    }
  });
  it('downmixes multi-channel audio by averaging', () => {
    const stereo = new Float32Array(2000);
    for (let i = 0; i < 1000; i++) {
      stereo[2 * i] = 0.5;
      stereo[2 * i + 1] = -0.1;
    }
    const d = decodeWav(encodeWav(stereo, 16000, { channels: 2 }));
    expect(d.channels).toBe(2);
    expect(d.samples.length).toBe(1000);
    expect(d.samples[10]).toBeCloseTo(0.2, 3);
    const six = decodeWav(
      encodeWav(interleave(tone, 6), 48000, { channels: 6, bitsPerSample: 24, extensible: true }),
    );
    expect(six.samples.length).toBe(tone.length);
  });
  it('skips unknown chunks and clamps a data size larger than the file', () => {
    const wav = encodeWav(tone, 16000);
    const withList = new Uint8Array(wav.length + 14);
    withList.set(wav.subarray(0, 36));
    withList.set([...Buffer.from('LIST'), 5, 0, 0, 0, 1, 2, 3, 4, 5, 0], 36);
    withList.set(wav.subarray(36), 50);
    expect(decodeWav(withList).samples.length).toBe(tone.length);
    expect(decodeWav(withList.subarray(0, withList.length - 4)).samples.length).toBe(
      tone.length - 2,
    ); // declared size > file
    const h = parseWavHeader(wav.subarray(0, 1044));
    expect(h.frames).toBe(500);
  });
  it('accepts a data chunk placed before the fmt chunk', () => {
    const wav = encodeWav(tone, 16000);
    const fmt = wav.subarray(12, 36);
    const data = wav.subarray(36);
    const swapped = new Uint8Array(wav.length);
    swapped.set(wav.subarray(0, 12));
    swapped.set(data, 12);
    swapped.set(fmt, 12 + data.length);
    expect(decodeWav(swapped).samples.length).toBe(tone.length);
  });
  it('rejects unsupported encodings and hostile headers with typed errors', () => {
    const wav = encodeWav(tone, 16000);
    const patched = (o: number, v: number, size: 2 | 4) => {
      const c = wav.slice();
      const dv = new DataView(c.buffer);
      if (size === 2) dv.setUint16(o, v, true);
      else dv.setUint32(o, v, true);
      return c;
    };
    expect(code(() => decodeWav(patched(20, 2, 2)))).toBe('unsupported_format'); // ADPCM
    expect(code(() => decodeWav(patched(34, 12, 2)))).toBe('unsupported_format'); // 12-bit
    expect(code(() => decodeWav(patched(22, 0, 2)))).toBe('corrupt_audio'); // zero channels
    expect(code(() => decodeWav(patched(22, 300, 2)))).toBe('unsupported_format'); // 300 channels
    expect(code(() => decodeWav(patched(24, 0, 4)))).toBe('corrupt_audio'); // zero sample rate
    expect(code(() => decodeWav(patched(16, 0xfffffff0, 4)))).toBe('corrupt_audio'); // fmt chunk size beyond EOF
    expect(code(() => decodeWav(wav.subarray(0, 44)))).toBe('corrupt_audio'); // no samples
    expect(code(() => decodeWav(wav.subarray(0, 30)))).toBe('corrupt_audio');
  });
  it('rejects NaN and infinite float samples as corrupt_audio', () => {
    const bad = tone.slice();
    bad[100] = NaN;
    bad[200] = Infinity;
    expect(code(() => decodeWav(encodeWav(bad, 16000, { float: true })))).toBe('corrupt_audio');
  });
});

describe('MP3 decoding', () => {
  it('scans frame headers for rate, channels and duration without decoding', () => {
    const s = scanMp3(audioBytes('alice_1_44k_stereo.mp3'))!;
    expect(s.sampleRate).toBe(44100);
    expect(s.channels).toBe(2);
    expect(s.durationSeconds).toBeGreaterThan(8.6);
    expect(s.durationSeconds).toBeLessThan(8.8);
  });
  it('decodes to mono at the source rate', async () => {
    const d = await decodeMp3(audioBytes('alice_1_44k_stereo.mp3'));
    expect(d.sampleRate).toBe(44100);
    expect(d.samples.length / 44100).toBeGreaterThan(8.6);
    expect(d.samples.every(Number.isFinite)).toBe(true);
  });
  it('stops decoding at maxFrames', async () => {
    const d = await decodeMp3(audioBytes('alice_1_44k_stereo.mp3'), 44100);
    expect(d.samples.length).toBe(44100);
  });
});

describe('resampling', () => {
  it('resamples 48 kHz to 16 kHz keeping a 1 kHz tone and removing a 12 kHz one', async () => {
    const pass = await resample(sine(1, 48000, 1000, 0.5), 48000, 16000);
    const stop = await resample(sine(1, 48000, 12000, 0.5), 48000, 16000);
    expect(Math.abs(pass.length - 16000)).toBeLessThanOrEqual(2);
    const rms = (x: Float32Array) =>
      Math.sqrt(x.subarray(1000, 15000).reduce((a, v) => a + v * v, 0) / 14000);
    expect(rms(pass)).toBeGreaterThan(0.33);
    expect(rms(stop)).toBeLessThan(0.005); // aliasing would fold 12 kHz to 4 kHz at full level
  });
  it('returns 16 kHz input unchanged', async () => {
    const x = sine(0.1);
    expect(await resample(x, 16000, 16000)).toBe(x);
  });
});

describe('inspectBytes and decodeAudio', () => {
  it('inspects WAV and MP3 cheaply', () => {
    expect(inspectBytes(decodeBase64Audio(audioBase64('alice_1.wav')))).toMatchObject({
      format: 'wav',
      sampleRate: 16000,
      channels: 1,
    });
    expect(inspectBytes(decodeBase64Audio(audioBase64('alice_1_44k_stereo.mp3')))).toMatchObject({
      format: 'mp3',
      sampleRate: 44100,
      channels: 2,
    });
  });
  it('rejects rates below 16 kHz, too short and too long audio', () => {
    expect(code(() => inspectBytes(decodeBase64Audio(b64(encodeWav(sine(4, 8000), 8000)))))).toBe(
      'sample_rate_too_low',
    );
    expect(code(() => inspectBytes(decodeBase64Audio(b64(encodeWav(sine(2.5), 16000)))))).toBe(
      'audio_too_short',
    );
    expect(code(() => inspectBytes(decodeBase64Audio(b64(encodeWav(sine(61), 16000)))))).toBe(
      'audio_too_long',
    );
    expect(code(() => inspectBytes(new Uint8Array(11 * 1024 * 1024)))).toBe('audio_too_large');
  });
  it('decodes 44.1 kHz 24-bit stereo WAV to 16 kHz mono', async () => {
    const r = await decodeAudio(
      encodeWav(interleave(sine(4, 44100, 300, 0.4), 2), 44100, { channels: 2, bitsPerSample: 24 }),
    );
    expect(Math.abs(r.samples.length - 64000)).toBeLessThanOrEqual(2);
    expect(r.info).toMatchObject({ format: 'wav', channels: 2, sampleRate: 44100 });
  });
  it('decodes MP3 to 16 kHz mono', async () => {
    const r = await decodeAudio(audioBytes('alice_1_44k_stereo.mp3'));
    expect(r.samples.length / 16000).toBeGreaterThan(8.6);
    expect(r.info.format).toBe('mp3');
  });
  it('rejects a corrupt MP3 body', async () => {
    const mp3 = audioBytes('alice_1_44k_stereo.mp3');
    const first = mp3.indexOf(0xff);
    expect(await codeAsync(decodeAudio(mp3.subarray(0, first + 800)))).toBe('audio_too_short');
  });
});
