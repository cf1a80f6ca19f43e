/**
 * Describes the database's constraint failures in the store's own terms (which kind of constraint, on which
 * table and columns), so the model can turn a duplicate or a dangling reference that slipped past its own
 * checks into a 400/409 instead of a 500 (`src/model/constraints.ts`).
 * SQLite names the failure in its error code and message, PostgreSQL in its SQLSTATE, table and detail.
 */

export interface ViolatedConstraint {
  kind: 'unique' | 'foreignKey' | 'other';
  /** The constrained table, when the driver names it. */
  table: string | null;
  /** The constrained columns, in the driver's order (empty when it does not name them). */
  columns: string[];
}

/** The violated constraint `err` reports, or null when `err` is not a constraint failure. */
export function violatedConstraint(err: unknown): ViolatedConstraint | null {
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  if (typeof e?.code === 'string' && /^23\d{3}$/.test(e.code)) return postgresViolation(err as PostgresError);
  if (typeof e?.code !== 'string' || !e.code.startsWith('SQLITE_CONSTRAINT')) return null;
  const msg = typeof e.message === 'string' ? e.message : '';
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: identities.name" (or several comma-separated columns)
    const qualified = msg
      .replace(/^.*failed:\s*/, '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    const table = qualified[0]?.includes('.') ? qualified[0].split('.')[0]! : null;
    return { kind: 'unique', table, columns: qualified.map((c) => c.split('.').pop() ?? c) };
  }
  if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'foreignKey', table: null, columns: [] };
  return { kind: 'other', table: null, columns: [] };
}

/** What `pg` reports of a failed statement (class 23: integrity constraint violations). */
interface PostgresError {
  code: string;
  table?: string;
  detail?: string;
}

function postgresViolation(e: PostgresError): ViolatedConstraint {
  const table = e.table ?? null;
  if (e.code === '23505') {
    // detail: `Key (name)=(x) already exists.` or `Key ("identityId", method)=(…) already exists.`
    const cols = /^Key \((.+?)\)=/.exec(e.detail ?? '')?.[1] ?? '';
    const columns = cols
      .split(',')
      .map((c) => c.trim().replace(/^"|"$/g, ''))
      .filter(Boolean);
    return { kind: 'unique', table, columns };
  }
  if (e.code === '23503') return { kind: 'foreignKey', table: null, columns: [] };
  return { kind: 'other', table, columns: [] };
}

/**
 * A store write refused by a constraint. `value` is the written value of the last constrained column (the
 * one a unique failure is reported on), when the write knew it.
 */
export class ConstraintViolation extends Error {
  constructor(
    readonly constraint: ViolatedConstraint,
    readonly value?: unknown,
    options?: { cause?: unknown },
  ) {
    super(`${constraint.kind} constraint violated${constraint.table ? ` on ${constraint.table}` : ''}`, options);
    this.name = 'ConstraintViolation';
  }
}

/** `err` as a {@link ConstraintViolation} when it is a constraint failure (values: what the write stored), else `err`. */
export function describeConstraintError(err: unknown, values?: Readonly<Record<string, unknown>>): unknown {
  if (err instanceof ConstraintViolation) return err;
  const c = violatedConstraint(err);
  if (!c) return err;
  const column = c.columns[c.columns.length - 1];
  return new ConstraintViolation(c, column !== undefined ? values?.[column] : undefined, { cause: err });
}
