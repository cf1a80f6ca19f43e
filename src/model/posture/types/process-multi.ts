/**
 * `PROCESS_MULTI`: several processes under a semantic, AllOf (every one passes) or AnyOf (at least one);
 * each is judged as a `PROCESS` check, with a list of accepted signers (docs/reference-notes.md §9.3).
 * The client reports each process under the check's id and the process's path.
 */
import { Type } from '../../schema-type.js';
import { SemanticSchema } from '../../schemas.js';
import {
  actualProcess,
  FingerprintSchema,
  HashesSchema,
  OsTypeSchema,
  processPasses,
  type ExpectedProcess,
} from './process.js';
import type { Details, PostureCheckType } from './type.js';
import { findProcess, processKey } from '../state.js';
import { textOr } from '../../row.js';

const slots = (d: Details, checkId: string) =>
  (d.processes as ExpectedProcess[]).map((p) => processKey(checkId, p.path));

export const processMultiType: PostureCheckType = {
  id: 'PROCESS_MULTI',
  name: 'Process Multi Check',
  operatingSystems: [
    { type: 'Windows', versions: [] },
    { type: 'macOS', versions: [] },
    { type: 'Linux', versions: [] },
  ],
  fields: {
    semantic: { schema: SemanticSchema, required: true },
    processes: {
      schema: Type.Array(
        Type.Object({
          osType: OsTypeSchema,
          path: Type.String({ minLength: 1 }),
          hashes: Type.Optional(HashesSchema),
          signerFingerprints: Type.Optional(Type.Array(FingerprintSchema, { maxItems: 100 })),
        }),
        { minItems: 1, maxItems: 100 },
      ),
      required: true,
    },
  },
  evaluate(d, checkId, { identity }) {
    const expected = d.processes as ExpectedProcess[];
    const actual = expected.map((e) => findProcess(identity, checkId, e.path));
    const passes = expected.map((e, i) => processPasses(e, actual[i], e.signerFingerprints ?? []));
    const isPassing = d.semantic === 'AnyOf' ? passes.some(Boolean) : passes.every(Boolean);
    return {
      isPassing,
      failure: {
        semantic: d.semantic,
        actualValue: expected.map((e, i) => actualProcess(actual[i], e.path)),
        expectedValue: expected,
      },
    };
  },
  query: (d) => ({ processes: (d.processes as ExpectedProcess[]).map((p) => ({ osType: p.osType, path: p.path })) }),
  slots,
  // One record per process the check names; a report for another path answers nothing.
  slotOf(d, checkId, response) {
    const key = processKey(checkId, textOr(response.path, ''));
    return slots(d, checkId).includes(key) ? key : undefined;
  },
};
