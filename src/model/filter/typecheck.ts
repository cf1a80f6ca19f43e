/**
 * Type checking: resolves a parsed {@link FilterQuery} against a resource's {@link FieldTable} and produces a
 * {@link CheckedQuery} in which every symbol is a concrete column / map entry / set and every operation
 * carries the type it is evaluated at, with literals already converted.
 *
 * The rules follow the reference's typing (docs/reference-notes.md §1.4): the symbol's type drives the
 * operation (a map entry such as `tags.x` takes its type from the literal); int widens to float; numbers
 * convert to strings; anything else is an error (§1.8).
 */
import {
  filterError,
  formatExpr,
  type BetweenExpr,
  type BoolExpr,
  type CompareExpr,
  type ContainsExpr,
  type FilterErrorCode,
  type FilterQuery,
  type InExpr,
  type Lhs,
  type Literal,
  type SetExpr,
  type SortField,
} from './ast.js';
import type {
  CheckedExpr,
  CheckedQuery,
  CheckedSort,
  ColumnSubject,
  FieldDef,
  FieldTable,
  MapEntrySubject,
  ScalarType,
  SetRef,
  Subject,
  ValueType,
} from '../../store/filter-ast.js';
import { tokenHash } from '../tokens.js';

// The checked query's types live with their consumer, the store's SQL compiler.
export type {
  CheckedExpr,
  CheckedQuery,
  CheckedSort,
  ColumnSubject,
  CountSubject,
  ElementSubject,
  MapEntrySubject,
  SetRef,
  Subject,
  ValueType,
} from '../../store/filter-ast.js';

/** parity: at most 5 sort fields, extra ones silently dropped (§1.6). */
export const MAX_SORT_FIELDS = 5;

/** Checks a whole query. Throws `INVALID_FILTER` (or `code`) with the reference's messages (§1.8). */
export function checkFilter(
  q: FilterQuery,
  fields: FieldTable,
  code: FilterErrorCode = 'INVALID_FILTER',
): CheckedQuery {
  const c = new Checker(fields, code);
  const out: CheckedQuery = {
    predicate: q.predicate ? c.expr(q.predicate) : null,
    sort: checkSort(q.sort, fields, code),
  };
  return { ...out, ...(q.skip !== undefined && { skip: q.skip }), ...(q.limit !== undefined && { limit: q.limit }) };
}

/** Checks sort fields: known, not a set, not a whole map; keeps the first {@link MAX_SORT_FIELDS}. */
export function checkSort(
  sort: readonly SortField[],
  fields: FieldTable,
  code: FilterErrorCode = 'INVALID_FILTER',
): CheckedSort[] {
  const c = new Checker(fields, code);
  return sort.slice(0, MAX_SORT_FIELDS).map((s) => {
    const r = c.resolve(s.symbol);
    if (r.kind === 'set') throw filterError(`sorting on set symbol '${s.symbol}' is not supported`, code);
    if (r.kind === 'map')
      throw filterError(`sorting on map symbol '${s.symbol}' is not supported, use ${s.symbol}.<key>`, code);
    return { subject: r, direction: s.direction };
  });
}

/** The type names used in type-mismatch messages (§1.8 "operands types string, number"). */
function subjectTypeName(t: SubjectType): string {
  return t === 'int' || t === 'float' ? 'number' : t;
}

function literalTypeName(l: Literal | { kind: 'array'; elementKind: string }): string {
  return l.kind === 'array' ? `${l.elementKind} array` : l.kind;
}

/** A subject's static type; `any` for map entries, whose type comes from the literal (§1.4). */
type SubjectType = ScalarType | 'any';

function subjectType(s: Subject): SubjectType {
  switch (s.kind) {
    case 'column':
      return s.type;
    case 'mapEntry':
      return 'any';
    case 'element':
      return 'string';
    case 'count':
      return 'int';
  }
}

/**
 * Whether the subject can be read as a string. parity: numbers convert to strings (§1.4), so int/float
 * columns can be used with `contains` and `in [strings]`; a count cannot.
 */
function stringable(s: Subject): boolean {
  const t = subjectType(s);
  return s.kind !== 'count' && (t === 'string' || t === 'int' || t === 'float' || t === 'any');
}

/**
 * parity: a number literal used as a string is spelled as the reference formats int64 / float64
 * (decimal, no exponent).
 */
export function numberToString(n: { value: number; isInt: boolean; text: string }): string {
  if (n.isInt) return BigInt(n.text).toString();
  const s = String(n.value);
  if (!/e/i.test(s)) return s;
  return n.value.toLocaleString('en-US', { useGrouping: false, maximumSignificantDigits: 17 });
}

const isHashed = (s: Subject): s is ColumnSubject => s.kind === 'column' && s.hashed === true;

/** What a name resolves to. */
type Resolved = ColumnSubject | MapEntrySubject | SetRef | { kind: 'map'; field: string };

