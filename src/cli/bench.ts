import type { Command } from "commander";

/** `judge bench` (issue 4). */
export function registerBenchCommand(_program: Command): void {}
