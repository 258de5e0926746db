/** The logistic function: a logit (log-odds) to a probability. */
export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
