/**
 * The offline {@link Transport} (`--data-dir DIR`): each request goes in-process to the controller's own app on
 * a stopped controller's store, as the default admin (docs/decisions.md, "Offline CLI"). The daemon is loaded
 * on the first request only (a dynamic import: the CLI's start-up stays light) and closed by {@link closeOffline}.
 */
import type { OfflineController } from '../../daemon/offline.js';
import { CliError } from '../io.js';
import {
  MANAGEMENT_PREFIX,
  parseBody,
  type HttpMethod,
  type RequestOptions,
  type Transport,
  type TransportResponse,
} from './http.js';

export class OfflineTransport implements Transport {
  private opening: Promise<OfflineController> | undefined;

  constructor(
    readonly dataDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  private controller(): Promise<OfflineController> {
    this.opening ??= (async () => {
      const { openOfflineController, OfflineRefused } = await import('../../daemon/offline.js');
      try {
        return await openOfflineController(this.dataDir, this.env);
      } catch (e) {
        if (e instanceof OfflineRefused) throw new CliError(e.message, 1);
        throw new CliError(`error: cannot open the store in ${this.dataDir}: ${(e as Error).message}`, 1);
      }
    })();
    return this.opening;
  }

  async request(
    method: HttpMethod,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<TransportResponse> {
    const controller = await this.controller();
    const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
    let payload: string | undefined;
    if (body !== undefined) {
      const raw = typeof body === 'string' && options.contentType;
      payload = raw ? (body as string) : JSON.stringify(body);
      headers['content-type'] = raw ? options.contentType! : 'application/json';
    }
    const res = await controller.request(method, MANAGEMENT_PREFIX + path, payload, headers);
    return { status: res.status, body: parseBody(res) };
  }

  /** Ends the command's session, closes the store and releases the lock (nothing when never opened). */
  async close(): Promise<void> {
    if (!this.opening) return;
    const controller = await this.opening.catch(() => undefined);
    await controller?.close();
  }
}
