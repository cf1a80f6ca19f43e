/** `ott`: a one-time token for a certificate issued by the controller's own CA (§7.2). No fields of its own. */
import type { EnrollmentMethodModule } from './method.js';

export const ottMethod: EnrollmentMethodModule = {
  id: 'ott',
  authenticator: 'cert',
  async prepareCreate(_ctx, out) {
    out.caId = null;
    out.username = null;
  },
};
