/** MPEG audio frame-header parsing: enough to sniff, to read rate/channels and to count duration without decoding. */
export interface MpegFrameHeader {
  sampleRate: number;
  channels: number;
  frameBytes: number;
  samplesPerFrame: number;
}

const BITRATES_KBPS: Record<string, number[]> = {
  v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000],
};

export function parseMpegFrameHeader(b: Uint8Array, o: number): MpegFrameHeader | null {
  if (o + 4 > b.length) return null;
  const b0 = b[o]!,
    b1 = b[o + 1]!,
    b2 = b[o + 2]!,
    b3 = b[o + 3]!;
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return null;
  const version = (b1 >> 3) & 3; // 0: 2.5, 2: 2, 3: 1
  const layerBits = (b1 >> 1) & 3; // 1: III, 2: II, 3: I
  if (version === 1 || layerBits === 0) return null;
  const layer = 4 - layerBits;
  const bitrateIndex = (b2 >> 4) & 15;
  const rateIndex = (b2 >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null; // free format is not supported
  if ((b3 & 3) === 2) return null; // reserved emphasis
  const padding = (b2 >> 1) & 1;
  const table = version === 3 ? `v1l${layer}` : layer === 1 ? 'v2l1' : 'v2l23';
  const bitrate = BITRATES_KBPS[table]![bitrateIndex]! * 1000;
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
  const channels = ((b3 >> 6) & 3) === 3 ? 1 : 2;
  let frameBytes: number;
  let samplesPerFrame: number;
  if (layer === 1) {
    frameBytes = (Math.floor((12 * bitrate) / sampleRate) + padding) * 4;
    samplesPerFrame = 384;
  } else if (layer === 2 || version === 3) {
    frameBytes = Math.floor((144 * bitrate) / sampleRate) + padding;
    samplesPerFrame = 1152;
  } else {
    frameBytes = Math.floor((72 * bitrate) / sampleRate) + padding;
    samplesPerFrame = 576;
  }
  if (frameBytes < 4) return null;
  return { sampleRate, channels, frameBytes, samplesPerFrame };
}

/** Size of a leading ID3v2 tag (0 when none). */
export function id3v2Size(b: Uint8Array): number {
  if (b.length < 10 || b[0] !== 0x49 || b[1] !== 0x44 || b[2] !== 0x33) return 0;
  const size =
    ((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f);
  const footer = (b[5]! & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}

const SNIFF_WINDOW = 4096;

/**
 * Offset of the first frame that is followed by a second consistent frame (or the end of file),
 * searched in a small window after any ID3v2 tag. -1 when there is none.
 */
export function findFirstMp3Frame(b: Uint8Array): number {
  const start = id3v2Size(b);
  const end = Math.min(b.length - 4, start + SNIFF_WINDOW);
  for (let o = start; o <= end; o++) {
    if (b[o] !== 0xff) continue;
    const h = parseMpegFrameHeader(b, o);
    if (!h) continue;
    const next = o + h.frameBytes;
    if (next === b.length) return o;
    const h2 = parseMpegFrameHeader(b, next);
    if (h2 && h2.sampleRate === h.sampleRate) return o;
  }
  return -1;
}

export interface Mp3Scan {
  sampleRate: number;
  channels: number;
  frames: number;
  samples: number;
  durationSeconds: number;
}

function isXingFrame(b: Uint8Array, o: number, h: MpegFrameHeader): boolean {
  const limit = Math.min(b.length - 4, o + Math.min(h.frameBytes, 64));
  for (let i = o + 4; i <= limit; i++) {
    const tag = String.fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!);
    if (tag === 'Xing' || tag === 'Info' || tag === 'VBRI') return true;
  }
  return false;
}

/** Walk the frame headers (no decoding): linear in the file size, bounded by it. */
export function scanMp3(b: Uint8Array): Mp3Scan | null {
  const first = findFirstMp3Frame(b);
  if (first < 0) return null;
  const h0 = parseMpegFrameHeader(b, first)!;
  let o = first;
  let frames = 0;
  let samples = 0;
  while (o + 4 <= b.length) {
    const h = parseMpegFrameHeader(b, o);
    if (!h || h.sampleRate !== h0.sampleRate) {
      o++; // resync byte by byte: stays linear since o only grows
      continue;
    }
    if (!(frames === 0 && o === first && isXingFrame(b, o, h))) {
      frames++;
      samples += h.samplesPerFrame;
    }
    o += h.frameBytes;
  }
  return {
    sampleRate: h0.sampleRate,
    channels: h0.channels,
    frames,
    samples,
    durationSeconds: samples / h0.sampleRate,
  };
}
