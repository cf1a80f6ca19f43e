/**
 * `PROCESS`: the client's response for this check must say the process runs; when the check lists hashes the
 * reported sha512 must be one of them, and when it names a signer the reported signers must include it, both
 * compared case-insensitively (docs/reference-notes.md §9.3).
 */
import { Type } from '../../schema-type.js';
import { OS_TYPES, type PostureCheckType } from './type.js';
import { findProcess, processKey, type ProcessPosture } from '../state.js';

const Hex = (bytes: number) => Type.String({ pattern: `^[0-9a-fA-F]{${bytes * 2}}$` });
export const OsTypeSchema = Type.Union(OS_TYPES.map((t) => Type.Literal(t)));
/** sha512 hashes of the binary. */
export const HashesSchema = Type.Array(Hex(64), { maxItems: 1000 });
/** A signer certificate's sha1 fingerprint. */
export const FingerprintSchema = Hex(20);

export interface ExpectedProcess {
  osType: string;
  path: string;
  hashes?: string[];
  signerFingerprint?: string;
  signerFingerprints?: string[];
}

const lower = (s: string) => s.toLowerCase();

/** Whether one reported process satisfies one expected process; the signers any of which must sign it. */
export function processPasses(
  expected: ExpectedProcess,
  actual: ProcessPosture | undefined,
  signers: string[],
): boolean {
  if (!actual || !actual.isRunning) return false;
  if (expected.hashes?.length && !expected.hashes.map(lower).includes(lower(actual.hash ?? ''))) return false;
  if (signers.length && !actual.signerFingerprints.some((f) => signers.map(lower).includes(lower(f)))) return false;
  return true;
}

/** What a failed service request records of a reported process. */
export const actualProcess = (p: ProcessPosture | undefined, path: string) => ({
  path: p?.path ?? path,
  isRunning: p?.isRunning ?? false,
  hash: p?.hash ?? '',
  signerFingerprints: p?.signerFingerprints ?? [],
});

export const processType: PostureCheckType = {
  id: 'PROCESS',
  name: 'Process Check',
  operatingSystems: [
    { type: 'Windows', versions: [] },
    { type: 'macOS', versions: [] },
    { type: 'Linux', versions: [] },
  ],
  fields: {
    process: {
      schema: Type.Object({
        osType: OsTypeSchema,
        path: Type.String({ minLength: 1 }),
        hashes: Type.Optional(HashesSchema),
        signerFingerprint: Type.Optional(FingerprintSchema),
      }),
      required: true,
    },
  },
  // The console sends `signerFingerprint: ""` for none.
  normalize(d) {
    const p = d.process as Record<string, unknown> | null | undefined;
    if (p && typeof p === 'object' && p.signerFingerprint === '') delete p.signerFingerprint;
  },
  evaluate(d, checkId, { identity }) {
    const expected = d.process as ExpectedProcess;
    const actual = findProcess(identity, checkId);
    const signers = expected.signerFingerprint ? [expected.signerFingerprint] : [];
    return {
      isPassing: processPasses(expected, actual, signers),
      failure: { actualValue: actualProcess(actual, expected.path), expectedValue: expected },
    };
  },
  query: (d) => ({
    process: { osType: (d.process as ExpectedProcess).osType, path: (d.process as ExpectedProcess).path },
  }),
  // Judged by the check alone, as the reference does: one record per check, whatever path the client reports.
  slots: (d, checkId) => [processKey(checkId, (d.process as ExpectedProcess).path)],
  slotOf: (d, checkId) => processKey(checkId, (d.process as ExpectedProcess).path),
};
