import { FAMILIES } from './families-data.js';

const FAMILY_OF = new Map(
  Object.entries(FAMILIES).flatMap(([f, atts]) => atts.map((a) => [a, f] as const)),
);
/** An attack label's family, for the per-family rows of eval; `other` when no family lists it. */
export const familyOf = (attack: string): string => FAMILY_OF.get(attack) ?? 'other';
