/**
 * A process's own CPU time, read from outside through `/proc/<pid>/stat` (Linux), so the benchmark charges
 * each server with the CPU it spent without any hook in the server. The figures cover every thread of the
 * process (the main thread, libuv's pool running Argon2id, V8's collector threads).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** User and system CPU time of a process, in clock ticks, from the text of its `/proc/<pid>/stat`. */
export function parseProcStat(text: string): { utime: number; stime: number } {
  // Field 2 (the command name) is in parentheses and may itself hold spaces and ')': the fields after it
  // start after the LAST ')'. utime and stime are fields 14 and 15, i.e. the 12th and 13th after field 2.
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('not a /proc/<pid>/stat line');
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) throw new Error('malformed /proc/<pid>/stat line');
  return { utime, stime };
}

let ticks: number | undefined;
/** Clock ticks per second (`getconf CLK_TCK`; 100 on Linux when getconf is not there). */
export function clockTicksPerSecond(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** CPU seconds (user + system) a running process has used so far. */
export function processCpuSeconds(pid: number): number {
  const { utime, stime } = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return (utime + stime) / clockTicksPerSecond();
}
