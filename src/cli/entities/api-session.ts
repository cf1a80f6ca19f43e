/** What the api-session resource definition cannot say for the CLI: its columns (sessions have no name). */
import { apiSessions } from '../resources.js';
import type { EntitySpec } from '../crud.js';
import { at, col } from '../output.js';

export const apiSessionSpec: EntitySpec = {
  def: apiSessions,
  noun: 'api-session',
  aliases: ['api-sessions'],
  columns: [
    col('ID', 'id'),
    { header: 'IDENTITY', value: (r) => at(r, 'identity.name') ?? r.identityId },
    col('IP ADDRESS', 'ipAddress'),
    col('CREATED', 'createdAt'),
    col('LAST ACTIVITY', 'lastActivityAt'),
    { header: 'MFA', value: (r) => (r.isMfaRequired ? (r.isMfaComplete ? 'complete' : 'pending') : '') },
  ],
};
