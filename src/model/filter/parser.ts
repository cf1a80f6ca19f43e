/**
 * Recursive-descent parser for ZitiQL (docs/reference-notes.md §1.2), producing the untyped AST of
 * {@link ./ast.ts}. Type checking against a resource's fields is a separate step ({@link ./typecheck.ts}).
 *
 * Grouping follows the reference, not SQL (§1.3): `and` / `or` have no relative precedence and a chain
 * nests to the right (`a and b or c` is `a and (b or c)`), and `not` takes everything to its right.
 */
import {
  filterError,
  type ArrayLiteral,
  type BoolExpr,
  type DatetimeLiteral,
  type FilterErrorCode,
  type FilterQuery,
  type Lhs,
  type Literal,
  type NumberLiteral,
  type SetExpr,
  type SortField,
  type StringLiteral,
  type SymbolRef,
} from './ast.js';
import { Lexer, syntaxErrorMessage, type Token, type TokenKind } from './lexer.js';
import { checkSort } from './typecheck.js';
import type { FieldTable } from './fields.js';

/**
 * Parses a `filter` query parameter.
 * parity: only the empty string means "no filter" (§1.5.1); anything else must be a whole query, so
 * whitespace alone is a syntax error. Throws `INVALID_FILTER` (§1.8).
 */
export function parseFilter(text: string): FilterQuery {
  if (text === '') return { predicate: null, sort: [] };
  const p = new Parser(text, 'INVALID_FILTER');
  const q = p.query();
  p.expect('eof');
  return q;
}

/**
 * Parses and checks a URL `sort=` parameter such as `name desc, createdAt` (the field list of a
 * `sort by` clause) against a resource's fields.
 * parity: used only when the filter has no sort of its own; every error is `INVALID_SORT_IDENTIFIER` (§1.6).
 */
export function parseSortParam(text: string, fields: FieldTable): SortField[] {
  const p = new Parser(text, 'INVALID_SORT_IDENTIFIER');
  const sort = p.sortFields();
  p.expect('eof');
  checkSort(sort, fields, 'INVALID_SORT_IDENTIFIER');
  return sort;
}

/** Tokens that begin a predicate-less clause of a query. */
const CLAUSE_KINDS: ReadonlySet<TokenKind> = new Set(['sort', 'skip', 'limit']);
/** Tokens that turn an identifier / set function into an operation's left-hand side. */
const OPERATOR_KINDS: ReadonlySet<TokenKind> = new Set(['cmp', 'in', 'between', 'contains']);

class Parser {
  private readonly lexer: Lexer;
  private readonly buf: Token[] = [];

  constructor(
    text: string,
    private readonly errorCode: FilterErrorCode,
  ) {
    this.lexer = new Lexer(text, errorCode);
  }

  // ---- token plumbing -------------------------------------------------------------------------

  private peek(k = 0): Token {
    while (this.buf.length <= k) this.buf.push(this.lexer.next());
    return this.buf[k]!;
  }

  private take(): Token {
    const t = this.peek();
    this.buf.shift();
    return t;
  }

  private fail(t: Token): never {
    throw filterError(syntaxErrorMessage(t.text, t.line, t.column), this.errorCode);
  }

  /** Consumes a token of `kind` or reports the token found instead. */
  expect(kind: TokenKind): Token {
    const t = this.peek();
    if (t.kind !== kind) this.fail(t);
    return this.take();
  }

  /** parity: word operators need whitespace around them (§1.1); the grammar's `WS+`. */
  private needWs(t: Token): void {
    if (t.ws === 0) this.fail(t);
  }

  /** The grammar's "no whitespace here", e.g. between `isEmpty` and `(`. */
  private noWs(t: Token): void {
    if (t.ws !== 0) this.fail(t);
  }

  // ---- query ----------------------------------------------------------------------------------

