import { readFileSync } from 'node:fs';

/** Resident set size of a process on this machine, in MiB (Linux: /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}
