/** The posture check types by `typeId` (docs/reference-notes.md §9.1); one module each. */
import { domainType } from './domain.js';
import { macType } from './mac.js';
import { mfaType } from './mfa.js';
import { osType } from './os.js';
import { processMultiType } from './process-multi.js';
import { processType } from './process.js';
import type { PostureCheckType } from './type.js';

export const POSTURE_CHECK_TYPES: readonly PostureCheckType[] = [
  osType,
  processType,
  processMultiType,
  domainType,
  macType,
  mfaType,
];

const BY_ID: ReadonlyMap<string, PostureCheckType> = new Map(POSTURE_CHECK_TYPES.map((t) => [t.id, t]));

export const postureCheckType = (typeId: string): PostureCheckType | undefined => BY_ID.get(typeId);

/** Every field some type owns, with the types owning it (a field of another type is refused per type). */
export const ALL_TYPE_FIELDS: ReadonlyMap<string, PostureCheckType> = new Map(
  POSTURE_CHECK_TYPES.flatMap((t) => Object.keys(t.fields).map((f) => [f, t] as const)),
);

export type { PostureCheckType } from './type.js';
