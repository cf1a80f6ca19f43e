/**
 * The webhook sink (`events.sinks`, type `webhook`; docs/events.md): each batch is one HTTPS POST of a JSON
 * array of events, signed with HMAC-SHA256 over the exact body under the sink's shared secret:
 *
 *     Content-Type: application/json
 *     X-Edgectl-Signature: sha256=<hex of HMAC-SHA256(secret, body)>
 *     X-Edgectl-Delivery: <id of the first event>-<count>
 *
 * A 2xx answer delivers the batch; anything else (another status, a refused or reset connection, a timeout, a
 * certificate that does not verify) fails it, and the delivery loop (event-delivery.ts) retries it with backoff.
 * The receiver's certificate is verified against the system's roots, or the sink's `caFile`.
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:https';
import type { EventSink } from '../model/events/deliver.js';
import { eventFilter } from '../model/events/deliver.js';
import { safeUrl, type WebhookSinkConfig } from './events-config.js';

/** A webhook's answer other than 2xx, or a failure to get one. */
export class WebhookError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The signature header's value for `body` under `secret`. */
export function webhookSignature(secret: string, body: string | Buffer): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** The most of a receiver's answer read (it is ignored; only drained so the connection can be reused). */
const MAX_ANSWER = 64 * 1024;

export class WebhookSink implements EventSink {
  readonly name: string;
  readonly accepts: (namespace: string, eventType: string) => boolean;
  readonly batchSize: number;
  private readonly url: URL;
  private readonly agent: Agent;

  constructor(private readonly cfg: Omit<WebhookSinkConfig, 'backlog'>) {
    this.name = cfg.name;
    this.accepts = eventFilter(cfg.namespaces, cfg.types);
    this.batchSize = cfg.batchSize;
    this.url = new URL(cfg.url);
    // One connection kept open between batches; `ca` replaces the default roots (a private receiver's CA).
    this.agent = new Agent({ keepAlive: true, maxSockets: 1, ...(cfg.ca !== undefined && { ca: cfg.ca }) });
  }

  /** Where it posts, without credentials or query (for logs). */
  get target(): string {
    return safeUrl(this.url);
  }

  write(events: readonly string[]): Promise<void> {
    const body = Buffer.from(`[${events.join(',')}]`);
    const first = /"id":"([^"]+)"/.exec(events[0] ?? '')?.[1] ?? 'none';
    return new Promise<void>((resolve, reject) => {
      const req = request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: this.cfg.timeoutMs,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'user-agent': 'edgectl-events',
            'x-edgectl-signature': webhookSignature(this.cfg.secret, body),
            'x-edgectl-delivery': `${first}-${events.length}`,
          },
        },
        (res) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER) res.destroy();
          });
          res.on('error', () => {});
          res.on('close', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve();
            else reject(new WebhookError(`the receiver answered ${status}`, status));
          });
        },
      );
      req.on('timeout', () => req.destroy(new WebhookError(`no answer within ${this.cfg.timeoutMs} ms`)));
      req.on('error', (err) => reject(err instanceof WebhookError ? err : new WebhookError(err.message)));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
