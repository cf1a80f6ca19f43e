/**
 * Structured logs (pino, JSON lines). Request logs carry method, masked URL and remote address only:
 * session headers and query-string tokens never reach the log.
 */
import pino, { type Logger } from 'pino';

/** Masks secrets that can appear in a query string (enrollment tokens) before a URL is logged. */
export const safeUrl = (url: string): string =>
  url
    .replace(/([?&](?:token|password)=)[^&]*/gi, '$1***')
    // Tokens are UUIDs; one can also appear inside a filter (`token = "…"`): mask any UUID.
    .replace(/[0-9a-f]{8}(-|%2d)[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}/gi, '***');

export function createLogger(level: string, stream?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { svc: 'edgectl' },
      redact: { paths: ['req.headers', 'password', '*.password', 'token', '*.token'], censor: '***' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: safeUrl(req.url),
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        // Error messages can quote a request's URL (a malformed one, say): mask tokens there as well.
        err: (err: Error) => {
          const out = pino.stdSerializers.err(err);
          if (typeof out.message === 'string') out.message = safeUrl(out.message);
          if (typeof out.stack === 'string') out.stack = safeUrl(out.stack);
          return out;
        },
      },
    },
    (stream as pino.DestinationStream | undefined) ?? pino.destination(1),
  );
}

type LogMethod = (...args: unknown[]) => void;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger that makes its pino child on first use (`lazyChildLogger`). Its methods live on the
 * prototype, so a request that never logs costs one small object.
 */
class LazyChild {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindingValues: Record<string, unknown>,
    private readonly opts: object,
  ) {}

  private made(): Logger {
    return (this.real ??= this.parent.child(this.bindingValues, this.opts as pino.ChildLoggerOptions));
  }

  child(b: Record<string, unknown>, o?: pino.ChildLoggerOptions): Logger {
    return this.made().child(b, o);
  }

  bindings(): pino.Bindings {
    return this.made().bindings();
  }

  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }

  flush(): void {
    this.parent.flush();
  }

  /** What each level's method does: nothing unless the parent writes that level. */
  write(level: (typeof LEVELS)[number], args: unknown[]): void {
    if (this.parent.isLevelEnabled(level)) (this.made()[level] as LogMethod)(...args);
  }

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(v: string) {
    this.made().level = v;
  }
}

for (const level of LEVELS) {
  Object.defineProperty(LazyChild.prototype, level, {
    value(this: LazyChild, ...args: unknown[]) {
      this.write(level, args);
    },
  });
}

/**
 * Fastify gives each request a child logger bound to its request id. Making a pino child costs a few
 * microseconds, on every request, while most requests never log at the configured level (warn in production
 * setups, info at most). This child is made only when a request actually logs something its parent would
 * write; until then a level that is off stays a no-op (docs/policy-engine.md, "Per-request fixed cost").
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>, opts: object): Logger {
  // A route's own level or serializers, or a logger that cannot say which levels are on: the plain child.
  if (Object.keys(opts).length > 0 || typeof parent.isLevelEnabled !== 'function')
    return parent.child(bindings, opts as pino.ChildLoggerOptions);
  return new LazyChild(parent, bindings, opts) as unknown as Logger;
}