  /** `boolExpr [sortBy] [skip] [limit] | sortBy [skip] [limit] | skip [limit] | limit` (§1.2). */
  query(): FilterQuery {
    let predicate: BoolExpr | null = null;
    let sort: SortField[] = [];
    let skip: number | undefined;
    let limit: number | 'none' | undefined;
    let any = false;
    if (!CLAUSE_KINDS.has(this.peek().kind)) {
      predicate = this.boolExpr();
      any = true;
    }
    // parity: clause order is fixed, sort then skip then limit; `limit 5 skip 2` is an error (§1.2).
    if (this.peek().kind === 'sort') {
      if (any) this.needWs(this.peek());
      this.take();
      this.needWs(this.expect('by'));
      this.needWs(this.peek());
      sort = this.sortFields();
      any = true;
    }
    if (this.peek().kind === 'skip') {
      if (any) this.needWs(this.peek());
      this.take();
      skip = this.integer();
      any = true;
    }
    if (this.peek().kind === 'limit') {
      if (any) this.needWs(this.peek());
      this.take();
      const t = this.peek();
      this.needWs(t);
      if (t.kind === 'none') {
        this.take();
        limit = 'none';
      } else {
        limit = this.integer();
      }
      any = true;
    }
    if (!any) this.fail(this.peek());
    const q: FilterQuery = { predicate, sort };
    return { ...q, ...(skip !== undefined && { skip }), ...(limit !== undefined && { limit }) };
  }

  /** The NUMBER of `skip` / `limit`, which must be an integer. */
  private integer(): number {
    const t = this.peek();
    this.needWs(t);
    if (t.kind !== 'number' || !t.isInt) this.fail(t);
    this.take();
    return t.value as number;
  }

  /** `field [asc|desc] ("," field [asc|desc])*` (the body of `sort by`, also the URL `sort` param). */
  sortFields(): SortField[] {
    const out: SortField[] = [];
    for (;;) {
      const name = this.expect('ident').text;
      let direction: 'asc' | 'desc' = 'asc';
      const t = this.peek();
      if (t.kind === 'asc' || t.kind === 'desc') {
        this.needWs(t);
        this.take();
        direction = t.kind;
      }
      out.push({ kind: 'sortField', symbol: name, direction });
      if (this.peek().kind !== ',') return out;
      this.take();
    }
  }

  // ---- boolean expressions --------------------------------------------------------------------

  /**
   * `unary [(and|or) boolExpr]`.
   * parity: the right operand is a whole expression, so chains nest to the right and `and`/`or` have
   * no relative precedence (§1.3).
   */
  private boolExpr(): BoolExpr {
    const left = this.unary();
    const t = this.peek();
    if (t.kind !== 'and' && t.kind !== 'or') return left;
    this.needWs(t);
    this.take();
    this.needWs(this.peek());
    return { kind: t.kind, left, right: this.boolExpr() };
  }

  private unary(): BoolExpr {
    const t = this.peek();
    switch (t.kind) {
      case 'not': {
        // parity: `not` negates everything to its right, `not a and b` is `not (a and b)` (§1.3).
        this.take();
        this.needWs(this.peek());
        return { kind: 'not', expr: this.boolExpr() };
      }
      case '(': {
        this.take();
        const e = this.boolExpr();
        this.expect(')');
        return e;
      }
      case 'bool':
        this.take();
        return { kind: 'boolConst', value: t.value as boolean };
      case 'isEmpty': {
        this.take();
        return { kind: 'isEmpty', set: this.setCall() };
      }
      case 'ident': {
        if (!OPERATOR_KINDS.has(this.peek(1).kind)) {
          this.take();
          return { kind: 'boolSymbol', symbol: { kind: 'symbol', name: t.text } };
        }
        this.take();
        return this.operation({ kind: 'symbol', name: t.text });
      }
      case 'allOf':
      case 'anyOf': {
        this.take();
        this.noWs(this.expect('('));
        const symbol: SymbolRef = { kind: 'symbol', name: this.expect('ident').text };
        this.expect(')');
        return this.operation({ kind: 'quantified', fn: t.kind, symbol });
      }
      case 'count': {
        this.take();
        return this.operation({ kind: 'count', set: this.setCall() });
      }
      default:
        this.fail(t);
    }
  }

