/**
 * What the enrollment resource definition cannot say for the CLI: its columns (enrollments have no name: found
 * by id). `create` is the enrollment command's own (identity by name, expiry as a duration), not the generic one.
 */
import type { EntitySpec } from '../crud.js';
import { at, col } from '../output.js';
import { enrollments } from '../resources.js';

export const enrollmentSpec: EntitySpec = {
  def: enrollments,
  noun: 'enrollment',
  aliases: ['enrollments'],
  columns: [
    col('ID', 'id'),
    col('METHOD', 'method'),
    { header: 'IDENTITY', value: (r) => at(r, 'identity.name') ?? r.identityId },
    { header: 'USERNAME / CA', value: (r) => r.username ?? at(r, 'ca.name') ?? r.caId },
    col('EXPIRES AT', 'expiresAt'),
  ],
  omit: ['create'],
};
