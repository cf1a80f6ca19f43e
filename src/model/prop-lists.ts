/**
 * Lists derived from a resource definition's props that every write asks for: the props each write mode may set,
 * and the props an event shows (secrets left out). `defineResource` works them out once, when a definition is
 * made, and keeps them on it (`lists`); a definition made otherwise has them worked out on each call. Pure and
 * cheap to load: the definitions import it (docs/design.md, "Cheap definitions").
 */
import type { WriteMode } from './row.js';

/** What these lists read of a prop definition. */
interface ListedProp {
  readonly create?: unknown;
  readonly update?: unknown;
  readonly patch?: unknown;
  readonly virtual?: boolean;
  readonly hidden?: boolean;
  readonly audited?: boolean;
}

export interface PropLists {
  readonly writable: Readonly<Record<WriteMode, readonly string[]>>;
  /** The props an event shows of a record: the base fields and every stored prop that is not a secret. */
  readonly shown: readonly string[];
}

/** Prop names that are secrets whatever their definition says (a safety net behind `hidden`). */
const SECRET_NAME = /password|secret|token|private|hash|otp|recovery/i;

/** The fields every record has, shown in events. */
export const BASE_PROPS = ['id', 'createdAt', 'updatedAt', 'tags', 'isSystem'] as const;

/** Whether a prop's values stay out of events. */
export function isSecretProp(name: string, p: ListedProp | undefined): boolean {
  if (SECRET_NAME.test(name)) return true;
  return p?.hidden === true && p.audited !== true;
}

/** The props a write mode may set. */
export const writableOf = (props: Readonly<Record<string, ListedProp>>, mode: WriteMode): string[] =>
  Object.entries(props)
    .filter(([, p]) => (mode === 'create' ? p.create : mode === 'update' ? p.update : p.patch))
    .map(([n]) => n);

/** The props an event shows. */
export const shownOf = (props: Readonly<Record<string, ListedProp>>): string[] => [
  ...BASE_PROPS,
  ...Object.entries(props)
    .filter(([n, p]) => !p.virtual && !isSecretProp(n, p))
    .map(([n]) => n),
];

export const propLists = (props: Readonly<Record<string, ListedProp>>): PropLists => ({
  writable: {
    create: writableOf(props, 'create'),
    update: writableOf(props, 'update'),
    patch: writableOf(props, 'patch'),
  },
  shown: shownOf(props),
});
