/**
 * The body of GET /v1/models, read by both SDK ecosystems from one document: the Jev shape
 * (`models`, each with `name`, `description`, `release_date`), which @typesafe-ai/sdk's
 * `client.models.list()` reads, and OpenAI's (`object: "list"`, `data` with `id`, `object`,
 * `created`, `owned_by`), which the openai SDK's `client.models.list()` reads. Both list the
 * served model and every alias a judging route accepts for it.
 */

/** Who `owned_by` names: this server, whatever it runs. */
export const OWNED_BY = "typed-judgment-service";

export interface ModelNames {
  /** The models this server answers with (the default first), each with the names declared for it. */
  served: { id: string; aliases: readonly string[]; description?: string }[];
  /** The routes' own names for the default model, each with the route that accepts it. */
  aliases: { name: string; acceptedBy: string }[];
  /** YYYY-MM-DD: the release date the Jev shape gives; `created` is its midnight UTC, in seconds. */
  releaseDate: string;
}

export function modelListBody(names: ModelNames) {
  const created = Math.floor(Date.parse(`${names.releaseDate}T00:00:00Z`) / 1000);
  const defaultId = names.served[0].id;
  const declared = new Set(names.served.flatMap((m) => [m.id, ...m.aliases]));
  const all = [
    ...names.served.flatMap((m) => [
      { name: m.id, description: m.description ?? `The model this server runs (${m.id}).` },
      ...m.aliases.map((name) => ({ name, description: `Alias of ${m.id} (both judging routes).` })),
    ]),
    ...names.aliases.filter(({ name }) => !declared.has(name)).map(({ name, acceptedBy }) => ({ name, description: `Alias of ${defaultId} (${acceptedBy}).` })),
  ];
  return {
    models: all.map(({ name, description }) => ({ name, description, release_date: names.releaseDate })),
    object: "list" as const,
    data: all.map(({ name }) => ({ id: name, object: "model" as const, created, owned_by: OWNED_BY })),
  };
}
