/**
 * One authenticator method (parity: docs/reference-notes.md §10.5): how a write of an authenticator of this
 * method is checked and completed, and what its records add. Each method is a module of this directory; the
 * authenticators' hooks (services/hooks/authenticator.ts) dispatch on `method`, as posture checks do on their type.
 */
import type { Ctx } from '../ctx.js';
import type { Input, Row, WriteMode } from '../resource.js';

export interface AuthenticatorMethodModule {
  id: 'updb' | 'cert';
  /**
   * Work outside the write's transaction for an authenticator of identity `identityId` (Argon2id hashing);
   * its result reaches {@link prepare} as `pre`.
   */
  beforeTx?(ctx: Ctx, body: Input, identityId: string): Promise<Row | undefined>;
  /** Checks and completes the write in `out` (`existing` for update/patch); may throw. */
  prepare(ctx: Ctx, out: Input, mode: WriteMode, existing?: Row, pre?: Row): Promise<void>;
  /** Refuses a delete (the default admin's password stays). */
  beforeDelete?(ctx: Ctx, row: Row): Promise<void>;
  /** Wire fields of this method's records. */
  decorate?(row: Row): void;
}
