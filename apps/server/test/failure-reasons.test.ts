import { FAILURE_REASONS } from '@voxkey/contract';
import { ERROR_CATEGORIES } from '@voxkey/engine';
import { describe, expect, it } from 'vitest';

describe('failure reasons', () => {
  it('the contract lists every engine error code (a job that fails with one reports it as its failure_reason)', () => {
    expect(Object.keys(ERROR_CATEGORIES).filter((code) => !(code in FAILURE_REASONS))).toEqual([]);
  });
});
