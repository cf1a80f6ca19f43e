/**
 * The ZitiQL tokenizer (docs/reference-notes.md §1.1).
 *
 * It is pulled lazily by the parser, one token at a time, so that the *first* error in reading order
 * is the one reported, as the reference's streaming parser does (§1.8).
 * Whitespace is not a token: each token records how many whitespace characters precede it, and the
 * parser enforces where the grammar requires (`and`, `in`, `between`…) or forbids (`isEmpty(`) it.
 * Matching is longest-match, like the reference's generated lexer: `android` is an identifier, `and`
 * a keyword, `tags.and` an identifier.
 */
import { filterError, type FilterErrorCode } from './ast.js';

export type TokenKind =
  | 'ident'
  | 'string'
  | 'number'
  | 'datetime'
  | 'cmp'
  | 'and'
  | 'or'
  | 'not'
  | 'in'
  | 'between'
  | 'contains'
  | 'bool'
  | 'null'
  | 'allOf'
  | 'anyOf'
  | 'count'
  | 'isEmpty'
  | 'sort'
  | 'by'
  | 'asc'
  | 'desc'
  | 'skip'
  | 'limit'
  | 'none'
  | 'from'
  | 'where'
  | '('
  | ')'
  | '['
  | ']'
  | ','
  | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** The source text of the token (`<EOF>` at the end), used verbatim in error messages. */
  readonly text: string;
  /** 1-based line and 0-based column of the first character (the reference's convention, §1.8). */
  readonly line: number;
  readonly column: number;
  /** Number of whitespace characters directly before the token. */
  readonly ws: number;
  /** Decoded value: string contents, number, ISO datetime, or bool. */
  readonly value?: string | number | boolean;
  /** Numbers: whether the literal is an int64 (§1.1). */
  readonly isInt?: boolean;
  /** `in` / `between` / `contains`: whether it was written `not in` etc. */
  readonly negated?: boolean;
  /** `contains`: whether it is `icontains`. */
  readonly caseInsensitive?: boolean;
}

/** Keywords, matched case-insensitively against a whole identifier without dots (§1.1). A Map, so `constructor` is no keyword. */
const KEYWORDS: ReadonlyMap<string, TokenKind> = new Map(
  Object.entries({
    and: 'and',
    or: 'or',
    not: 'not',
    in: 'in',
    between: 'between',
    contains: 'contains',
    icontains: 'contains',
    true: 'bool',
    false: 'bool',
    null: 'null',
    allof: 'allOf',
    anyof: 'anyOf',
    count: 'count',
    isempty: 'isEmpty',
    sort: 'sort',
    by: 'by',
    asc: 'asc',
    desc: 'desc',
    skip: 'skip',
    limit: 'limit',
    none: 'none',
    from: 'from',
    where: 'where',
  } satisfies Record<string, TokenKind>),
);

