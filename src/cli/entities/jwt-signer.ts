/**
 * What the external-jwt-signer resource definition cannot say for the CLI: columns, short flags after the
 * reference CLI's `create ext-jwt-signer NAME ISSUER (-u jwks | -p pem) [-a audience] [-c claim] [-k kid]`
 * (docs/reference-notes.md §11), the certificate from a file, and the defaults `create` starts from.
 *
 * `useExternalId` defaults to false here as in the API (the reference CLI alone defaults it to true): a signer
 * created from the CLI and one created through the API behave alike (docs/decisions.md, "External JWT signers").
 */
import type { EntitySpec } from '../crud.js';
import { col, type Rec } from '../output.js';
import { authPolicies, externalJwtSigners } from '../resources.js';

const key = (r: Rec) =>
  r.jwksEndpoint ? `jwks ${String(r.jwksEndpoint)}` : r.fingerprint ? `cert ${String(r.fingerprint)}` : '';

export const jwtSignerSpec: EntitySpec = {
  def: externalJwtSigners,
  noun: 'jwt-signer',
  aliases: ['jwt-signers', 'ext-jwt-signer', 'ext-jwt-signers'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('ISSUER', 'issuer'),
    col('AUDIENCE', 'audience'),
    col('ENABLED', 'enabled'),
    col('CLAIM', 'claimsProperty'),
    col('EXTERNAL ID', 'useExternalId'),
    { header: 'KEY', value: key },
  ],
  createArgs: ['name', 'issuer'],
  createDefaults: { enabled: true, useExternalId: false, claimsProperty: 'sub' },
  flags: {
    name: { description: 'name (unique)' },
    issuer: { description: "the `iss` claim of the signer's tokens (unique)" },
    audience: { short: 'a', description: "a value the tokens' `aud` claim must contain" },
    certPem: {
      name: 'cert-pem',
      description: 'the signing certificate as PEM (exactly one of this and --jwks-endpoint)',
      fromFile: { name: 'cert-file', short: 'p' },
    },
    jwksEndpoint: { short: 'u', description: "http(s) URL of the signer's JWKS" },
    claimsProperty: { short: 'c', description: 'claim naming the identity, a JSON pointer (default sub)' },
    useExternalId: { short: 'x', description: 'match the claim against identity externalId (default: identity id)' },
    kid: { short: 'k', description: "key id of --cert-pem (default: the certificate's SHA-1 fingerprint)" },
    externalAuthUrl: { description: 'where clients get a token (shown on the login listing)' },
    enabled: { description: "accept this signer's tokens (default on create)" },
    enrollToCertEnabled: {
      description: 'its tokens may enroll new identities with a certificate (POST /enroll/token)',
    },
    enrollToTokenEnabled: { description: 'its tokens may enroll new identities that log in with such tokens' },
    enrollNameClaimsSelector: {
      description: "claim naming an enrolled identity, a JSON pointer (default: --claims-property's)",
    },
    enrollAttributeClaimsSelector: {
      description: "claim giving an enrolled identity's role attributes (a list or comma-separated)",
    },
    enrollAuthPolicyId: {
      ref: authPolicies,
      description: "auth policy of enrolled identities (id or name; default 'default')",
    },
  },
  createHelp:
    '\nA new signer is enabled, matches the `sub` claim against identity ids (--use-external-id for externalId),\nand needs --audience and exactly one of --cert-pem/--cert-file or --jwks-endpoint.',
};
