/**
 * TOTP MFA on both APIs and its admin removal (parity: docs/reference-notes.md §4.4, §6; docs/decisions.md
 * "TOTP MFA"). Only the routes §4.4 lists are open to a partial session. Every route that checks a code runs
 * under the authentication rate limiter, keyed per API session; wrong codes are counted and bounded per
 * identity by the model (services/mfa/mfa-failures.ts).
 */
import { Type } from '@sinclair/typebox';
import QRCode from 'qrcode';
import {
  authenticateMfa,
  deleteOwnMfa,
  enrollMfa,
  maskedRecoveryCodes,
  mfaDetail,
  mfaQrUrl,
  regenerateRecoveryCodes,
  removeIdentityMfa,
  verifyMfa,
} from '../../model/services/mfa/mfa.js';
import type { Principal } from '../../model/services/api-session/api-session.js';
import { empty, ok, RAW } from '../http/envelope.js';
import { route, type RequestContext, type RouteDef } from '../http/route.js';

const BOTH = ['client', 'management'] as const;
const TAG = 'MFA';

const CodeBody = Type.Object({ code: Type.String({ maxLength: 64 }) }, { additionalProperties: true });

const VALIDATION_HEADER = 'mfa-validation-code';

/** The code of a request: the `mfa-validation-code` header, else the body's `code` (any other body: none). */
function codeOf(rc: RequestContext): string | undefined {
  const h = rc.req.headers[VALIDATION_HEADER];
  const header = Array.isArray(h) ? h[0] : h;
  if (header) return header;
  const body = rc.body as { code?: unknown } | null | undefined;
  return typeof body?.code === 'string' ? body.code : undefined;
}

const MAX_GET_BODY = 4096;

/**
 * The `code` of a GET's JSON body. Fastify parses no GET bodies, but the reference's read of the recovery
 * codes takes the code in the body too (docs/decisions.md, newer request shapes): read it here, small only.
 */
async function getBodyCode(rc: RequestContext): Promise<string | undefined> {
  const length = Number(rc.req.headers['content-length'] ?? 0);
  if (!(length > 0) || length > MAX_GET_BODY) return undefined;
  const text = await readBounded(rc.req.raw, MAX_GET_BODY, GET_BODY_WAIT_MS);
  if (text === undefined) return undefined;
  try {
    const body = JSON.parse(text) as { code?: unknown } | null;
    return typeof body?.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A GET body is read only this long: a client that announces one and never sends it still gets its answer
 * (without a code) instead of waiting for the request timeout; the rest is drained or cut off (body-drain.ts).
 */
const GET_BODY_WAIT_MS = 2000;

/** The stream's text, or undefined when it is longer than `max` or not complete within `waitMs`. */
function readBounded(stream: NodeJS.ReadableStream, max: number, waitMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: string | undefined) => {
      clearTimeout(timer);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return finish(undefined);
      chunks.push(chunk);
    };
    const onEnd = () => finish(Buffer.concat(chunks).toString('utf8'));
    const onError = () => finish(undefined);
    const timer = setTimeout(() => finish(undefined), waitMs);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

const caller = (rc: RequestContext<Principal>) => ({
  apiSessionId: rc.principal.apiSessionId,
  identityId: rc.principal.identity.id,
});

/**
 * Runs a code check under the auth limiter. Its account is the API session, not the identity: the identity's
 * bound is the stored count of wrong codes (services/mfa/mfa-failures.ts), and an identity-wide budget would let
 * whoever burns it get the real user's right code refused with 429.
 */
const limited = <T>(rc: RequestContext<Principal>, run: () => Promise<T>): Promise<T> =>
  rc.deps.authLimiter.attempt(rc.req.ip, `mfa:${rc.principal.apiSessionId}`, run);

export const mfaRoutes: RouteDef[] = [
  route({
    apis: BOTH,
    method: 'POST',
    path: '/authenticate/mfa',
    operationId: 'authenticateMfa',
    tag: 'Authentication',
    access: 'partial',
    body: CodeBody,
    success: 200,
    envelope: 'empty',
    summary: 'Complete MFA authentication',
    async handler(rc) {
      const code = (rc.body as { code: string }).code;
      await limited(rc, () => authenticateMfa(rc.ctx, caller(rc), code));
      return empty();
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity/mfa',
    operationId: 'detailMfa',
    tag: TAG,
    access: 'partial',
    success: 200,
    envelope: 'detailMfaEnvelope',
    async handler(rc) {
      return ok(await mfaDetail(rc.ctx, caller(rc), rc.principal.identity.name));
    },
  }),
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-identity/mfa',
    operationId: 'enrollMfa',
    tag: TAG,
    access: 'partial',
    success: 201,
    envelope: 'createEnvelope',
    async handler(rc) {
      const id = await enrollMfa(rc.ctx, caller(rc));
      return { status: 201, data: { id, _links: { self: { href: './current-identity/mfa' } } } };
    },
  }),
  route({
    apis: BOTH,
    method: 'DELETE',
    path: '/current-identity/mfa',
    operationId: 'deleteMfa',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await limited(rc, () => deleteOwnMfa(rc.ctx, caller(rc), codeOf(rc)));
      return empty();
    },
  }),
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-identity/mfa/verify',
    operationId: 'verifyMfa',
    tag: TAG,
    access: 'partial',
    body: CodeBody,
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      const code = (rc.body as { code: string }).code;
      await limited(rc, () => verifyMfa(rc.ctx, caller(rc), code));
      return empty();
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity/mfa/qr-code',
    operationId: 'detailMfaQrCode',
    tag: TAG,
    access: 'partial',
    produces: ['image/png', 'application/json'],
    success: 200,
    async handler(rc) {
      const url = await mfaQrUrl(rc.ctx, caller(rc), rc.principal.identity.name);
      // parity: §6, a 256×256 PNG with medium error correction.
      const png = await QRCode.toBuffer(url, { type: 'png', width: 256, errorCorrectionLevel: 'M' });
      await rc.reply.code(200).type('image/png').header('cache-control', 'no-store').send(png);
      return RAW;
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity/mfa/recovery-codes',
    operationId: 'detailMfaRecoveryCodes',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'detailMfaRecoveryCodesEnvelope',
    async handler(rc) {
      const code = codeOf(rc) ?? (await getBodyCode(rc));
      return ok(await limited(rc, () => maskedRecoveryCodes(rc.ctx, caller(rc), code)));
    },
  }),
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-identity/mfa/recovery-codes',
    operationId: 'createMfaRecoveryCodes',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'detailMfaRecoveryCodesEnvelope',
    async handler(rc) {
      const codes = await limited(rc, () => regenerateRecoveryCodes(rc.ctx, caller(rc), codeOf(rc)));
      // The reference answers an empty object; the new codes are shown here once (docs/decisions.md).
      rc.reply.header('cache-control', 'no-store');
      return ok({ recoveryCodes: codes });
    },
  }),
  route({
    apis: ['management'],
    method: 'DELETE',
    path: '/identities/{id}/mfa',
    operationId: 'removeIdentityMfa',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'empty',
    summary: 'Remove MFA from an identity',
    async handler(rc) {
      await removeIdentityMfa(rc.ctx, rc.params.id);
      return empty();
    },
  }),
];