class Checker {
  constructor(
    private readonly fields: FieldTable,
    private readonly code: FilterErrorCode,
  ) {}

  private error(message: string): never {
    throw filterError(message, this.code);
  }

  /**
   * Resolves a symbol name. An exact entry wins (so resources may declare dotted composite names);
   * otherwise `<map>.<key…>` addresses a map entry. parity: unknown → `unknown symbol 'foo'` (§1.8).
   */
  resolve(name: string): Resolved {
    const def: FieldDef | undefined = Object.hasOwn(this.fields, name) ? this.fields[name] : undefined;
    if (def) {
      switch (def.kind) {
        case 'scalar':
          return {
            kind: 'column',
            field: name,
            column: def.column,
            type: def.type,
            ...(def.hashed && { hashed: true }),
            ...(def.searchIndex && { searchIndex: def.searchIndex }),
          };
        case 'set':
          return {
            kind: 'set',
            field: name,
            table: def.table,
            ownerColumn: def.ownerColumn,
            valueColumn: def.valueColumn,
            ...(def.selects && { selects: def.selects }),
          };
        case 'map':
          return { kind: 'map', field: name };
      }
    }
    const dot = name.indexOf('.');
    if (dot > 0) {
      const base = name.slice(0, dot);
      const baseDef = Object.hasOwn(this.fields, base) ? this.fields[base] : undefined;
      if (baseDef?.kind === 'map') {
        return { kind: 'mapEntry', field: base, column: baseDef.column, path: name.slice(dot + 1).split('.') };
      }
    }
    return this.error(`unknown symbol '${name}'`);
  }

  /** A symbol used outside a set function: must not be a set (§1.4). */
  private scalar(name: string): ColumnSubject | MapEntrySubject {
    const r = this.resolve(name);
    if (r.kind === 'set') this.error(`symbol '${name}' is a set symbol but is used in non-set function context`);
    if (r.kind === 'map') this.error(`symbol '${name}' is a map symbol; address one entry as ${name}.<key>`);
    return r;
  }

  /** A symbol inside a set function: must be a set (§1.4). */
  private set(expr: SetExpr, fn: string): SetRef {
    if (expr.kind === 'subQuery') return this.error('sub-queries are not supported');
    const r = this.resolve(expr.name);
    if (r.kind !== 'set') this.error(`symbol '${expr.name}' is not a set symbol but is used in set function ${fn}`);
    return r;
  }

  expr(e: BoolExpr): CheckedExpr {
    switch (e.kind) {
      case 'and':
      case 'or':
        return { kind: e.kind, left: this.expr(e.left), right: this.expr(e.right) };
      case 'not':
        return { kind: 'not', expr: this.expr(e.expr) };
      case 'boolConst':
        return { kind: 'const', value: e.value };
      case 'boolSymbol': {
        const s = this.scalar(e.symbol.name);
        const t = subjectType(s);
        if (t !== 'bool' && t !== 'any')
          this.error(`symbol '${e.symbol.name}' is of type ${subjectTypeName(t)}, not bool`);
        return { kind: 'boolTest', subject: s, expect: true };
      }
      case 'isEmpty':
        return { kind: 'isEmpty', set: this.set(e.set, 'isEmpty') };
      case 'compare':
      case 'contains':
      case 'in':
      case 'between':
        return this.operation(e);
    }
  }

  /** Resolves the left-hand side, types the leaf, and wraps it in the quantifier for `anyOf` / `allOf`. */
  private operation(e: CompareExpr | ContainsExpr | InExpr | BetweenExpr): CheckedExpr {
    const { subject, wrap } = this.lhs(e.left);
    switch (e.kind) {
      case 'compare':
        return wrap(this.compare(e, subject));
      case 'contains':
        return wrap(this.contains(e, subject));
      case 'in':
        return wrap(this.in(e, subject));
      case 'between':
        return wrap(this.between(e, subject));
    }
  }

  private lhs(l: Lhs): { subject: Subject; wrap: (p: CheckedExpr) => CheckedExpr } {
    switch (l.kind) {
      case 'symbol':
        return { subject: this.scalar(l.name), wrap: (p) => p };
      case 'count':
        return { subject: { kind: 'count', set: this.set(l.set, 'count') }, wrap: (p) => p };
      case 'quantified': {
        const set = this.set(l.symbol, l.fn);
        return { subject: { kind: 'element', set }, wrap: (predicate) => ({ kind: l.fn, set, predicate }) };
      }
    }
  }

  /** A hashed column supports `=`, `!=`, `in`, `not in` and `= null` only (docs/decisions.md, token filters). */
  private hashedOnlyEquality(e: BoolExpr, s: ColumnSubject): never {
    return this.error(
      `operation ${formatExpr(e)} is not supported: symbol '${s.field}' can only be tested with =, !=, in and not in`,
    );
  }

