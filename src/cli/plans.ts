import type { Command } from "commander";
import { planView } from "../views/admin.js";
import { plural } from "../judgment/plural.js";
import { PLAN_LIMITS } from "../record-limits.js";
import type { Plan } from "../services/types.js";
import type { PlanInput } from "../services/types.js";
import { CliError, cliActor, emit, withServices } from "./context.js";
import { followUp, shellWord } from "./follow-up.js";
import { formatTable, formatTimestamp } from "../views/text.js";
import { parseEurosOption, parseWholeNumber } from "./options.js";
import { formatMoney } from "../views/money.js";

/** Option values as commander hands them over: unparsed strings, checked by planChanges. */
interface PlanOptions {
  name?: string;
  rpm?: string;
  allowance?: string;
  price?: string;
  models?: string;
}

/** "60 requests/minute, 1000 questions per period, then €0.05 per million input tokens" */
export function describePlan(plan: Plan): string {
  return (
    `${plan.requestsPerMinute} requests/minute, ${plural(plan.allowanceQuestions, "question")} per period, ` +
    `then ${formatMoney(plan.pricePerMillion)} per million input tokens` +
    (plan.allowedModels ? `, models ${plan.allowedModels.join(", ")} only` : "")
  );
}

export function formatPlans(plans: readonly Plan[]): string {
  return formatTable(
    ["ID", "NAME", "RPM", "ALLOWANCE", "PRICE/M TOKENS", "CREATED"],
    plans.map((plan) => [
      plan.id,
      plan.name,
      String(plan.requestsPerMinute),
      String(plan.allowanceQuestions),
      formatMoney(plan.pricePerMillion),
      formatTimestamp(plan.createdAt),
    ]),
  );
}

/** Parses only the options given, so `update` leaves every other field as it was. */
export function planChanges(options: PlanOptions): Partial<PlanInput> {
  const changes: Partial<PlanInput> = {};
  if (options.name !== undefined) changes.name = options.name;
  if (options.rpm !== undefined) {
    changes.requestsPerMinute = parseWholeNumber(options.rpm, "--rpm", { min: 1, max: PLAN_LIMITS.requestsPerMinute });
  }
  if (options.allowance !== undefined) {
    changes.allowanceQuestions = parseWholeNumber(options.allowance, "--allowance", {
      min: 0,
      max: PLAN_LIMITS.allowanceQuestions,
    });
  }
  if (options.price !== undefined) {
    changes.pricePerMillion = parseEurosOption(options.price, "--price", {
      minMicro: 0,
      maxMicro: PLAN_LIMITS.pricePerMillion,
      example: "0.05",
    });
  }
  // A comma-separated list of model ids; "all" lifts the restriction.
  if (options.models !== undefined) {
    const ids = options.models
      .split(",")
      .map((id) => id.trim())
      .filter((id) => id !== "");
    if (ids.length === 0) throw new CliError('--models needs model ids separated by commas, or "all"');
    changes.allowedModels = ids.length === 1 && ids[0] === "all" ? null : ids;
  }
  return changes;
}

export function registerPlansCommands(program: Command): void {
  const plans = program.command("plans").description("Manage plans: rate limit, monthly question allowance, price beyond it");

  plans
    .command("list")
    .description("List plans")
    .action(async (_options: unknown, command: Command) => {
      const list = await withServices(command, (services) => services.plans.list());
      emit(command, { json: list.map(planView), text: () => formatPlans(list) });
    });

  plans
    .command("create")
    .description("Create a plan")
    .requiredOption("--name <name>", "unique name of the plan")
    .requiredOption("--rpm <n>", "requests per minute per account (at least 1)")
    .requiredOption("--allowance <n>", "questions answered per monthly period before the balance pays")
    .requiredOption("--price <euros>", "euros per million input tokens beyond the allowance, e.g. 0.05")
    .option("--models <ids>", "model ids (JUDGE_MODELS) its keys may use, comma-separated; default: every model")
    .action(async (options: Required<PlanOptions>, command: Command) => {
      // Every field is required here, so the parsed changes are a complete PlanInput.
      const input = planChanges(options) as PlanInput;
      const plan = await withServices(command, (services) => services.plans.create(input, cliActor()));
      emit(command, {
        json: planView(plan),
        text: () =>
          `Created plan ${plan.id} (${plan.name}): ${describePlan(plan)}.\n` +
          followUp(command).line("Put an account on it with:", `accounts set-plan <account id> ${shellWord(plan.name)}`),
      });
    });

  plans
    .command("update")
    .description("Change a plan; accounts on it get the change from their next request")
    .argument("<idOrName>", "plan id (plan_…) or name")
    .option("--name <name>", "new name")
    .option("--rpm <n>", "requests per minute per account (at least 1)")
    .option("--allowance <n>", "questions answered per monthly period before the balance pays")
    .option("--price <euros>", "euros per million input tokens beyond the allowance, e.g. 0.05")
    .option("--models <ids>", 'model ids its keys may use, comma-separated; "all" lifts the restriction')
    .action(async (idOrName: string, options: PlanOptions, command: Command) => {
      const changes = planChanges(options);
      if (Object.keys(changes).length === 0) {
        throw new CliError("Nothing to update: pass --name, --rpm, --allowance, --price or --models");
      }
      const plan = await withServices(command, (services) => services.plans.update(idOrName.trim(), changes, cliActor()));
      emit(command, {
        json: planView(plan),
        text: () => `Updated plan ${plan.id} (${plan.name}): ${describePlan(plan)}.`,
      });
    });
}
