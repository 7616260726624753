/**
 * One instance of the service as npm start starts it (the same `start`: services, sweeper, app),
 * but on an engine that never answers: its requests hold their charge until the process is
 * killed. Configured by the same JUDGE_* environment as `judge serve`. Used by the
 * multi-instance test to kill an instance that is holding money.
 */
import { loadConfig } from "../config/environment.js";
import { start } from "../composition.js";
import { hangingEngine } from "./hanging-engine.js";

await start(loadConfig(), { engine: hangingEngine({ inputTokens: 100 }) });
