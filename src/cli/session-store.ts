/**
 * The saved logins of the CLI, one per named context: controller URL, username, session token and the CA to
 * trust, kept in `config.json` under `$EDGECTL_CONFIG_DIR` (else `$XDG_CONFIG_HOME/edgectl`, else
 * `~/.config/edgectl`). `default` names the current context; `--context NAME` or `$EDGECTL_CONTEXT` picks
 * another for one command (docs/decisions.md, CLI contexts).
 *
 * The token is a bearer credential, so the directory is created 0700 and the file written 0600 through a
 * temporary file and a rename (never world-readable, even for a moment). parity: the reference keeps
 * `ziti-cli.json` the same way, with logins keyed by name and a `default` (docs/reference-notes.md §11).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readIdentityFile } from './identity-file.js';
import { CliError } from './io.js';
import type { ClientCertificate } from './transport/http.js';

export interface SavedLogin {
  /** Controller root, e.g. `https://127.0.0.1:1280`. */
  url: string;
  /** The updb username, or for a certificate login the identity's name. */
  username: string;
  /** How the session was obtained; absent in logins saved before certificate logins existed: `password`. */
  method?: 'password' | 'cert' | 'ext-jwt';
  /** The API session token, sent as `zt-session`. */
  token: string;
  /** PEM bundle to trust for this controller; absent when the system roots already trust it. */
  caCert?: string;
  /** ISO time of the login. */
  loginTime: string;
  /**
   * Certificate logins: where the client certificate and key are (absolute paths), read again by every command
   * so the session is always used over mutual TLS with the certificate that opened it. Paths, not copies: the
   * private key stays in the one file its owner manages (e.g. the identity file `edgectl enroll` wrote).
   */
  identityFile?: string;
  certFile?: string;
  keyFile?: string;
  /**
   * An OIDC login (`edgectl login --oidc`): its tokens, sent as `Authorization: Bearer` and refreshed when the
   * access token expires (cli/oidc.ts); `token` is then empty.
   */
  oidc?: OidcTokens;
}

/** The tokens of an OIDC login, with when each expires (ISO times, from their `exp`). */
export interface OidcTokens {
  accessToken: string;
  accessExpiresAt: string;
  refreshToken?: string;
  refreshExpiresAt?: string | undefined;
  idToken?: string;
  /** The public client the tokens were issued to (`native`, as the Go SDK). */
  clientId: string;
}

interface ConfigFile {
  /** The current context. */
  default: string;
  logins: Record<string, SavedLogin>;
}

export const CONFIG_FILE = 'config.json';
export const DEFAULT_CONTEXT = 'default';

/** Context names are short words, so they are safe in file listings, prompts and shell completion. */
const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkContextName(name: string): string {
  if (!CONTEXT_NAME.test(name))
    throw new CliError(
      `error: invalid context name ${JSON.stringify(name)}: use letters, digits, '.', '_' or '-' (at most 64)`,
      2,
    );
  return name;
}

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.EDGECTL_CONFIG_DIR) return env.EDGECTL_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'edgectl');
}

export class SessionStore {
  readonly dir: string;
  readonly file: string;
  /** The context asked for by `--context` or `$EDGECTL_CONTEXT`, if any. */
  private readonly chosen: string | undefined;

  constructor(env: NodeJS.ProcessEnv) {
    this.dir = configDir(env);
    this.file = join(this.dir, CONFIG_FILE);
    this.chosen = env.EDGECTL_CONTEXT ? checkContextName(env.EDGECTL_CONTEXT) : undefined;
  }

