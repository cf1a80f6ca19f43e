/** `DOMAIN`: the reported Windows domain must be one of the check's, case-insensitively (docs/reference-notes.md §9.3). */
import { Type } from '../../schema-type.js';
import { oneSlot, type PostureCheckType } from './type.js';

export const domainType: PostureCheckType = {
  id: 'DOMAIN',
  name: 'Windows Domain Check',
  operatingSystems: [{ type: 'Windows', versions: [] }],
  fields: {
    domains: { schema: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 }), required: true },
  },
  ...oneSlot('domain'),
  evaluate(d, _id, { identity }) {
    const expected = d.domains as string[];
    const actual = identity?.domain?.domain ?? '';
    const isPassing = actual !== '' && expected.some((x) => x.toLowerCase() === actual.toLowerCase());
    return { isPassing, failure: { actualValue: actual, expectedValue: expected } };
  },
};
