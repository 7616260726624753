import type { Command } from "commander";

/** `judge eval` and `judge calibrate` (issue 4). */
export function registerEvaluationCommands(_program: Command): void {}
