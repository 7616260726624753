import { type Head, type LabelledRow, type QuestionReport } from "../../judgment/heads/index.js";
import { chargeFor } from "../../money/money.js";
import { messageOf } from "../../error-message.js";
import type { Payer } from "../billing.js";
import { InsufficientFundsError, KeyBudgetExhaustedError } from "../errors.js";
import type { FitRecord, TasksRepository } from "../../store/types.js";
import { JudgingRefusal } from "../judging/errors.js";
import { judge, type JudgingDeps } from "../judging/judge.js";
import type { ModelChoice } from "../judging/request.js";
import type { ModelBinding } from "../judging/task-heads.js";
import type { TaskDefinition, TaskExample } from "./definition.js";
import { workerHeadFitter } from "./head-fitter.js";

/**
 * One fit: every example read through the judging flow exactly as a request (billed like one,
 * under the request's deadline, the plan's allowance or the balance paying), then a head fitted
 * per question and kept as a new, immutable version. Progress is written after each example; a
 * fit that cannot go on (no money, the model down, the service stopping) fails and writes no
 * version. What was read is charged, as requests are; nothing is charged twice.
 */

export interface FitJob {
  fit: FitRecord;
  definition: TaskDefinition;
  examples: readonly TaskExample[];
  model: ModelChoice;
  payer: Payer;
  seed: number;
  /** The heads that may replace the readout (default both): a measurement fits one kind at a time. */
  heads?: readonly ("level1" | "level2")[];
}

/** What the caller may choose about a fit. */
export interface FitChoices {
  seed?: number;
  heads?: readonly ("level1" | "level2")[];
}

export interface FitContext {
  judging: JudgingDeps;
  tasks: TasksRepository;
  /** Aborted when the service stops: the fit fails as interrupted. */
  signal: AbortSignal;
}

/** Reads one example; throws as a request would (402, 502 …). Exported for the first example, read before the fit is accepted. */
export async function readExample(context: FitContext, job: FitJob, index: number) {
  const example = job.examples[index];
  const ids = Object.keys(job.definition.questions).filter((id) => id in example.gold);
  const outcome = await judge(
    context.judging,
    {
      state: example.state,
      ids,
      questions: ids.map((id) => job.definition.questions[id]),
      includeLogits: false,
      debias: "none",
      caller: job.payer,
      requestId: `${job.fit.id}.${index}`,
      idempotencyKey: undefined,
      bodyDigest: "",
      signal: context.signal,
      models: [job.model],
      // A fit without level 2 needs no hidden states: their read costs more than the readout.
      collectReadings: job.heads && !job.heads.includes("level2") ? "labels" : "features",
    },
    () => "",
  );
  const judged = outcome.judged!;
  const readings = judged.readings!;
  const chargedMicro = outcome.billedTo === "balance" ? chargeFor(judged.inputTokens, job.payer.terms.pricePerMillion, job.model.multiplierMilli) : 0;
  return { ids, readings, inputTokens: judged.inputTokens, chargedMicro };
}

export type FirstReading = Awaited<ReturnType<typeof readExample>>;

/** The rest of the fit, in the background, from the first example's reading on. */
export async function runFit(context: FitContext, job: FitJob, first: FirstReading): Promise<void> {
  const { tasks } = context;
  const rows = new Map<string, LabelledRow[]>(Object.keys(job.definition.questions).map((id) => [id, []]));
  let inputTokens = 0;
  let chargedMicro = 0;
  let binding: ModelBinding | undefined;
  try {
    for (let i = 0; i < job.examples.length; i++) {
      const reading = i === 0 ? first : await readExample(context, job, i);
      binding ??= reading.readings.binding;
      if (JSON.stringify(binding) !== JSON.stringify(reading.readings.binding)) {
        throw new FitFailure("model_changed", "the model, its weights or its prompt changed during the fit; start it again");
      }
      reading.ids.forEach((id, j) => {
        rows.get(id)!.push({
          logProbs: reading.readings.logProbs[j],
          ...(reading.readings.features && { features: reading.readings.features[j] }),
          gold: job.examples[i].gold[id],
        });
      });
      inputTokens += reading.inputTokens;
      chargedMicro += reading.chargedMicro;
      // False: the fit was failed meanwhile (a sweep took it for abandoned, or its task was deleted).
      if (!(await tasks.progress(job.fit.id, { done: i + 1, inputTokens, chargedMicro }))) return;
    }
    const heads: Record<string, Head> = {};
    const report: Record<string, QuestionReport> = {};
    const fitter = workerHeadFitter(context.signal);
    try {
      for (const [id, questionRows] of rows) {
        if (questionRows.length === 0) continue;
        const fitted = await fitter.fit(questionRows, { seed: job.seed, candidates: job.heads });
        heads[id] = fitted.head;
        report[id] = fitted.report;
        // A heartbeat per question: a long fit of the heads is not taken for an abandoned fit.
        if (!(await tasks.progress(job.fit.id, { done: job.examples.length, inputTokens, chargedMicro }))) return;
      }
    } finally {
      await fitter.close();
    }
    await tasks.succeed(job.fit.id, {
      model: job.model.id,
      binding: JSON.stringify(binding),
      heads: JSON.stringify(heads),
      report: JSON.stringify({
        seed: job.seed,
        ...(job.heads ? { heads: job.heads } : {}),
        examples: job.examples.length,
        inputTokens,
        chargedMicro,
        questions: report,
      }),
    });
  } catch (error) {
    await tasks.fail(job.fit.id, failureOf(error, context.signal)).catch(() => undefined);
  }
}

class FitFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A failed fit's code and message, in the catalogue's words where a request would have had them. */
export function failureOf(error: unknown, signal: AbortSignal): { code: string; message: string } {
  if (signal.aborted) return { code: "fit_interrupted", message: "the service stopped before the fit ended; nothing more was charged; start the fit again" };
  if (error instanceof FitFailure) return { code: error.code, message: error.message };
  if (error instanceof InsufficientFundsError) return { code: "insufficient_funds", message: `an example could not be paid: ${error.message}` };
  if (error instanceof KeyBudgetExhaustedError) return { code: "key_budget_exhausted", message: `an example could not be paid: ${error.message}` };
  if (error instanceof JudgingRefusal) return { code: error.code, message: error.clientMessage ?? error.message };
  return { code: "internal_error", message: `the fit failed: ${messageOf(error)}` };
}
