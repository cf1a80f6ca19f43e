/**
 * Turns the database's constraint failures into domain errors, so a duplicate or a dangling reference that
 * slipped past the model's own checks still answers 400/409 instead of 500.
 * The message parsing is SQLite's; a PostgreSQL dialect would add its own branch here.
 */
import { DomainError, fieldError } from '../model/errors.js';

export function mapConstraintError(err: unknown, value?: (field: string) => unknown): unknown {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code !== 'string' || !e.code.startsWith('SQLITE_CONSTRAINT')) return err;
  const msg = e.message ?? '';
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: identities.name" (or several comma-separated columns)
    const cols = msg.replace(/^.*failed:\s*/, '').split(',').map((c) => c.trim().split('.').pop() ?? c);
    const field = cols[cols.length - 1] ?? 'id';
    return fieldError(field, `${field} must be unique`, value?.(field));
  }
  if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return new DomainError('CAN_NOT_DELETE_REFERENCED_ENTITY', { cause: { message: 'the entity is referenced by another entity' } });
  }
  return new DomainError('COULD_NOT_VALIDATE', { cause: { message: 'a stored constraint was violated' } });
}
