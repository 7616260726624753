import type { Database, Queries } from "./database.js";

/**
 * A `Statement` (database.ts) whose parameters are named in its text (`:accountId`) and given as
 * one object, so a value cannot land in another's place unseen as it can in a list of ten `?`:
 * the object's type names every value, and a name the text and the object do not share throws.
 * The names become `?` once, when it is prepared; a call only picks the values in their order.
 */
export interface NamedStatement<Params extends object, Row> {
  all(q: Queries, params: Params): Promise<Row[]>;
}

/** `:name` outside a `::` cast; the statements name no other colons. */
const NAME = /(?<![:\w]):([A-Za-z_]\w*)/g;

export function namedStatement<Params extends object, Row = never>(database: Database, text: string): NamedStatement<Params, Row> {
  const order: string[] = [];
  const statement = database.statement<Row>(
    text.replace(NAME, (_, name: string) => {
      order.push(name);
      return "?";
    }),
  );
  const names = new Set(order);
  return {
    async all(q, params) {
      const given = params as Record<string, unknown>;
      for (const name of names) if (given[name] === undefined) throw new TypeError(`statement parameter :${name} was not given`);
      for (const name in given) if (!names.has(name)) throw new TypeError(`statement has no parameter :${name}`);
      return statement.all(
        q,
        order.map((name) => given[name]),
      );
    },
  };
}
