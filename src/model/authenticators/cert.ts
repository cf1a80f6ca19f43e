/**
 * `cert`: a client certificate, fixed at create. One given as PEM is checked against the trusted CAs (one
 * certificate, chaining to a verified CA, not used by another authenticator); those the controller issued at
 * enrollment have no CA id and show `isIssuedByNetwork`.
 */
import { DomainError } from '../errors.js';
import { certAuthenticatorFromPem } from '../services/authentication/cert-authenticator.js';
import type { AuthenticatorMethodModule } from './method.js';

export const certMethod: AuthenticatorMethodModule = {
  id: 'cert',
  async prepare(ctx, out, mode, existing) {
    if (mode !== 'create')
      throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', { urlVars: { id: String(existing?.id) } });
    if (out.username !== undefined || out.password !== undefined) {
      throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', {
        cause: { field: 'username', reason: 'username and password do not apply to cert', value: null },
      });
    }
    Object.assign(out, await certAuthenticatorFromPem(ctx, out.certPem));
  },
  decorate(row) {
    row.isIssuedByNetwork = !row.caId;
  },
};
