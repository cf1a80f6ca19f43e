/** API sessions: the derived token and refs on reads. */
import type { Ctx } from '../../ctx.js';
import { attachRefs, IDENTITY_REF } from '../../refs.js';
import type { ResourceHooks, Row } from '../../resource.js';
import { recordApiSessionsEnding } from '../api-session/api-session.js';

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, IDENTITY_REF);
  for (const r of rows) {
    // The store keeps only the token's hash; the token itself is derived again (model/tokens.ts).
    r.token = ctx.tokens.token('api-session', String(r.id));
    r.cachedLastActivityAt = r.lastActivityAt;
    r.isCertExtendable = false;
  }
}

export const apiSessionHooks: ResourceHooks = {
  // Posture scoped to an API session goes with it by cascade (docs/reference-notes.md §4.2).
  decorate,
  // An admin's removal: the API session's event and its sessions' (the generic delete records the entityChange).
  beforeDelete: (ctx, row) => recordApiSessionsEnding(ctx, [String(row.id)], 'deleted'),
};
