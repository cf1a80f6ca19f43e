/**
 * `/posture-check-types` (docs/reference-notes.md §9.1): one fixed record per listed type, built from the
 * type modules. MFA has no record, as in the reference, though checks of that type can be created.
 */
import { notFound } from '../errors.js';
import { POSTURE_CHECK_TYPES } from './types/index.js';

/** The reference seeds these records when its store is created; edgectl's are constant, dated at the epoch. */
const SEEDED_AT = '1970-01-01T00:00:00.000Z';

export function postureCheckTypeRecords(): Record<string, unknown>[] {
  return POSTURE_CHECK_TYPES.filter((t) => t.name !== undefined).map((t) => ({
    id: t.id,
    createdAt: SEEDED_AT,
    updatedAt: SEEDED_AT,
    tags: {},
    _links: { self: { href: `./posture-check-types/${t.id}` } },
    name: t.name,
    operatingSystems: t.operatingSystems,
    version: '1',
  }));
}

export function postureCheckTypeRecord(id: string): Record<string, unknown> {
  const r = postureCheckTypeRecords().find((x) => x.id === id);
  if (!r) throw notFound(id, 'posture check type');
  return r;
}
