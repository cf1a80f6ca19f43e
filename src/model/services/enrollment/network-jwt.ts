/**
 * The network JWT (`GET /network-jwts`): a generic "join this network" token that names the controller and is
 * signed by its server key, so a client that verifies it against the server certificate can fetch the CA
 * bundle and then enroll or authenticate with its own external token. Nothing in it is secret or grants
 * anything: `em: "network"`, `iss` = `sub` = the controller URL with a trailing slash,
 * `aud: ["openziti-enroller"]`, a random `jti`, `ctrls: null`, no expiry. A new one (new `jti`) per request.
 */
import { randomUUID } from 'node:crypto';
import type { Ctx } from '../../ctx.js';
import { requirePki } from '../../pki.js';

export async function networkJwt(ctx: Ctx): Promise<string> {
  const pki = requirePki(ctx);
  const issuer = pki.issuer.endsWith('/') ? pki.issuer : `${pki.issuer}/`;
  return pki.signEnrollmentJwt({
    method: 'network',
    issuer,
    subject: issuer,
    token: randomUUID(),
    audience: ['openziti-enroller'],
    controllers: null,
  });
}
