import libsamplerate from '@alexanderolsen/libsamplerate-js';

const { create, ConverterType } = libsamplerate;

type Converter = Awaited<ReturnType<typeof create>>;
const converters = new Map<string, Promise<Converter>>();

/**
 * Band-limited resampling with libsamplerate (WebAssembly), `SRC_SINC_FASTEST` by default:
 * a windowed-sinc converter with ~97 dB SNR and an 80% passband (flat to 6.4 kHz at 16 kHz output),
 * which covers the speaker models' 20 Hz - 8 kHz range; the better converters cost 2-6x more time.
 * Converters are cached per rate pair (`simple()` keeps no state between calls).
 */
export async function resample(
  samples: Float32Array,
  fromRate: number,
  toRate: number,
  quality: 'fastest' | 'medium' | 'best' = 'fastest',
): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const key = `${fromRate}:${toRate}:${quality}`;
  let converter = converters.get(key);
  if (!converter) {
    const converterType =
      quality === 'best' ? ConverterType.SRC_SINC_BEST_QUALITY : quality === 'medium' ? ConverterType.SRC_SINC_MEDIUM_QUALITY : ConverterType.SRC_SINC_FASTEST;
    converter = create(1, fromRate, toRate, { converterType });
    converters.set(key, converter);
    if (converters.size > 16) {
      const [oldKey, old] = converters.entries().next().value!;
      converters.delete(oldKey);
      void old.then((c) => c.destroy());
    }
  }
  const out = (await converter).simple(samples);
  return out instanceof Float32Array ? out : Float32Array.from(out);
}
