/** The identity enrollment methods, one module each, by id (router methods come with their routers). */
import type { EnrollmentMethodModule } from './method.js';
import { ottMethod } from './ott.js';
import { ottcaMethod } from './ottca.js';
import { updbMethod } from './updb.js';

export const ENROLLMENT_METHODS: Readonly<Record<string, EnrollmentMethodModule>> = {
  ott: ottMethod,
  ottca: ottcaMethod,
  updb: updbMethod,
};

/** The module of identity enrollment method `id`, if there is one. */
export const enrollmentMethod = (id: unknown): EnrollmentMethodModule | undefined =>
  typeof id === 'string' && Object.hasOwn(ENROLLMENT_METHODS, id) ? ENROLLMENT_METHODS[id] : undefined;