  private read(): ConfigFile {
    if (!existsSync(this.file)) return { default: DEFAULT_CONTEXT, logins: {} };
    let parsed: Partial<ConfigFile> & Partial<SavedLogin>;
    try {
      parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<ConfigFile> & Partial<SavedLogin>;
    } catch (e) {
      throw new CliError(`error: cannot read ${this.file}: ${(e as Error).message} (remove it and log in again)`, 1);
    }
    // A file holding one bare login (no `logins` map) becomes the context `default`; the next write saves the map.
    if (parsed.logins === undefined && typeof parsed.url === 'string' && typeof parsed.token === 'string') {
      return { default: DEFAULT_CONTEXT, logins: { [DEFAULT_CONTEXT]: parsed as SavedLogin } };
    }
    return {
      default: typeof parsed.default === 'string' ? parsed.default : DEFAULT_CONTEXT,
      logins: parsed.logins ?? {},
    };
  }

  private write(cfg: ConfigFile): void {
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  /** The context commands use: the one asked for, else the current one. */
  contextName(): string {
    return this.chosen ?? this.read().default;
  }

  /** Whether the context was named for this command (`--context`, `$EDGECTL_CONTEXT`) rather than the current one. */
  get explicit(): boolean {
    return this.chosen !== undefined;
  }

  /** The name of the current context (what `context use` set). */
  currentName(): string {
    return this.read().default;
  }

  /** The login commands use, or undefined when that context has none. */
  current(): SavedLogin | undefined {
    return this.read().logins[this.contextName()];
  }

  /** Every saved login by context name. */
  all(): Record<string, SavedLogin> {
    return this.read().logins;
  }

  /**
   * Saves `login` in context `name` (default: the one commands use). The current context moves to it only when
   * the current one holds no login, so logging in a second identity never takes the first one's place silently.
   */
  save(login: SavedLogin, name = this.contextName()): void {
    const cfg = this.read();
    cfg.logins[name] = login;
    if (cfg.logins[cfg.default] === undefined) cfg.default = name;
    this.write(cfg);
  }

  /** Makes `name` the current context; it must hold a login. */
  use(name: string): void {
    const cfg = this.read();
    if (cfg.logins[name] === undefined)
      throw new CliError(`error: no context named ${JSON.stringify(name)}${this.known(cfg)}`, 1);
    cfg.default = name;
    this.write(cfg);
  }

  /** Forgets the login of context `name` (default: the one commands use); removes the file when none is left. */
  remove(name = this.contextName()): void {
    const cfg = this.read();
    if (cfg.logins[name] === undefined)
      throw new CliError(`error: no context named ${JSON.stringify(name)}${this.known(cfg)}`, 1);
    delete cfg.logins[name];
    if (Object.keys(cfg.logins).length === 0) {
      rmSync(this.file, { force: true });
      return;
    }
    // The current context went away: fall back to `default` if it still holds a login, else the first one left.
    if (cfg.default === name)
      cfg.default = cfg.logins[DEFAULT_CONTEXT] ? DEFAULT_CONTEXT : Object.keys(cfg.logins).sort()[0]!;
    this.write(cfg);
  }

  private known(cfg: ConfigFile): string {
    const names = Object.keys(cfg.logins).sort();
    return names.length > 0 ? ` (saved: ${names.join(', ')})` : ' (no saved logins: run `edgectl login` first)';
  }
}

/** The client certificate and key a certificate login must present again; undefined for password logins. */
export function clientCertificateOf(login: SavedLogin): ClientCertificate | undefined {
  const relogin = 'log in again';
  if (login.identityFile) {
    try {
      const id = readIdentityFile(login.identityFile);
      return { cert: id.cert, key: id.key };
    } catch (e) {
      throw new CliError(
        `${(e as Error).message}\nhint: this login uses the identity file ${login.identityFile}; restore it or ${relogin}`,
        1,
      );
    }
  }
  if (login.certFile || login.keyFile) {
    const read = (file: string | undefined, what: string) => {
      try {
        return readFileSync(file ?? '', 'utf8');
      } catch (e) {
        throw new CliError(
          `error: cannot read the client ${what} this login uses (${file}): ${(e as Error).message}; restore it or ${relogin}`,
          1,
        );
      }
    };
    return { cert: read(login.certFile, 'certificate'), key: read(login.keyFile, 'key') };
  }
  return undefined;
}