  /** `"(" setExpr ")"` right after `isEmpty` / `count`, with no whitespace before the parenthesis. */
  private setCall(): SetExpr {
    this.noWs(this.peek());
    this.expect('(');
    let set: SetExpr;
    if (this.peek().kind === 'from') {
      this.take();
      this.needWs(this.peek());
      const type: SymbolRef = { kind: 'symbol', name: this.expect('ident').text };
      this.needWs(this.expect('where'));
      this.needWs(this.peek());
      set = { kind: 'subQuery', type, query: this.query() };
    } else {
      set = { kind: 'symbol', name: this.expect('ident').text };
    }
    this.expect(')');
    return set;
  }

  /** The operator and literal(s) after a left-hand side (§1.2 `operation`). */
  private operation(left: Lhs): BoolExpr {
    const t = this.peek();
    switch (t.kind) {
      case 'cmp': {
        this.take();
        const op = t.value as '=' | '!=' | '<' | '<=' | '>' | '>=';
        const r = this.peek();
        // parity: null and bool only with = / != (`x > null` is a syntax error, §1.2).
        const eq = op === '=' || op === '!=';
        if (!(
          r.kind === 'string' ||
          r.kind === 'number' ||
          r.kind === 'datetime' ||
          (eq && (r.kind === 'bool' || r.kind === 'null'))
        )) {
          this.fail(r);
        }
        return { kind: 'compare', op, left, right: this.literal() };
      }
      case 'in': {
        this.needWs(t);
        this.take();
        this.needWs(this.peek());
        return { kind: 'in', negated: t.negated === true, left, values: this.array() };
      }
      case 'between': {
        this.needWs(t);
        this.take();
        const lo = this.peek();
        this.needWs(lo);
        if (lo.kind !== 'number' && lo.kind !== 'datetime') this.fail(lo);
        const lower = this.literal() as NumberLiteral | DatetimeLiteral;
        this.needWs(this.peek());
        this.expect('and');
        const hi = this.peek();
        this.needWs(hi);
        if (hi.kind !== lo.kind) this.fail(hi);
        const upper = this.literal() as NumberLiteral | DatetimeLiteral;
        return { kind: 'between', negated: t.negated === true, left, lower, upper };
      }
      case 'contains': {
        this.take();
        const r = this.peek();
        this.needWs(r);
        // parity: icontains takes only a string, contains a string or number (§1.2).
        if (r.kind !== 'string' && (t.caseInsensitive || r.kind !== 'number')) this.fail(r);
        const right = this.literal() as StringLiteral | NumberLiteral;
        return {
          kind: 'contains',
          negated: t.negated === true,
          caseInsensitive: t.caseInsensitive === true,
          left,
          right,
        };
      }
      default:
        this.fail(t);
    }
  }

  /** Consumes one literal token (the caller has checked its kind). */
  private literal(): Literal {
    const t = this.take();
    switch (t.kind) {
      case 'string':
        return { kind: 'string', value: t.value as string };
      case 'number':
        return { kind: 'number', value: t.value as number, isInt: t.isInt === true, text: t.text };
      case 'datetime':
        return { kind: 'datetime', iso: t.value as string, text: t.text };
      case 'bool':
        return { kind: 'bool', value: t.value as boolean };
      case 'null':
        return { kind: 'null' };
      default:
        this.fail(t);
    }
  }

  /** parity: `[v1, v2]` of one literal kind; empty arrays are a syntax error (§1.1). */
  private array(): ArrayLiteral {
    this.expect('[');
    const first = this.peek();
    if (first.kind !== 'string' && first.kind !== 'number' && first.kind !== 'datetime') this.fail(first);
    const values = [this.literal() as ArrayLiteral['values'][number]];
    while (this.peek().kind === ',') {
      this.take();
      if (this.peek().kind !== first.kind) this.fail(this.peek());
      values.push(this.literal() as ArrayLiteral['values'][number]);
    }
    this.expect(']');
    return { kind: 'array', elementKind: first.kind, values };
  }
}
