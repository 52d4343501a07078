// The columns of a schema as one flat list (what the portal shows reviewers), and how two lists differ: the
// schema-change warnings of check and deliver.

import { isObject } from '../guards.js';
import type { Product, Schema } from '../api/types.js';

export interface ColumnEntry {
  /** The object type for records; "steps" for episodes. */
  object: string;
  name: string;
  role: string;
  kind: string;
  transform: string | null;
}

export type ColumnField = 'role' | 'kind' | 'transform';

export interface ColumnChange {
  object: string;
  name: string;
  field: ColumnField;
  from: string | null;
  to: string | null;
}

export interface ColumnDiff {
  added: ColumnEntry[];
  removed: ColumnEntry[];
  changed: ColumnChange[];
}

/** The columns of a schema that passed its product's rules (schema.ts); environment schemas have none. */
export function schemaColumns(product: Product, schema: Schema): ColumnEntry[] {
  const fields = schema as Record<string, unknown>;
  const lists: Array<[string, unknown]> =
    product === 'records' && isObject(fields.objects)
      ? Object.entries(fields.objects)
      : product === 'episodes'
        ? [['steps', fields.steps]]
        : [];
  return lists.flatMap(([object, columns]) =>
    (Array.isArray(columns) ? columns : []).filter(isObject).map((column) => ({
      object,
      name: String(column.name),
      role: String(column.role),
      kind: String(column.kind),
      transform: typeof column.transform === 'string' ? column.transform : null,
    })),
  );
}

/** How many columns have each role. */
export function countRoles(columns: ColumnEntry[]): Record<string, number> {
  const roles: Record<string, number> = {};
  for (const column of columns) roles[column.role] = (roles[column.role] ?? 0) + 1;
  return roles;
}

/** Columns added, removed, and changed in role, kind or transform, from `before` to `after`; null if none. */
export function diffColumns(before: ColumnEntry[], after: ColumnEntry[]): ColumnDiff | null {
  const key = (column: ColumnEntry): string => JSON.stringify([column.object, column.name]);
  const old = new Map(before.map((column) => [key(column), column]));
  const now = new Map(after.map((column) => [key(column), column]));
  const diff: ColumnDiff = {
    added: after.filter((column) => !old.has(key(column))),
    removed: before.filter((column) => !now.has(key(column))),
    changed: [],
  };
  for (const column of after) {
    const was = old.get(key(column));
    if (!was) continue;
    for (const field of ['role', 'kind', 'transform'] as const) {
      if (was[field] !== column[field]) {
        diff.changed.push({ object: column.object, name: column.name, field, from: was[field], to: column[field] });
      }
    }
  }
  return diff.added.length || diff.removed.length || diff.changed.length ? diff : null;
}
