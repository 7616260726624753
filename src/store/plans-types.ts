import type { AdminActor } from "./audit-types.js";

/** What the plans repository (plans.ts) takes and hands out; re-exported by types.ts. */

export interface Plan {
  id: string;
  name: string;
  requestsPerMinute: number;
  /** Questions answered per monthly period before requests are billed to the balance. */
  allowanceQuestions: number;
  /** Micro-euros per million input tokens when a request is billed to the balance. */
  pricePerMillion: number;
  createdAt: number;
  /** The model ids its keys may use (docs/engines/many-models.md); absent: every model. */
  allowedModels?: string[];
}

export type PlanInput = Pick<Plan, "name" | "requestsPerMinute" | "allowanceQuestions" | "pricePerMillion"> & {
  /** null clears the restriction (an update); absent keeps it. */
  allowedModels?: string[] | null;
};

export interface PlansRepository {
  create(input: PlanInput, by?: AdminActor): Promise<Plan>;
  /** By id or name; changes apply to the next request (terms are read at every request). */
  update(idOrName: string, changes: Partial<PlanInput>, by?: AdminActor): Promise<Plan>;
  list(): Promise<Plan[]>;
  get(idOrName: string): Promise<Plan | undefined>;
}
