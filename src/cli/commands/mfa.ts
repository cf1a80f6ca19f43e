/**
 * `edgectl mfa enable|disable|recovery-codes`: TOTP MFA of the logged-in identity (docs/decisions.md, "TOTP
 * MFA"). `enable` shows the provisioning QR code on a terminal plus the secret, verifies the first code and
 * prints the recovery codes once; without a terminal it prints the secret and stops, and `mfa enable --code`
 * finishes the same enrollment (so scripts can compute the code in between).
 */
import type { Command } from 'commander';
import { ApiError, requireApi, type Api } from '../api.js';
import { CliError, type CliIo } from '../io.js';
import { mfaCode } from '../mfa-code.js';

interface MfaDetail {
  isVerified: boolean;
  provisioningUrl?: string;
  recoveryCodes?: string[];
}

const MFA = '/current-identity/mfa';

async function detail(api: Api): Promise<MfaDetail | undefined> {
  try {
    return (await api.call<{ data: MfaDetail }>('GET', MFA)).data;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

/** Recovery codes, five to a line. */
function printCodes(io: CliIo, codes: string[]): void {
  for (let i = 0; i < codes.length; i += 5) io.out(codes.slice(i, i + 5).join('  '));
}

async function showQr(io: CliIo, url: string): Promise<void> {
  const { default: qrcodeTerminal } = await import('qrcode-terminal');
  await new Promise<void>((resolve) =>
    qrcodeTerminal.generate(url, { small: true }, (qr) => {
      io.out(qr);
      resolve();
    }),
  );
}

const wrongCode = (e: unknown, hint: string): unknown =>
  e instanceof ApiError && e.code === 'MFA_INVALID_TOKEN' ? new ApiError(e.status, e.body, hint) : e;

export function registerMfa(program: Command, io: CliIo): void {
  const mfa = program
    .command('mfa')
    .description('TOTP multi-factor authentication of the logged-in identity')
    .addHelpText(
      'after',
      '\nCodes come from --code, else a prompt on a terminal. Recovery codes are shown once, when they are made\n' +
        '(`mfa enable`, `mfa recovery-codes --regenerate`); each works once in place of a code.',
    );

  mfa
    .command('enable')
    .description('enroll in TOTP MFA: shows a QR code and the secret, verifies a first code, prints recovery codes')
    .option('--code <code>', 'the current code of the authenticator app (else asked for on a terminal)')
    .action(async (opts: { code?: string }) => {
      const api = requireApi(io);
      let resumed = false;
      try {
        await api.call('POST', MFA);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 'MFA_EXISTS')) throw e;
        resumed = true;
      }
      const d = await detail(api);
      if (!d) throw new CliError('error: the enrollment disappeared; run `edgectl mfa enable` again', 1);
      if (d.isVerified)
        throw new CliError('error: MFA is already enabled for this identity (`edgectl mfa disable` removes it)', 1);
      const url = d.provisioningUrl;
      // Only the API session that started an enrollment is shown its secret (docs/decisions.md, TOTP MFA).
      if (!url)
        throw new CliError(
          'error: an enrollment started by another login is pending; only that login can finish it. ' +
            '`edgectl mfa disable` removes it, then run `edgectl mfa enable` again',
          1,
        );
      const secret = new URL(url).searchParams.get('secret') ?? '';
      if (resumed) io.err('note: continuing the enrollment started before (not verified yet)');
      if (io.isTTY && opts.code === undefined) {
        io.out('Scan this QR code with an authenticator app, or enter the secret by hand:');
        await showQr(io, url);
      }
      io.out(`secret: ${secret}`);
      io.out(`url: ${url}`);
      if (opts.code === undefined && !io.isTTY)
        io.err('note: the enrollment is started; finish it with `edgectl mfa enable --code CODE`');
      const code = await mfaCode(io, { option: opts.code, optionName: '--code', purpose: 'mfa enable' });
      try {
        await api.call('POST', `${MFA}/verify`, { code });
      } catch (e) {
        throw wrongCode(
          e,
          'hint: the code was not accepted; check the clock of the device and run `edgectl mfa enable` again',
        );
      }
      io.out('MFA enabled. Recovery codes (each works once in place of a code; they are not shown again):');
      printCodes(io, d.recoveryCodes ?? []);
    });

  mfa
    .command('disable')
    .description('remove the MFA enrollment of the logged-in identity (a verified one needs a code)')
    .option('--code <code>', 'a current code or a recovery code (else asked for on a terminal)')
    .action(async (opts: { code?: string }) => {
      const api = requireApi(io);
      const d = await detail(api);
      if (!d) throw new CliError('error: NOT_FOUND: this identity has no MFA enrollment', 1);
      const headers = d.isVerified
        ? {
            'mfa-validation-code': await mfaCode(io, {
              option: opts.code,
              optionName: '--code',
              purpose: 'mfa disable',
            }),
          }
        : undefined;
      try {
        await api.call('DELETE', MFA, undefined, { headers });
      } catch (e) {
        throw wrongCode(e, 'hint: give a current code of the authenticator app or an unused recovery code');
      }
      io.out('MFA disabled');
    });

  mfa
    .command('recovery-codes')
    .description('count the remaining recovery codes, or with --regenerate replace them all and print the new ones')
    .option('--regenerate', 'make 20 new recovery codes (the old ones stop working)')
    .option('--code <code>', 'a current code (for --regenerate also a recovery code); else asked for on a terminal')
    .action(async (opts: { regenerate?: boolean; code?: string }) => {
      const api = requireApi(io);
      const purpose = opts.regenerate ? 'mfa recovery-codes --regenerate' : 'mfa recovery-codes';
      const code = await mfaCode(io, { option: opts.code, optionName: '--code', purpose });
      try {
        if (opts.regenerate) {
          const res = await api.call<{ data: { recoveryCodes?: string[] } }>('POST', `${MFA}/recovery-codes`, { code });
          io.out('New recovery codes (each works once; they are not shown again):');
          printCodes(io, res.data.recoveryCodes ?? []);
        } else {
          const res = await api.call<{ data: { recoveryCodes?: string[] } }>(
            'GET',
            `${MFA}/recovery-codes`,
            undefined,
            {
              headers: { 'mfa-validation-code': code },
            },
          );
          const n = res.data.recoveryCodes?.length ?? 0;
          io.out(
            `${n} recovery code${n === 1 ? '' : 's'} left (shown only when made; \`--regenerate\` makes new ones)`,
          );
        }
      } catch (e) {
        throw wrongCode(e, 'hint: give a current code of the authenticator app (a code is accepted once)');
      }
    });
}
