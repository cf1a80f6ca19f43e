/** `MAC`: any reported address must equal one of the check's, as exact strings (docs/reference-notes.md §9.3). */
import { Type } from '../../schema-type.js';
import { oneSlot, type PostureCheckType } from './type.js';

export const macType: PostureCheckType = {
  id: 'MAC',
  name: 'MAC Address Check',
  operatingSystems: [
    { type: 'Windows', versions: [] },
    { type: 'Linux', versions: [] },
    { type: 'macOS', versions: [] },
    { type: 'Android', versions: [] },
  ],
  fields: {
    macAddresses: {
      schema: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 }),
      required: true,
    },
  },
  ...oneSlot('mac'),
  evaluate(d, _id, { identity }) {
    const expected = d.macAddresses as string[];
    const actual = identity?.mac?.addresses ?? [];
    return {
      isPassing: actual.some((a) => expected.includes(a)),
      failure: { actualValue: actual, expectedValue: expected },
    };
  },
};
