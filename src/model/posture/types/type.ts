/**
 * What one posture check type is (docs/reference-notes.md §9): its own fields with their schemas, extra
 * validation, and how a check of the type is evaluated against what a client reported. Every type is one
 * module of this directory; the resource definition, the evaluation and the client's `postureQueries` ask
 * the registry (index.ts) by `typeId`, so adding a type touches no other code.
 */
import type { TSchema } from '../../schema-type.js';
import type { ApiSessionPosture, IdentityPosture, Slot } from '../state.js';

export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const;

export interface TypeField {
  schema: TSchema;
  /** Needed on create and in the merged record of an update or patch. */
  required?: boolean;
  /** Rendered when absent (a default of the reference's model). */
  default?: unknown;
}

/** The posture a check is evaluated against: the identity's data and the asking API session's. */
export interface PostureView {
  identity: IdentityPosture | undefined;
  session: ApiSessionPosture | undefined;
  now: Date;
}

/** One check's outcome, with what a failed service request records (`actualValue`, `expectedValue`, …). */
export interface CheckOutcome {
  isPassing: boolean;
  failure: Record<string, unknown>;
}

/** Timeout facts of a check for `postureQueries` (−1: none). */
export interface QueryTimeout {
  timeout: number;
  timeoutRemaining: number;
}

export type Details = Record<string, unknown>;

export interface PostureCheckType {
  id: string;
  /** Display name on `/posture-check-types`; absent: the type has no such record (MFA). */
  name?: string;
  /** Operating systems offered for the type, with sample versions (`/posture-check-types`). */
  operatingSystems: { type: string; versions: string[] }[];
  fields: Record<string, TypeField>;
  /** Turns the empty values clients send for "none" into absent ones, before validation (a write's fields). */
  normalize?(details: Details): void;
  /** Checks beyond the schemas (semver ranges, hex lengths); throws a field error. */
  validate?(details: Details): void;
  evaluate(details: Details, checkId: string, posture: PostureView): CheckOutcome;
  /** `process`/`processes` of a posture query. */
  query?(details: Details): Record<string, unknown>;
  timeout?(details: Details, posture: PostureView): QueryTimeout;
  /**
   * The slots (state.ts) a check of the type has the identity keep, and the one a client's response for the
   * check fills, or undefined when the response does not fit it. Absent for types no response answers (MFA).
   */
  slots?(details: Details, checkId: string): Slot[];
  slotOf?(details: Details, checkId: string, response: Record<string, unknown>): Slot | undefined;
}

/** `slots`/`slotOf` of a type whose reports fill one slot per identity, whichever check they answer. */
export const oneSlot = (slot: 'os' | 'domain' | 'mac'): Pick<PostureCheckType, 'slots' | 'slotOf'> => ({
  slots: () => [slot],
  slotOf: () => slot,
});
