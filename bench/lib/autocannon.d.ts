// autocannon ships no type declarations; the benchmarks use its programmatic API untyped.
declare module 'autocannon';
