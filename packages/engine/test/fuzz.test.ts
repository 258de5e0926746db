import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.js';
import { decodeAudio, inspectBytes } from '../src/audio/intake.js';
import { encodeWav } from '../src/audio/wav.js';
import { audioBytes, rng, sine } from './helpers.js';

/** Every outcome must be a decoded recording or an EngineError: never another exception or a hang. */
async function survive(bytes: Uint8Array): Promise<string> {
  try {
    const r = await decodeAudio(bytes);
    expect(r.samples.every(Number.isFinite)).toBe(true);
    expect(r.samples.length).toBeLessThanOrEqual(61 * 16000);
    return 'ok';
  } catch (e) {
    if (!(e instanceof EngineError)) throw new Error(`non-engine error: ${(e as Error).stack}`);
    return e.code;
  }
}

const wav = encodeWav(sine(3.5, 16000, 300, 0.3), 16000);
const mp3 = audioBytes('alice_1_44k_stereo.mp3');

describe('decoder fuzzing (truncated, random and hostile files)', () => {
  it('random bytes, with and without WAV/MP3/ID3 magic', async () => {
    const r = rng(1);
    const prefixes = [
      [],
      [...Buffer.from('RIFF\xff\xff\xff\xffWAVE', 'latin1')],
      [0xff, 0xfb, 0x90, 0x64],
      [...Buffer.from('ID3'), 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f],
    ];
    for (let i = 0; i < 120; i++) {
      const n = Math.floor(r() * 20000) + 1;
      const buf = new Uint8Array(n).map(() => Math.floor(r() * 256));
      buf.set(prefixes[i % prefixes.length]!.slice(0, n));
      await survive(buf);
    }
  });

  it('truncated WAV and MP3 at many offsets', async () => {
    for (let n = 0; n < 200; n += 7) await survive(wav.subarray(0, n));
    for (let n = 0; n < mp3.length; n += Math.floor(mp3.length / 20))
      await survive(mp3.subarray(0, n));
  });

  it('bit-flipped WAV and MP3', async () => {
    const r = rng(2);
    for (const src of [wav, mp3]) {
      for (let i = 0; i < 15; i++) {
        const c = src.slice();
        for (let k = 0; k < 20; k++)
          c[Math.floor(r() * Math.min(c.length, 2000))]! ^= 1 << Math.floor(r() * 8);
        await survive(c);
      }
    }
  });

  it('hostile WAV headers: huge declared sizes, zero channels, zero-size chunks, NaN floats', async () => {
    const set32 = (b: Uint8Array, o: number, v: number) =>
      new DataView(b.buffer, b.byteOffset).setUint32(o, v, true);
    const set16 = (b: Uint8Array, o: number, v: number) =>
      new DataView(b.buffer, b.byteOffset).setUint16(o, v, true);
    const cases: Uint8Array[] = [];
    let c = wav.slice();
    set32(c, 40, 0xffffffff); // data size 4 GB
    cases.push(c);
    c = wav.slice();
    set32(c, 4, 0xffffffff);
    set32(c, 16, 0xffffff00); // fmt size huge
    cases.push(c);
    c = wav.slice();
    set16(c, 22, 0);
    cases.push(c);
    c = wav.slice();
    set32(c, 24, 0xffffffff); // 4 GHz sample rate
    cases.push(c);
    c = wav.slice();
    set16(c, 32, 0); // block align 0
    set16(c, 34, 0); // 0 bits
    cases.push(c);
    // a chain of zero-size chunks before data
    const zeros = new Uint8Array(wav.length + 8 * 500);
    zeros.set(wav.subarray(0, 36));
    for (let i = 0; i < 500; i++) zeros.set([...Buffer.from('junk'), 0, 0, 0, 0], 36 + 8 * i);
    zeros.set(wav.subarray(36), 36 + 8 * 500);
    cases.push(zeros);
    const nan = new Float32Array(16000 * 4).fill(NaN);
    cases.push(encodeWav(nan, 16000, { float: true }));
    const codes = await Promise.all(cases.map(survive));
    expect(codes).toEqual([
      'ok',
      'corrupt_audio',
      'corrupt_audio',
      'unsupported_format',
      'unsupported_format',
      'ok',
      'corrupt_audio',
    ]);
  });

  it('a WAV declaring 60 s more than it holds is bounded by the file, a long one is rejected before decoding', () => {
    const long = encodeWav(new Float32Array(16000 * 61), 16000);
    const t = performance.now();
    expect(() => inspectBytes(long)).toThrow(/limit is 60 s/);
    expect(performance.now() - t).toBeLessThan(50);
  });

  it('an MP3 with a huge ID3 tag size and junk is rejected quickly', async () => {
    const id3 = new Uint8Array(5000);
    id3.set([...Buffer.from('ID3'), 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f]);
    expect(await survive(id3)).toBe('unsupported_format');
    const junkThenMp3 = new Uint8Array(mp3.length + 10000);
    junkThenMp3.set(mp3, 10000);
    expect(await survive(junkThenMp3)).toBe('unsupported_format');
  });
});
