/**
 * The Client API's signer listing (`GET /external-jwt-signers`, anonymous): what a login page needs to offer
 * "log in with …" and nothing else, for enabled signers only (docs/decisions.md, "External JWT signers").
 */
import type { Ctx } from '../../ctx.js';
import { listEntities, type Page } from '../../crud.js';
import type { ListOptions } from '../../list-query.js';
import { linksFor } from '../../render.js';
import { externalJwtSigners } from '../../resources/external-jwt-signer.js';
import { enabledSigners } from '../../../store/external-jwt-signers.js';

export async function listLoginSigners(
  ctx: Ctx,
  opts: ListOptions,
): Promise<{ page: Page; records: Record<string, unknown>[] }> {
  const page = await listEntities(ctx, externalJwtSigners, opts, enabledSigners);
  const records = page.rows.map((r) => ({
    id: r.id,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    _links: linksFor(externalJwtSigners, r.id),
    name: r.name,
    // Required by the client schema: an empty string when the signer names no login page.
    externalAuthUrl: r.externalAuthUrl ?? '',
  }));
  return { page, records };
}
