// The product of a delivery and the rules its schema must follow: one row per product.

import { isObject } from '../guards.js';
import { UsageError } from '../errors.js';
import type { Product } from '../api/types.js';
import type { OptionNames } from '../option-names.js';

interface ProductRule {
  /** The schema.format that names this product, if one does. */
  format: string | undefined;
  /** Checks the schema object; throws a UsageError naming `file` and the place. */
  check: (schema: Record<string, unknown>, file: string) => void;
}

const PRODUCT_RULES: Record<Product, ProductRule> = {
  records: {
    format: 'jsonl',
    check(schema, file) {
      if (!isObject(schema.objects) || Object.keys(schema.objects).length === 0) {
        throw new UsageError(`${file}: records need "objects", a non-empty map from object type to its columns`);
      }
      for (const [name, columns] of Object.entries(schema.objects)) checkColumns(columns, `objects.${name}`, file);
    },
  },
  episodes: {
    format: 'episodes/v1',
    check(schema, file) {
      checkColumns(schema.steps, 'steps', file);
    },
  },
  environment: {
    format: undefined,
    check() {
      // any object
    },
  },
};

/** `requested`: the product option, whose value is already one of the products. */
export function checkProduct(
  requested: Product | undefined,
  schema: unknown,
  file: string,
  names: OptionNames,
): Product {
  const format = isObject(schema) && typeof schema.format === 'string' ? schema.format : undefined;
  const implied = (Object.keys(PRODUCT_RULES) as Product[]).find(
    (product) => format !== undefined && PRODUCT_RULES[product].format === format,
  );
  if (requested !== undefined) {
    if (implied !== undefined && implied !== requested) {
      throw new UsageError(
        `${names.name('product')} ${requested} contradicts ${file}, whose format "${format}" is ${implied}`,
        { about: { code: 'option_value', option: 'product' } },
      );
    }
    return requested;
  }
  if (implied) return implied;
  throw new UsageError(
    `${file}: cannot tell the product from the schema's format (${format === undefined ? 'none' : `"${format}"`})`,
    {
      hint: 'records need format "jsonl", episodes "episodes/v1"; environment data needs the product "environment"',
      about: { code: 'product_unknown' },
    },
  );
}

export function checkSchema(product: Product, schema: unknown, file: string): void {
  if (!isObject(schema)) throw new UsageError(`${file}: the schema must be a JSON object`);
  PRODUCT_RULES[product].check(schema, file);
}

function checkColumns(columns: unknown, where: string, file: string): void {
  if (!Array.isArray(columns) || columns.length === 0) {
    throw new UsageError(`${file}: ${where} must be a non-empty list of columns`);
  }
  columns.forEach((column: unknown, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(column)) throw new UsageError(`${file}: ${at} must be an object`);
    for (const field of ['name', 'role', 'kind']) {
      const value = column[field];
      if (typeof value !== 'string' || !value)
        throw new UsageError(`${file}: ${at}.${field} must be a non-empty string`);
    }
    if (column.transform !== undefined && typeof column.transform !== 'string') {
      throw new UsageError(`${file}: ${at}.transform must be a string`);
    }
  });
}
