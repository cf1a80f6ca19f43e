/**
 * Where the CLI gets an MFA code from: an option, then (for `login`) $EDGECTL_MFA_CODE, then a prompt on a
 * terminal; without any of them the command fails saying how to give one (exit 2, like missing credentials).
 */
import { CliError, type CliIo } from './io.js';

export interface CodeSource {
  /** The option's value, when given. */
  option?: string;
  /** The option's name for the error message, e.g. `--mfa-code`. */
  optionName: string;
  /** Also read $EDGECTL_MFA_CODE (login only: a code is short-lived, commands take it per call). */
  env?: boolean;
  /** What the code is for, in the prompt and the error. */
  purpose: string;
}

export const MFA_CODE_ENV = 'EDGECTL_MFA_CODE';

/** A code, or a CliError saying how to give one. */
export async function mfaCode(io: CliIo, src: CodeSource): Promise<string> {
  const given = src.option ?? (src.env ? io.env[MFA_CODE_ENV] : undefined);
  if (given !== undefined && given.trim() !== '') return given.trim();
  if (io.isTTY) {
    const { input } = await import('@inquirer/prompts');
    return (
      await input({
        message: `${src.purpose} (6-digit code from the authenticator app, or a recovery code)`,
        validate: (v) => /^[0-9A-Za-z]{4,6}$/.test(v.trim()) || 'a code of 4 to 6 letters or digits',
      })
    ).trim();
  }
  const env = src.env ? ` or set ${MFA_CODE_ENV}` : '';
  throw new CliError(
    `error: ${src.purpose} needs an MFA code and there is no terminal to ask: pass ${src.optionName} CODE${env}`,
    2,
  );
}
