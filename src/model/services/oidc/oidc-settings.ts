/**
 * The OIDC provider's settings (`edge.oidc.*`, docs/reference-notes.md §14.2 and §14.7): token lifetimes and the redirect URIs the two
 * public clients may use, with the reference's defaults and matching rules.
 */

export interface OidcSettings {
  accessTokenMs: number;
  /** The refresh token's lifetime, restarted by every refresh (a sliding window). */
  refreshTokenMs: number;
  idTokenMs: number;
  /** Patterns; `*` matches any run of characters (the reference's ports). */
  redirectUris: readonly string[];
  postLogoutUris: readonly string[];
  /** Whether `/version` advertises the provider (`edge.oidc.advertise`, default on); it is served either way. */
  advertise: boolean;
}

export const DEFAULT_REDIRECT_URIS: readonly string[] = [
  'openziti://auth/callback',
  'https://127.0.0.1:*/auth/callback',
  'http://127.0.0.1:*/auth/callback',
  'https://localhost:*/auth/callback',
  'http://localhost:*/auth/callback',
];

export const DEFAULT_POST_LOGOUT_URIS: readonly string[] = DEFAULT_REDIRECT_URIS.map((u) =>
  u.replace(/\/auth\/callback$/, '/auth/logout'),
);

export const DEFAULT_OIDC_SETTINGS: OidcSettings = {
  accessTokenMs: 30 * 60_000,
  refreshTokenMs: 24 * 3600_000,
  idTokenMs: 30 * 60_000,
  redirectUris: DEFAULT_REDIRECT_URIS,
  postLogoutUris: DEFAULT_POST_LOGOUT_URIS,
  advertise: true,
};

/** The two public clients (docs/reference-notes.md §14.2): `openziti` (console, BrowZer) and the legacy `native` (Go SDK). */
export const OIDC_CLIENTS: readonly string[] = ['openziti', 'native'];

/**
 * A pattern as a regular expression: `*` stands for characters that cannot leave the URL's authority or path
 * segment (no `/`, `?`, `#`, `@`), so `http://localhost:*` never matches `http://localhost:@evil.example`.
 */
const globToRegExp = (pattern: string): RegExp =>
  new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/?#@\\s]*') +
      '$',
  );

/** A URI with user information (`user@host`) names another host than it seems to: never a redirect target. */
const hasUserInfo = (uri: string): boolean => {
  const u = parseUrl(uri);
  return u === undefined || u.username !== '' || u.password !== '';
};

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `uri` is one of `patterns`: a glob match, or a loopback URI whose scheme, path and query equal those
 * of a registered loopback pattern whatever its port (RFC 8252 §7.3, as the reference's library).
 */
export function redirectAllowed(uri: string, patterns: readonly string[]): boolean {
  if (uri.length > 2048 || (uri.includes('@') && hasUserInfo(uri))) return false;
  if (patterns.some((p) => globToRegExp(p).test(uri))) return true;
  const u = parseUrl(uri);
  if (!u || !LOOPBACK_HOSTS.has(u.hostname)) return false;
  return patterns.some((p) => {
    const r = parseUrl(p.replace(':*', ''));
    return (
      r !== undefined &&
      LOOPBACK_HOSTS.has(r.hostname) &&
      r.hostname === u.hostname &&
      r.protocol === u.protocol &&
      r.pathname === u.pathname &&
      r.search === u.search
    );
  });
}
