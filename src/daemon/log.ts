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
