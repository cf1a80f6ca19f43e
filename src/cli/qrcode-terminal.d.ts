/** The part of `qrcode-terminal` (no published types) that `edgectl mfa enable` uses. */
declare module 'qrcode-terminal' {
  const qrcodeTerminal: {
    generate(input: string, opts: { small?: boolean }, cb: (qr: string) => void): void;
  };
  export default qrcodeTerminal;
}
