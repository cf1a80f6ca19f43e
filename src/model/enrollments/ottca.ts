/** `ottca`: a one-time token for a certificate of a third-party CA, named by `caId` (§7.2, §7.3). */
import { caExists } from '../../store/cas.js';
import { fieldError } from '../errors.js';
import type { EnrollmentMethodModule } from './method.js';

export const ottcaMethod: EnrollmentMethodModule = {
  id: 'ottca',
  authenticator: 'cert',
  async prepareCreate(ctx, out) {
    if (typeof out.caId !== 'string' || out.caId === '')
      throw fieldError('caId', 'caId is required for ottca', out.caId ?? null);
    // The CA must exist now; whether it is verified and allows ottca is judged when the token is used (§7.3).
    if (!(await caExists(ctx.db, out.caId))) throw fieldError('caId', 'no CA found with the given id', out.caId);
    out.username = null;
  },
};
