/**
 * `edgectl logout`: ends the saved API session on the controller (`DELETE /current-api-session`; an OIDC login's
 * refresh token is also revoked) and forgets it locally. The local entry is removed even when the controller cannot be told (unreachable, or the session
 * already expired), so logout always leaves no usable token on disk; that case is a warning, not a failure.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { CliError, type CliIo } from '../io.js';
import { clientCertificateOf, SessionStore } from '../session-store.js';
import { revokeRefreshToken } from '../oidc.js';

export function registerLogout(program: Command, io: CliIo): void {
  program
    .command('logout')
    .description('end the saved session on the controller and forget it')
    .action(async () => {
      const api = requireApi(io);
      const store = new SessionStore(io.env);
      let warning: string | undefined;
      try {
        // An OIDC login's bearer is refreshed first if it has expired, so its session can still be ended.
        await api.call('DELETE', '/current-api-session');
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        warning = `warning: the controller did not end the session: ${e.message.split('\n')[0]!.replace(/^error: /, '')}`;
      } finally {
        store.remove();
      }
      // And its refresh token is revoked, in case the session outlived the call (RFC 7009; always answered 200).
      if (api.login.oidc)
        await revokeRefreshToken(api.login, clientCertificateOf(api.login)).catch((e: unknown) => {
          if (!(e instanceof CliError)) throw e;
          warning ??= `warning: ${e.message.replace(/^error: /, '')}`;
        });
      if (warning) io.err(warning);
      io.out(`logged out of ${api.login.url}`);
    });
}
