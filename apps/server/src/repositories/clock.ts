export const nowIso = (): string => new Date().toISOString();

export const toFlag = (value: boolean): number => (value ? 1 : 0);
export const fromFlag = (value: number | boolean): boolean => Boolean(value);
