/** Mono samples from a decoder's channels: their average, clamped to [-1, 1], non-finite values as 0. */
export function downmixToMono(channels: Float32Array[], length: number): Float32Array {
  const mono = new Float32Array(length);
  for (const data of channels) for (let i = 0; i < length; i++) mono[i]! += data[i]!;
  const inverse = 1 / channels.length;
  for (let i = 0; i < length; i++) {
    const v = mono[i]! * inverse;
    mono[i] = Number.isFinite(v) ? Math.max(-1, Math.min(1, v)) : 0;
  }
  return mono;
}
