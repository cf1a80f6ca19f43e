/**
 * The controllers registry (`GET /controllers`; docs/decisions.md, "Controllers and controller settings"). Every
 * running controller records itself in the store when it starts, refreshes `lastSeenAt` every
 * {@link HEARTBEAT_MS} (on every replica: a heartbeat is not work that runs once) and marks itself stopped when
 * it stops cleanly. The list shows the controllers seen in the last {@link LISTED_MS}; a controller is online
 * when it has not stopped and was seen in the last {@link ONLINE_MS} (three heartbeats).
 */
import { iso, type Ctx } from '../../ctx.js';
import { listEntities, type Page } from '../../crud.js';
import type { Decorated } from '../../resource-record.js';
import type { ListOptions } from '../../list-query.js';
import { requirePki } from '../../pki.js';
import { controllers } from '../../resources/controller.js';
import {
  controllersSeenSince,
  pruneControllers,
  stopController,
  touchController,
  upsertController,
} from '../../../store/controllers.js';

export const HEARTBEAT_MS = 15_000;
export const ONLINE_MS = 3 * HEARTBEAT_MS;
export const LISTED_MS = 60 * 60_000;
/** Rows of controllers unseen this long are deleted by the periodic work. */
export const FORGOTTEN_MS = 7 * 24 * 3_600_000;

/** What a controller says of itself. */
export interface ControllerSelf {
  id: string;
  name: string;
  /** API binding (`edge-client`, `edge-management`) → its URLs with their API version. */
  apiAddresses: Record<string, { url: string; version: string }[]>;
  version: string;
}

/** Records this controller as started now (again, with the same id, after a restart). */
export async function registerController(ctx: Ctx, self: ControllerSelf): Promise<void> {
  const cert = requirePki(ctx).serverCert;
  await upsertController(ctx.db, { ...self, certPem: cert.pem, fingerprint: cert.fingerprint }, iso(ctx.now()));
}

/** The heartbeat; records the controller again if its row went (pruned while this one was unreachable). */
export async function controllerHeartbeat(ctx: Ctx, self: ControllerSelf): Promise<void> {
  if (!(await touchController(ctx.db, self.id, iso(ctx.now())))) await registerController(ctx, self);
}

/** A clean stop: the controller stays listed, offline, until it leaves the listing window. */
export async function markControllerStopped(ctx: Ctx, id: string): Promise<void> {
  await stopController(ctx.db, id, iso(ctx.now()));
}

/** Deletes the rows of controllers not seen for {@link FORGOTTEN_MS} (periodic work, run once). */
export function forgetOldControllers(ctx: Ctx): Promise<number> {
  return pruneControllers(ctx.db, iso(new Date(ctx.now().getTime() - FORGOTTEN_MS)));
}

/** Whether a controller row is online at `now`. */
export function isControllerOnline(row: { lastSeenAt?: unknown; stoppedAt?: unknown }, now: Date): boolean {
  if (row.stoppedAt) return false;
  return typeof row.lastSeenAt === 'string' && Date.parse(row.lastSeenAt) >= now.getTime() - ONLINE_MS;
}

/** The controllers seen in the listing window, filtered and paged as any list, each with `isOnline`. */
export function listControllers(ctx: Ctx, opts: ListOptions): Promise<Page<Decorated<typeof controllers>>> {
  const since = iso(new Date(ctx.now().getTime() - LISTED_MS));
  return listEntities(ctx, controllers, opts, controllersSeenSince(since));
}
