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

export class SafeIntegersPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    for (const row of rows) {
      for (const column in row) {
        const value = row[column];
        if (typeof value === "bigint") row[column] = toSafeInteger(value, column);
      }
    }
    return args.result;
  }
}
