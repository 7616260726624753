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
  /** The model this server answers with. */
  served: string;
  /** The other names a request's `model` may give it, each with the route that accepts it. */
  aliases: { name: string; acceptedBy: string }[];
  /** YYYY-MM-DD: the release date the Jev shape gives; `created` is its midnight UTC, in seconds. */
  releaseDate: string;
}

export function modelListBody(names: ModelNames) {
  const created = Math.floor(Date.parse(`${names.releaseDate}T00:00:00Z`) / 1000);
  const all = [
    { name: names.served, description: `The model this server runs (${names.served}).` },
    ...names.aliases.map(({ name, acceptedBy }) => ({ name, description: `Alias of ${names.served} (${acceptedBy}).` })),
  ];
  return {
    models: all.map(({ name, description }) => ({ name, description, release_date: names.releaseDate })),
    object: "list" as const,
    data: all.map(({ name }) => ({ id: name, object: "model" as const, created, owned_by: OWNED_BY })),
  };
}
