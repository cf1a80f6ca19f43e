/**
 * The OIDC provider's refusals, in the shapes the reference gives per endpoint (docs/reference-notes.md §14). Login endpoints throw the usual
 * DomainError (written there as a bare `{code, message}`); these are the protocol's own.
 */

/** A token-endpoint (and revoke) refusal: 400 `{error, error_description}` (docs/reference-notes.md §14.6; 500 for `server_error`). */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
  get status(): number {
    return this.error === 'server_error' ? 500 : 400;
  }
}

/** An authorize request that cannot be answered by a redirect (no client, no allowed redirect URI): 400 text (§14.3). */
export class AuthorizeRefusal extends Error {}

/** An authorize (or callback) refusal told to the client on its redirect URI (§14.3, §14.5). */
export class AuthorizeRedirect extends Error {
  constructor(
    readonly redirectUri: string,
    readonly state: string | null,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }

  /** `redirect_uri?error=…&error_description=…&state=…`. */
  get location(): string {
    return withQuery(this.redirectUri, {
      error: this.error,
      error_description: this.description,
      ...(this.state !== null && { state: this.state }),
    });
  }
}

/** `uri` with `params` added to its query. */
export function withQuery(uri: string, params: Record<string, string>): string {
  const q = new URLSearchParams(params).toString();
  return uri + (uri.includes('?') ? '&' : '?') + q;
}
