/**
 * This controller's row in the controllers registry (model/services/controller/registry.ts): recorded once the
 * listener is bound (its URLs are known then), refreshed every heartbeat by every replica (not work that runs
 * once), marked stopped on a clean stop. The id is kept in the data dir (`controller.id`), so a restarted
 * controller is the same controller.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Ctx, Logger } from '../model/ctx.js';
import {
  controllerHeartbeat,
  HEARTBEAT_MS,
  markControllerStopped,
  registerController,
  type ControllerSelf,
} from '../model/services/controller/registry.js';
import { API_PREFIX } from './http/route.js';

export const CONTROLLER_ID_FILE = 'controller.id';

const ID_TEXT = /^[A-Za-z0-9._-]{1,64}$/;

/** Reads `<dataDir>/controller.id`, creating it with a new id when absent. */
export function loadOrCreateControllerId(dataDir: string): string {
  const file = join(dataDir, CONTROLLER_ID_FILE);
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (!ID_TEXT.test(id)) throw new Error(`${file} does not hold a controller id; remove it to get a new one`);
    return id;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const id = randomUUID();
    writeFileSync(file, id + '\n', { mode: 0o600, flag: 'wx' });
    return id;
  }
}

/**
 * What this controller says of itself: its URLs are the ones it advertises (behind a balancer, the balancer's),
 * its name is its host's name and the port it listens on, which tells replicas apart.
 */
export function controllerSelf(id: string, url: string, version: string, port: number): ControllerSelf {
  return {
    id,
    name: `${hostname()}:${port}`,
    version: `v${version}`,
    apiAddresses: {
      'edge-client': [{ url: `${url}${API_PREFIX.client}`, version: 'v1' }],
      'edge-management': [{ url: `${url}${API_PREFIX.management}`, version: 'v1' }],
    },
  };
}

export interface ControllerPresence {
  readonly id: string;
  /** Refreshes the row now (tests; the timer does it every {@link HEARTBEAT_MS}). */
  beat(): Promise<void>;
  /** Stops the heartbeat and marks the controller stopped. */
  close(): Promise<void>;
}

/** Records this controller and keeps its row fresh until closed. */
export async function startControllerPresence(
  ctx: Ctx,
  self: ControllerSelf,
  log: Logger,
  everyMs = HEARTBEAT_MS,
): Promise<ControllerPresence> {
  await registerController(ctx, self);
  let beating: Promise<void> | undefined;
  let failing = false;
  const beat = () =>
    (beating ??= controllerHeartbeat(ctx, self)
      .then(() => {
        if (failing) log.info('controller heartbeat: recorded again');
        failing = false;
      })
      .catch((err: unknown) => {
        if (!failing) log.warn({ err }, 'controller heartbeat: cannot record it in the store');
        failing = true;
      })
      .finally(() => (beating = undefined)));
  const timer = setInterval(() => void beat(), everyMs);
  timer.unref();
  return {
    id: self.id,
    beat,
    async close() {
      clearInterval(timer);
      await beating;
      await markControllerStopped(ctx, self.id).catch((err: unknown) =>
        log.warn({ err }, 'cannot record that this controller stopped'),
      );
    },
  };
}
