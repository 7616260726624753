import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from "kysely";

/**
 * Both drivers hand integers over exactly, as BigInt (better-sqlite3 with safe integers on,
 * node-postgres with the int8/numeric parsers of postgres.ts); this plugin turns each into a
 * number after checking it is a safe integer. Money can then never arrive as a string that
 * concatenates, nor as a float that rounded silently: a value out of range is an error.
 */
export function toSafeInteger(value: bigint, column: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`column ${column} holds ${value}, beyond the exact range of a JavaScript number`);
  }
  return Number(value);
}

/** Every BigInt of every row turned into a checked number, in place. */
export function safeRows<Row>(rows: Row[]): Row[] {
  for (const row of rows as Record<string, unknown>[]) {
    for (const column in row) {
      const value = row[column];
      if (typeof value === "bigint") row[column] = toSafeInteger(value, column);
    }
  }
  return rows;
}

export class SafeIntegersPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    safeRows(args.result.rows);
    return args.result;
  }
}
