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

export function withDiagnostics<T extends object>(answers: T[], diagnostics: readonly LabelDiagnostics[] | undefined): T[] {
  if (!diagnostics) return answers;
  return answers.map((answer, i) => ({ ...answer, label_mass: diagnostics[i].labelMass, top_token_is_label: diagnostics[i].topTokenIsLabel }));
}