  private mismatch(e: BoolExpr, s: Subject, right: Literal | { kind: 'array'; elementKind: string }): never {
    return this.error(
      `operation ${formatExpr(e)} is not supported with operands types ${subjectTypeName(subjectType(s))}, ${literalTypeName(right)}`,
    );
  }

  private compare(e: CompareExpr, s: Subject): CheckedExpr {
    const r = e.right;
    const t = subjectType(s);
    if (r.kind === 'null') {
      // parity: `= null` / `!= null` test presence and need a plain symbol, not count(…) (§1.4).
      if (s.kind === 'count') this.mismatch(e, s, r);
      return { kind: 'isNull', subject: s, negated: e.op === '!=' };
    }
    if (r.kind === 'bool') {
      // parity: bools only compare with = / != against true / false (§1.4).
      if (t !== 'bool' && t !== 'any') this.mismatch(e, s, r);
      return { kind: 'boolTest', subject: s, expect: (e.op === '=') === r.value };
    }
    const leaf = (as: Exclude<ValueType, 'bool'>, value: string | number): CheckedExpr => ({
      kind: 'compare',
      subject: s,
      as,
      op: e.op,
      value,
    });
    if (isHashed(s)) {
      if (e.op !== '=' && e.op !== '!=') this.hashedOnlyEquality(e, s);
      if (r.kind === 'string') return leaf('string', tokenHash(r.value));
      if (r.kind === 'number') return leaf('string', tokenHash(numberToString(r)));
    }
    switch (r.kind) {
      case 'string':
        if (t === 'string' || t === 'any') return leaf('string', r.value);
        break;
      case 'number':
        if (t === 'int' || t === 'any') return leaf(r.isInt ? 'int' : 'float', r.value);
        if (t === 'float') return leaf('float', r.value);
        if (t === 'string') return leaf('string', numberToString(r));
        break;
      case 'datetime':
        if (t === 'datetime' || t === 'any') return leaf('datetime', r.iso);
        break;
    }
    return this.mismatch(e, s, r);
  }

  /** parity: `contains` is a string operation; numbers on either side convert to strings (§1.4). */
  private contains(e: ContainsExpr, s: Subject): CheckedExpr {
    if (!stringable(s)) this.mismatch(e, s, e.right);
    if (isHashed(s)) this.hashedOnlyEquality(e, s);
    const value = e.right.kind === 'string' ? e.right.value : numberToString(e.right);
    return { kind: 'contains', subject: s, negated: e.negated, caseInsensitive: e.caseInsensitive, value };
  }

  private in(e: InExpr, s: Subject): CheckedExpr {
    const t = subjectType(s);
    const a = e.values;
    const leaf = (as: Exclude<ValueType, 'bool'>, values: (string | number)[]): CheckedExpr => ({
      kind: 'in',
      subject: s,
      as,
      negated: e.negated,
      values,
    });
    const numeric = t === 'int' || t === 'float' || t === 'any';
    if (a.elementKind === 'datetime' && (t === 'datetime' || t === 'any')) {
      return leaf(
        'datetime',
        a.values.map((v) => (v.kind === 'datetime' ? v.iso : '')),
      );
    }
    if (a.elementKind === 'number' && numeric) {
      const allInt = a.values.every((v) => v.kind === 'number' && v.isInt);
      return leaf(
        t === 'float' || !allInt ? 'float' : 'int',
        a.values.map((v) => (v.kind === 'number' ? v.value : 0)),
      );
    }
    if (a.elementKind !== 'datetime' && stringable(s) && (a.elementKind === 'string' || t === 'string')) {
      const values = a.values.map((v) =>
        v.kind === 'string' ? v.value : v.kind === 'number' ? numberToString(v) : '',
      );
      return leaf('string', isHashed(s) ? values.map(tokenHash) : values);
    }
    return this.mismatch(e, s, a);
  }

  /** parity: between works on int, float and datetime only (§1.4). */
  private between(e: BetweenExpr, s: Subject): CheckedExpr {
    const t = subjectType(s);
    const { lower, upper } = e;
    const leaf = (as: 'int' | 'float' | 'datetime', lo: string | number, hi: string | number): CheckedExpr => ({
      kind: 'between',
      subject: s,
      as,
      negated: e.negated,
      lower: lo,
      upper: hi,
    });
    if (lower.kind === 'datetime' && upper.kind === 'datetime' && (t === 'datetime' || t === 'any')) {
      return leaf('datetime', lower.iso, upper.iso);
    }
    if (lower.kind === 'number' && upper.kind === 'number' && (t === 'int' || t === 'float' || t === 'any')) {
      const asInt = t !== 'float' && lower.isInt && upper.isInt;
      return leaf(asInt ? 'int' : 'float', lower.value, upper.value);
    }
    return this.mismatch(e, s, lower);
  }
}
