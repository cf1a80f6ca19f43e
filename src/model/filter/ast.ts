/**
 * The untyped syntax tree of a ZitiQL filter, as produced by {@link ./parser.ts}.
 *
 * Nodes are readonly and tagged by `kind` (the kysely operation-node style) so later stages can switch
 * on them exhaustively. Nothing here knows about fields or SQL: symbols are plain names until the type
 * checker ({@link ./typecheck.ts}) resolves them against a resource's field table.
 * Grammar: docs/reference-notes.md §1.2.
 */
import { DomainError } from '../errors.js';
import type { CompareOp } from '../../store/filter-ast.js';

/** A double-quoted string literal, escapes already decoded. */
export interface StringLiteral {
  readonly kind: 'string';
  readonly value: string;
}

/**
 * A number literal. parity: "parsed as int64 if possible else float64" (§1.1); `isInt` records which.
 * Integers beyond 2^53 lose precision in `value`; `text` keeps the source spelling.
 */
export interface NumberLiteral {
  readonly kind: 'number';
  readonly value: number;
  readonly isInt: boolean;
  readonly text: string;
}

/** A `datetime(...)` literal; `iso` is the instant as an ISO-8601 UTC string with milliseconds. */
export interface DatetimeLiteral {
  readonly kind: 'datetime';
  readonly iso: string;
  readonly text: string;
}

export interface BoolLiteral {
  readonly kind: 'bool';
  readonly value: boolean;
}

export interface NullLiteral {
  readonly kind: 'null';
}

export type Literal = StringLiteral | NumberLiteral | DatetimeLiteral | BoolLiteral | NullLiteral;

/** `[v1, v2]`: homogeneous and never empty (parity: empty arrays are a syntax error, §1.1). */
export interface ArrayLiteral {
  readonly kind: 'array';
  readonly elementKind: 'string' | 'number' | 'datetime';
  readonly values: readonly (StringLiteral | NumberLiteral | DatetimeLiteral)[];
}

/** A (possibly dotted) identifier, e.g. `name` or `tags.env`. Quoted identifiers keep their quotes (§1.1). */
export interface SymbolRef {
  readonly kind: 'symbol';
  readonly name: string;
}

/** `from <type> where <query>`: a sub-query over a linked entity type (§1.2). */
export interface SubQuery {
  readonly kind: 'subQuery';
  readonly type: SymbolRef;
  readonly query: FilterQuery;
}

/** The argument of `count(...)` / `isEmpty(...)`. */
export type SetExpr = SymbolRef | SubQuery;

/** `anyOf(set)` / `allOf(set)` on the left of an operation: quantifies the operation over the set's elements. */
export interface QuantifiedRef {
  readonly kind: 'quantified';
  readonly fn: 'anyOf' | 'allOf';
  readonly symbol: SymbolRef;
}

/** `count(set)`: the number of elements, an int. */
export interface CountRef {
  readonly kind: 'count';
  readonly set: SetExpr;
}

/** What can stand on the left of an operation (the literal is always on the right, §1.2). */
export type Lhs = SymbolRef | QuantifiedRef | CountRef;

export type { CompareOp };

export interface AndExpr {
  readonly kind: 'and';
  readonly left: BoolExpr;
  readonly right: BoolExpr;
}

export interface OrExpr {
  readonly kind: 'or';
  readonly left: BoolExpr;
  readonly right: BoolExpr;
}

/** parity: `not` takes everything to its right (§1.3). */
export interface NotExpr {
  readonly kind: 'not';
  readonly expr: BoolExpr;
}

/** A bare `true` / `false`. */
export interface BoolConst {
  readonly kind: 'boolConst';
  readonly value: boolean;
}

/** A bare identifier used as a predicate: means `<symbol> = true` (§1.4). */
export interface BoolSymbol {
  readonly kind: 'boolSymbol';
  readonly symbol: SymbolRef;
}

export interface IsEmptyExpr {
  readonly kind: 'isEmpty';
  readonly set: SetExpr;
}

/** `lhs <op> literal`; `null` only with `=` / `!=`, bool only with `=` / `!=` (enforced by the parser). */
export interface CompareExpr {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly left: Lhs;
  readonly right: Literal;
}