const isWs = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isLetter = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z]$/.test(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Formats the reference's syntax error text (§1.8). */
export function syntaxErrorMessage(symbol: string, line: number, column: number): string {
  return `Unexpected symbol: "${symbol}" at line: ${line} column: ${column}. line: ${line}, column: ${column}, symbol: ${symbol}`;
}

/** parity: RFC 3339 as the reference lexer spells it (§1.1): `YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)`. */
const RFC3339 =
  /^(\d+)-(0[1-9]|1[012])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.(\d+))?([Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)/;

export class Lexer {
  private pos = 0;
  private line = 1;
  private lineStart = 0;

  constructor(
    private readonly src: string,
    private readonly errorCode: FilterErrorCode = 'INVALID_FILTER',
  ) {}

  /** Reads the next token, throwing a syntax error at the first character that starts no token. */
  next(): Token {
    let ws = 0;
    while (isWs(this.src[this.pos])) {
      this.advance(1);
      ws++;
    }
    const start = this.pos;
    const line = this.line;
    const column = start - this.lineStart;
    const tok = (kind: TokenKind, end: number, extra: Partial<Token> = {}): Token => {
      const text = this.src.slice(start, end);
      this.advance(end - start);
      return { kind, text, line, column, ws, ...extra };
    };
    const c = this.src[start];
    if (c === undefined) return { kind: 'eof', text: '<EOF>', line, column, ws };
    switch (c) {
      case '(':
      case ')':
      case '[':
      case ']':
      case ',':
        return tok(c, start + 1);
      case '=':
        return tok('cmp', start + 1, { value: '=' });
      case '!':
        if (this.src[start + 1] === '=') return tok('cmp', start + 2, { value: '!=' });
        break;
      case '<':
      case '>': {
        const end = this.src[start + 1] === '=' ? start + 2 : start + 1;
        return tok('cmp', end, { value: this.src.slice(start, end) });
      }
      case '"':
        return this.string(start, tok);
      case "'":
        return this.quotedIdent(start, tok);
    }
    if (c === '-' || isDigit(c)) {
      const end = this.numberEnd(start);
      if (end !== null) {
        const text = this.src.slice(start, end);
        return tok('number', end, { value: Number(text), isInt: isInt64(text) });
      }
    }
    if (isLetter(c)) return this.word(start, tok);
    throw this.error(c, line, column);
  }

  private error(symbol: string, line: number, column: number) {
    return filterError(syntaxErrorMessage(symbol, line, column), this.errorCode);
  }

  /** Moves forward, tracking line/column (an LF starts a new line). */
  private advance(n: number): void {
    for (let i = 0; i < n; i++) {
      if (this.src[this.pos] === '\n') {
        this.line++;
        this.lineStart = this.pos + 1;
      }
      this.pos++;
    }
  }

  /** parity: `-?INT(.digits)?([eE][+-]?INT)?` where INT is `0` or `[1-9][0-9]*` (§1.1), so `01` is two numbers. */
  private numberEnd(start: number): number | null {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?(?:0|[1-9]\d*))?/.exec(this.src.slice(start));
    return m ? start + m[0].length : null;
  }

  /** parity: double quotes only; escapes `\" \\ \f \n \r \t`; no raw control characters (§1.1). */
  private string(start: number, tok: (k: TokenKind, end: number, extra?: Partial<Token>) => Token): Token {
    const escapes: Record<string, string> = { '"': '"', '\\': '\\', f: '\f', n: '\n', r: '\r', t: '\t' };
    let out = '';
    let i = start + 1;
    for (;;) {
      const ch = this.src[i];
      if (ch === undefined || ch.charCodeAt(0) < 0x20) break;
      if (ch === '"') return tok('string', i + 1, { value: out });
      if (ch === '\\') {
        const esc = escapes[this.src[i + 1] ?? ''];
        if (esc === undefined) break;
        out += esc;
        i += 2;
      } else {
        out += ch;
        i++;
      }
    }
    // The string never closed properly: report its opening quote, where the token failed to start.
    throw this.error('"', this.line, start - this.lineStart);
  }

  /** parity: `'name'` is an identifier whose quotes stay part of the symbol, so it later fails as unknown (§1.1). */
  private quotedIdent(start: number, tok: (k: TokenKind, end: number, extra?: Partial<Token>) => Token): Token {
    const end = this.identEnd(start + 1);
    if (end !== null && this.src[end] === "'") return tok('ident', end + 1);
    throw this.error("'", this.line, start - this.lineStart);
  }

  /**
   * The end of an identifier starting at `start`, or null.
   * parity: letter then letters/underscore; dot-separated segments, which after a dot may also contain
   * `-`; digits are not allowed, so `tags.foo1` lexes as `tags.foo` `1` (§1.1).
   */
  private identEnd(start: number): number | null {
    const m = /^[A-Za-z][A-Za-z_]*(?:\.[A-Za-z][A-Za-z_-]*)*/.exec(this.src.slice(start));
    return m ? start + m[0].length : null;
  }

  private word(start: number, tok: (k: TokenKind, end: number, extra?: Partial<Token>) => Token): Token {
    const end = this.identEnd(start)!;
    const word = this.src.slice(start, end);
    if (word === 'datetime' && this.src[end] === '(') {
      const dt = this.datetime(end + 1);
      if (dt) return tok('datetime', dt.end, { value: dt.iso });
    }
    const kind = KEYWORDS.get(word.toLowerCase());
    if (kind === undefined) return tok('ident', end);
    if (kind === 'not') {
      const compound = this.notCompound(end);
      if (compound) return tok(compound.kind, compound.end, { negated: true, caseInsensitive: compound.ci });
    }
    if (kind === 'bool') return tok(kind, end, { value: word.toLowerCase() === 'true' });
    if (kind === 'contains') return tok(kind, end, { negated: false, caseInsensitive: word.length === 9 });
    if (kind === 'in' || kind === 'between') return tok(kind, end, { negated: false });
    return tok(kind, end);
  }

  /**
   * `not` directly followed by whitespace and `in` / `between` / `contains` / `icontains` is a single token,
   * taken greedily whatever follows (longest match).
   * parity: `not in` allows exactly one whitespace character, the others one or more, so `not  in` is a
   * syntax error (§1.1).
   */
  private notCompound(end: number): { kind: TokenKind; end: number; ci: boolean } | null {
    let i = end;
    while (isWs(this.src[i])) i++;
    const gap = i - end;
    if (gap === 0) return null;
    const rest = this.src.slice(i, i + 9).toLowerCase();
    if (rest.startsWith('icontains')) return { kind: 'contains', end: i + 9, ci: true };
    if (rest.startsWith('contains')) return { kind: 'contains', end: i + 8, ci: false };
    if (rest.startsWith('between')) return { kind: 'between', end: i + 7, ci: false };
    if (rest.startsWith('in') && gap === 1) return { kind: 'in', end: i + 2, ci: false };
    return null;
  }

  /**
   * parity: `datetime(` must be lowercase (`DATETIME(` fails), then optional spaces, an RFC 3339
   * timestamp, optional spaces and `)` (§1.1). Returns null when the text is not such a literal, so
   * `datetime` falls back to being an identifier and the parser reports it.
   */
  private datetime(from: number): { end: number; iso: string } | null {
    let i = from;
    while (isWs(this.src[i])) i++;
    const m = RFC3339.exec(this.src.slice(i));
    if (!m) return null;
    i += m[0].length;
    while (isWs(this.src[i])) i++;
    if (this.src[i] !== ')') return null;
    const iso = rfc3339ToIso(m);
    if (iso === null) throw filterError(`invalid datetime '${m[0]}'`, this.errorCode);
    return { end: i + 1, iso };
  }
}

/** int64 if it has no fraction/exponent and fits (§1.1 "parsed as int64 if possible else float64"). */
function isInt64(text: string): boolean {
  if (!/^-?\d+$/.test(text)) return false;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

/**
 * Converts a matched RFC 3339 timestamp to ISO-8601 UTC with milliseconds (the stored format), or null when
 * it names no real instant (e.g. Feb 30, second 60). Sub-millisecond digits are truncated: stored values
 * only have milliseconds.
 */
function rfc3339ToIso(m: RegExpExecArray): string | null {
  const [, y, mo, d, h, mi, s, frac, zone] = m as unknown as string[];
  if (y!.length !== 4 || s === '60') return null;
  const ms = Number((frac ?? '').padEnd(3, '0').slice(0, 3));
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  if (date.getUTCMonth() !== Number(mo) - 1) return null;
  date.setUTCHours(Number(h), Number(mi), Number(s), ms);
  let offsetMin = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    offsetMin = sign * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  }
  const t = date.getTime() - offsetMin * 60_000;
  if (!Number.isFinite(t)) return null;
  return new Date(t).toISOString();
}
