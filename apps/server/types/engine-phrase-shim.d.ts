// TEMPORARY (issue 32): the engine's phrase-check API as agreed with the engine side, until it lands
// on main ("Engine: phrase check"); deleted at that merge. Until then the engine ignores `phrase` and
// returns no `phrase` outcome, which the server reads as null.
import '@voxkey/engine';

declare module '@voxkey/engine' {
  export interface PhraseRequest {
    expected: string;
    vocabulary: 'digits' | 'free';
  }
  export interface PhraseOutcome {
    expected: string;
    transcript: string;
    matchScore: number;
    matched: boolean;
  }
  interface AnalyseCallOptions {
    phrase?: PhraseRequest;
  }
  interface VerificationAnalysis {
    phrase: PhraseOutcome | null;
  }
  interface EnrolmentAnalysis {
    phrase: PhraseOutcome | null;
  }
  interface VoiceEngine {
    readonly phraseLanguages: readonly string[];
  }
}