/** `[not] contains` / `[not] icontains`; icontains only takes a string (§1.2). */
export interface ContainsExpr {
  readonly kind: 'contains';
  readonly negated: boolean;
  readonly caseInsensitive: boolean;
  readonly left: Lhs;
  readonly right: StringLiteral | NumberLiteral;
}

export interface InExpr {
  readonly kind: 'in';
  readonly negated: boolean;
  readonly left: Lhs;
  readonly values: ArrayLiteral;
}

/** `[not] between a and b`, half-open `a <= x < b` (§1.4); both bounds are numbers or both datetimes. */
export interface BetweenExpr {
  readonly kind: 'between';
  readonly negated: boolean;
  readonly left: Lhs;
  readonly lower: NumberLiteral | DatetimeLiteral;
  readonly upper: NumberLiteral | DatetimeLiteral;
}

export type BoolExpr =
  AndExpr | OrExpr | NotExpr | BoolConst | BoolSymbol | IsEmptyExpr | CompareExpr | ContainsExpr | InExpr | BetweenExpr;

export interface SortField {
  readonly kind: 'sortField';
  readonly symbol: string;
  readonly direction: 'asc' | 'desc';
}

/**
 * A whole filter. `predicate` null means "no predicate" (match everything, §1.5.1).
 * `limit: 'none'` is the `limit none` clause; clamping happens in the HTTP layer (§1.5).
 */
export interface FilterQuery {
  readonly predicate: BoolExpr | null;
  readonly sort: readonly SortField[];
  readonly skip?: number;
  readonly limit?: number | 'none';
}

/** Which wire code a filter error carries: INVALID_SORT_IDENTIFIER when the text came from `?sort=` (§1.6). */
export type FilterErrorCode = 'INVALID_FILTER' | 'INVALID_SORT_IDENTIFIER';

/**
 * The error every filter stage throws.
 * parity: the reference renders the underlying non-API error as `cause: {code: "UNHANDLED", message}` (§1.8).
 */
export function filterError(message: string, code: FilterErrorCode = 'INVALID_FILTER'): DomainError {
  return new DomainError(code, { cause: { code: 'UNHANDLED', message }, causeMessage: message });
}

/** Renders an expression back to filter syntax, for error messages (`operation <expr> is not supported…`). */
export function formatExpr(e: BoolExpr | Lhs | Literal | ArrayLiteral | SetExpr): string {
  switch (e.kind) {
    case 'and':
    case 'or':
      return `${formatExpr(e.left)} ${e.kind} ${formatExpr(e.right)}`;
    case 'not':
      return `not (${formatExpr(e.expr)})`;
    case 'boolConst':
      return String(e.value);
    case 'boolSymbol':
      return e.symbol.name;
    case 'isEmpty':
      return `isEmpty(${formatExpr(e.set)})`;
    case 'compare':
      return `${formatExpr(e.left)} ${e.op} ${formatExpr(e.right)}`;
    case 'contains':
      return `${formatExpr(e.left)} ${e.negated ? 'not ' : ''}${e.caseInsensitive ? 'icontains' : 'contains'} ${formatExpr(e.right)}`;
    case 'in':
      return `${formatExpr(e.left)} ${e.negated ? 'not ' : ''}in ${formatExpr(e.values)}`;
    case 'between':
      return `${formatExpr(e.left)} ${e.negated ? 'not ' : ''}between ${formatExpr(e.lower)} and ${formatExpr(e.upper)}`;
    case 'symbol':
      return e.name;
    case 'quantified':
      return `${e.fn}(${e.symbol.name})`;
    case 'count':
      return `count(${formatExpr(e.set)})`;
    case 'subQuery':
      return `from ${e.type.name} where ${e.query.predicate ? formatExpr(e.query.predicate) : 'true'}`;
    case 'string':
      return JSON.stringify(e.value);
    case 'number':
      return e.text;
    case 'datetime':
      return e.text;
    case 'bool':
      return String(e.value);
    case 'null':
      return 'null';
    case 'array':
      return `[${e.values.map(formatExpr).join(', ')}]`;
  }
}
