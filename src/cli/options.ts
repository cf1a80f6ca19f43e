/** Option parsers and helpers shared by several commands. */
import { InvalidArgumentError, Option } from 'commander';

/** A whole number of minutes (0 allowed). */
export const minutes = (raw: string): number => {
  if (!/^\d+$/.test(raw.trim())) throw new InvalidArgumentError('expected a whole number of minutes');
  return Number(raw);
};

/** A whole number of minutes, at least 1. */
export const positiveMinutes = (raw: string): number => {
  const n = minutes(raw);
  if (n < 1) throw new InvalidArgumentError('expected at least 1 minute');
  return n;
};

/**
 * Default validity of enrollments created or refreshed from the CLI, in minutes. parity: `ziti edge create
 * enrollment` defaults to 30 minutes (docs/reference-notes.md §7.2); identity create uses the server's default.
 */
export const DEFAULT_ENROLLMENT_MINUTES = 30;

export const durationOption = (what: string) =>
  new Option(
    '--duration-minutes <n>',
    `${what} expires after this many minutes (default ${DEFAULT_ENROLLMENT_MINUTES})`,
  ).argParser(positiveMinutes);

/** `now + minutes` as an ISO date-time (the `expiresAt` the API wants). */
export const expiresIn = (mins: number | undefined): string =>
  new Date(Date.now() + (mins ?? DEFAULT_ENROLLMENT_MINUTES) * 60_000).toISOString();

export const jsonOption = () =>
  new Option('-j, --json', 'print the JSON response body as the API sent it (for scripts)');

export const jwtOutOption = () =>
  new Option('--jwt-out <file>', 'write the enrollment JWT to this file (mode 0600) instead of printing it');
