/**
 * The saved login of the admin CLI: controller URL, username, session token and the CA to trust, kept in
 * `config.json` under `$EDGECTL_CONFIG_DIR` (else `$XDG_CONFIG_HOME/edgectl`, else `~/.config/edgectl`).
 *
 * The token is a bearer credential, so the directory is created 0700 and the file written 0600 through a
 * temporary file and a rename (never world-readable, even for a moment). parity: the reference keeps
 * `ziti-cli.json` the same way, with logins keyed by name and a `default` (docs/reference-notes.md §11);
 * only the `default` login is used for now, the map leaves room for `--cli-identity`.
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
  method?: 'password' | 'cert';
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
}

interface ConfigFile {
  default: string;
  logins: Record<string, SavedLogin>;
}

export const CONFIG_FILE = 'config.json';
const DEFAULT_NAME = 'default';

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.EDGECTL_CONFIG_DIR) return env.EDGECTL_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'edgectl');
}

export class SessionStore {
  readonly dir: string;
  readonly file: string;

  constructor(env: NodeJS.ProcessEnv) {
    this.dir = configDir(env);
    this.file = join(this.dir, CONFIG_FILE);
  }

  private read(): ConfigFile {
    if (!existsSync(this.file)) return { default: DEFAULT_NAME, logins: {} };
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<ConfigFile>;
      return { default: parsed.default ?? DEFAULT_NAME, logins: parsed.logins ?? {} };
    } catch (e) {
      throw new CliError(`error: cannot read ${this.file}: ${(e as Error).message} (remove it and log in again)`, 1);
    }
  }

  private write(cfg: ConfigFile): void {
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  /** The login commands use, or undefined when nobody is logged in. */
  current(): SavedLogin | undefined {
    const cfg = this.read();
    return cfg.logins[cfg.default];
  }

  save(login: SavedLogin): void {
    const cfg = this.read();
    cfg.logins[cfg.default] = login;
    this.write(cfg);
  }

  /** Forgets the current login; removes the file when no login is left. */
  remove(): void {
    const cfg = this.read();
    delete cfg.logins[cfg.default];
    if (Object.keys(cfg.logins).length === 0) rmSync(this.file, { force: true });
    else this.write(cfg);
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
      throw new CliError(`${(e as Error).message}\nhint: this login uses the identity file ${login.identityFile}; restore it or ${relogin}`, 1);
    }
  }
  if (login.certFile || login.keyFile) {
    const read = (file: string | undefined, what: string) => {
      try {
        return readFileSync(file ?? '', 'utf8');
      } catch (e) {
        throw new CliError(`error: cannot read the client ${what} this login uses (${file}): ${(e as Error).message}; restore it or ${relogin}`, 1);
      }
    };
    return { cert: read(login.certFile, 'certificate'), key: read(login.keyFile, 'key') };
  }
  return undefined;
}
