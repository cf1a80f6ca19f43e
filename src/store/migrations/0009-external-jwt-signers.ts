/**
 * External JWT signers (docs/reference-notes.md §5.4): issuers whose JWTs log identities in (`ext-jwt`) or serve as
 * their second factor. `name` and `issuer` are unique (a token's `iss` picks exactly one signer). A signer holds
 * either `certPem` (one certificate; its fingerprint, common name and validity are kept alongside for display)
 * or `jwksEndpoint`. Auth policies name signers inside their JSON members; the signer model refuses deleting a
 * signer a policy names, since JSON members cannot carry a foreign key.
 */
import type { Kysely } from 'kysely';
import { entityTable } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await entityTable(db, 'external_jwt_signers')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('issuer', 'text', (c) => c.notNull().unique())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('kid', 'text')
    .addColumn('certPem', 'text')
    .addColumn('jwksEndpoint', 'text')
    .addColumn('claimsProperty', 'text', (c) => c.notNull().defaultTo('sub'))
    .addColumn('useExternalId', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('externalAuthUrl', 'text')
    .addColumn('fingerprint', 'text')
    .addColumn('commonName', 'text')
    .addColumn('notBefore', 'text')
    .addColumn('notAfter', 'text')
    .execute();
}
