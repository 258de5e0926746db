// Generated from training/voxkey_train/families.json by scripts/generate-families.mjs: edit the JSON, then
// run `npm -w @voxkey/engine run generate:families` (test/families.test.ts fails while they differ).

/** Spoof attack families of the dev-data bundle and of the generated training attacks: family -> attack labels. */
export const FAMILIES: Record<string, string[]> = {
  'vc-any': ['adain-vc', 'again-vc', 'autovc', 'autovc-f0', 'blow', 'nvc-net', 'lvc-vc', 'lvc-vc-xl', 'flowcpcvc', 'fragmentvc', 'mediumvc', 'quickvc-sr', 'quickvc-nosr', 'starganv2-vc', 'starganv2-vc-no-advcls', 'starganv2-vc-no-asr', 'starganv2-vc-no-f0', 'starganv2-vc-no-norm', 'glow-tts-vc'],
  'neural-vocoder': ['vocos', 'hifigan', 'hifigan-v1', 'bigvgan', 'bigvgan-base', 'bigvgan-base-nofilter', 'bigvgan-base-nofilter-nosnake', 'univnet-c16', 'univnet-c32', 'univnet-c16-mindslab', 'univnet-c32-mindslab', 'melgan-fb', 'melgan-universal', 'waveglow', 'wavernn', 'wavernn-sc', 'istftnet', 'parallel-wavegan'],
  'neural-codec': ['encodec-1.5kbps', 'encodec-3kbps', 'encodec-6kbps', 'encodec-12kbps', 'vocos-encodec-1.5kbps', 'vocos-encodec-3kbps', 'vocos-encodec-6kbps', 'vocos-encodec-12kbps', 'snac', 'speechtokenizer', 'speechtokenizer-rvq1'],
  'codec-lm-tts': ['maskgct', 'mobilespeech', 'voicecraft', 'cosyvoice', 'cosyvoice2', 'cosyvoice-advprompt-antifake', 'cosyvoice-advprompt-advspeech', 'firered-tts', 'spark-tts', 'bark', 'bark-vocos', 'zipvoice', 'zipvoice-distill'],
  'yourtts': ['yourtts-exp2', 'yourtts-exp2-scl', 'yourtts-exp3', 'yourtts-exp3-scl', 'yourtts-exp4-scl', 'yourtts-exp4-scl-mos', 'yourtts-exp5-finetuned', 'yourtts-exp5-zeroshot'],
  'classic-tts': ['voiceloop', 'tacotron2', 'glow-tts', 'vs-tts', 'speecht5', 'world-vocoder'],
  'rule-tts': ['espeak-ng', 'flite'],
  'gen:tts': ['tts-espeak', 'tts-flite'],
  'gen:griffinlim': ['griffinlim'],
  'gen:lpc-vocoder': ['lpc-vocoder'],
  'gen:replay': ['replay'],
  'gen:hifigan': ['hifigan-v1-universal', 'hifigan-v1-lj'],
  'gen:lpcnet': ['lpcnet'],
  'gen:codec2': ['codec2-700c', 'codec2-1200', 'codec2-1300', 'codec2-1600', 'codec2-2400', 'codec2-3200'],
  'gen:world': ['world', 'world-f0'],
  'gen:piper': ['piper-joe'],
  'kokoro': ['kokoro'],
  'heldout:festival': ['festival'],
  'heldout:seed-tts': ['seed-tts'],
  'heldout:yourtts-vc': ['yourtts-vc'],
};
