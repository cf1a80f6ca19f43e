/** A small HTTPS client for tests: JSON in, status + headers + parsed body out, trusting the controller CA. */
import https from 'node:https';

export interface HttpResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
  /** The raw body (binary answers such as PNGs). */
  bytes?: Buffer;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A JSON-serialisable body, or a raw string sent as is. */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  cert?: string;
  key?: string;
}

export function request(ca: string, method: string, url: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    let payload: string | Buffer | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers['content-type'] = opts.contentType ?? 'text/plain';
    } else if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    } else if (opts.contentType) {
      headers['content-type'] = opts.contentType;
    }
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    const req = https.request(url, { method, headers, ca, cert: opts.cert, key: opts.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        let body: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json') && text !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, bytes });
      });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
