/**
 * The issuer a request is served under (docs/reference-notes.md §14.1): `https://<Host>/oidc` when the request's `Host` is one of the
 * controller's names (the server certificate's DNS names and IPs, the advertised host) with one of its ports (the
 * advertised and the bound one; a bare host stands for 443). Any other `Host` is not served (404), so a token's
 * `iss` only ever names this controller.
 */
import type { FastifyRequest } from 'fastify';

/** `host[:port]` of a Host header, lower-case, brackets kept for IPv6; undefined when malformed. */
function splitHost(header: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(header.trim());
  if (!m) return undefined;
  return { host: m[1]!.toLowerCase(), port: m[2] === undefined ? 443 : Number(m[2]) };
}

const bracketed = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class Issuers {
  constructor(
    private readonly names: () => readonly string[],
    private readonly ports: () => readonly number[],
  ) {}

  /** The issuer of this request, or undefined when its Host names no address of this controller. */
  of(req: FastifyRequest): string | undefined {
    const header = req.headers.host;
    if (typeof header !== 'string') return undefined;
    const parsed = splitHost(header);
    if (!parsed) return undefined;
    const names = new Set(this.names().map((n) => bracketed(n.toLowerCase())));
    if (!names.has(parsed.host) || !this.ports().includes(parsed.port)) return undefined;
    return `https://${parsed.port === 443 && !/:\d+$/.test(header.trim()) ? parsed.host : `${parsed.host}:${parsed.port}`}/oidc`;
  }
}
