import { z } from "@hono/zod-openapi";
import type { LabelDiagnostics } from "../../engine/types.js";

/**
 * The extensions both judging routes accept, /v1/systemone and /v1/decisions alike.
 * `x_diagnostics`: each answer gains how much probability the whole vocabulary gave its label
 * set at the first label position, and whether the most likely next token was a label; nothing
 * else changes (same answers, same bill). `x_calibration`: contextual calibration.
 */

export const DiagnosticsFlag = z
  .boolean({ error: "x_diagnostics must be true or false" })
  .optional()
  .openapi({
    description:
      "Extension of this server: when true, every answer also carries `label_mass` (the probability the model's whole " +
      "vocabulary gave the answer's labels at the first label position) and `top_token_is_label` (whether its most likely " +
      'next token was one of them). In-process engine and x_debias "none" only; billing is unchanged.',
  });

export const CalibrationMode = z
  .enum(["none", "contextual"], { error: 'x_calibration must be "none" or "contextual"' })
  .optional()
  .openapi({
    description:
      'Extension of this server: "contextual" divides every answer by the same question\'s answer about content-free ' +
      'states ("N/A" and the empty state), which removes the model\'s own preference for some labels (contextual ' +
      'calibration, Zhao et al. 2021). Those prompts are read and billed. x_debias "none" only. Default "none".',
  });

export const TaskName = z
  .string({ error: "x_task must be a task's id or name" })
  .min(1, { error: "x_task must be a task's id or name" })
  .max(200, { error: "x_task must be at most 200 characters" })
  .optional()
  .openapi({
    description:
      "Extension of this server: a task of the key's account (its id or name; /v1/tasks). Each question equal to one of the task's " +
      "questions (id, type, instructions, criteria) is answered through the head its newest version fitted on this model; every answer " +
      'then says in `x_task` which version answered, or why none did. x_debias "none" and no x_calibration only. Billing is unchanged.',
  });

/** /v1/decisions writes answers in its own shape: the task's notes are carried over, question by question. */
export function withTaskNotes<T extends object>(answers: T[], judged: readonly object[]): T[] {
  return answers.map((answer, i) => {
    const { x_task, x_abstain } = judged[i] as { x_task?: unknown; x_abstain?: true };
    return x_task === undefined ? answer : { ...answer, x_task, ...(x_abstain && { x_abstain }) };
  });
}

export function withDiagnostics<T extends object>(answers: T[], diagnostics: readonly LabelDiagnostics[] | undefined): T[] {
  if (!diagnostics) return answers;
  return answers.map((answer, i) => ({ ...answer, label_mass: diagnostics[i].labelMass, top_token_is_label: diagnostics[i].topTokenIsLabel }));
}
