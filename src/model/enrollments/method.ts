/**
 * One enrollment method (parity: docs/reference-notes.md §7.2, §7.3): the authenticator it produces and the
 * method's own fields of a create. Each method is a module of this directory; the enrollments' create hook
 * (services/hooks/enrollment.ts) dispatches on `method`, as posture checks do on their type.
 */
import type { Ctx } from '../ctx.js';
import type { Input } from '../resource.js';

export interface EnrollmentMethodModule {
  id: string;
  /** The authenticator method an enrollment of this method produces. */
  authenticator: 'cert' | 'updb';
  /** Checks and completes the method's own fields of a create (`username`, `caId`) in `out`; may throw. */
  prepareCreate(ctx: Ctx, out: Input): Promise<void>;
}
