/**
 * Domain errors for the store's constraint failures: a duplicate or a dangling reference that slipped past
 * the model's own checks answers 400/409, not 500. The store describes the violated constraint
 * (`src/store/constraints.ts`); the wording and codes are the model's.
 */
import { describeConstraintError, ConstraintViolation } from '../store/constraints.js';
import { DomainError, fieldError } from './errors.js';

/** The domain error for a constraint failure (a store `ConstraintViolation` or a driver error), else null. */
export function constraintError(err: unknown): DomainError | null {
  const v = describeConstraintError(err);
  if (!(v instanceof ConstraintViolation)) return null;
  const c = v.constraint;
  switch (c.kind) {
    case 'unique': {
      const field = c.columns[c.columns.length - 1] ?? 'id';
      return fieldError(field, `${field} must be unique`, v.value);
    }
    case 'foreignKey':
      return new DomainError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
        cause: { message: 'the entity is referenced by another entity' },
      });
    case 'other':
      return new DomainError('COULD_NOT_VALIDATE', { cause: { message: 'a stored constraint was violated' } });
  }
}

/** Runs a store write, turning a constraint failure into its domain error. */
export async function mappingConstraints<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    throw constraintError(e) ?? e;
  }
}
