import {
  EngineUnavailableError,
  RequestAbortedError,
  type EngineDescription,
  type EngineKind,
  type EngineStats,
  type JudgmentEngine,
  type PreparedJudgment,
} from "../../engine/types.js";

/**
 * An in-process model that loads on first use and unloads after `keepAliveMs` idle, or earlier
 * when loading another model would pass the memory bound (Ollama's keep_alive and its
 * max-loaded bound). A request's prepare and evaluate run on the same loaded instance; a model
 * is never unloaded while a call is in it. A preparation whose instance was unloaded before its
 * evaluation (evicted for another model in between) fails as unavailable: 502, nothing charged.
 */

export type KeepAliveState = "unloaded" | "loading" | "loaded" | "failed";

/** The in-process models loaded at once, shared by every model of a registry. */
export interface LoadBudget {
  maxMb: number | null;
  loaded: Set<Loaded>;
}

interface Loaded {
  id: string;
  memoryMb: number;
  /** Order of last use across the budget's models (a sequence, not a clock: two uses in one millisecond still order). */
  lastUsed: number;
  busy(): boolean;
  unload(): Promise<void>;
}

export interface KeepAliveOptions {
  id: string;
  kind: EngineKind;
  create: () => JudgmentEngine;
  keepAliveMs: number | null;
  memoryMb: number;
  budget: LoadBudget;
  /** Load at once (the default model), rather than on the first request. */
  eager: boolean;
}

let useSequence = 0;

export function createKeepAlive(options: KeepAliveOptions): { engine: JudgmentEngine; state(): KeepAliveState } {
  const { id, budget, memoryMb } = options;
  let state: KeepAliveState = "unloaded";
  let failure = "";
  let current: JudgmentEngine | undefined;
  let loading: Promise<JudgmentEngine> | undefined;
  let active = 0;
  let timer: NodeJS.Timeout | undefined;
  const owner = new WeakMap<PreparedJudgment, JudgmentEngine>();
  const entry: Loaded = { id, memoryMb, lastUsed: ++useSequence, busy: () => active > 0, unload: () => unload() };

  const unload = async () => {
    clearTimeout(timer);
    budget.loaded.delete(entry);
    const engine = current;
    current = undefined;
    if (state === "loaded") state = "unloaded";
    await engine?.close().catch(() => undefined);
  };

  const touch = () => {
    entry.lastUsed = ++useSequence;
    if (options.keepAliveMs === null) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (active === 0 && current) void unload();
    }, options.keepAliveMs).unref();
  };

  /** Unloads the least recently used idle models until this one fits; refuses if the busy ones leave no room. */
  const makeRoom = async () => {
    if (budget.maxMb === null) return;
    const used = () => [...budget.loaded].reduce((sum, l) => sum + l.memoryMb, 0);
    while (used() + memoryMb > budget.maxMb) {
      const idle = [...budget.loaded].filter((l) => !l.busy()).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!idle) {
        throw new EngineUnavailableError(`model "${id}" (${memoryMb} MB) does not fit max_loaded_mb=${budget.maxMb} beside the models answering now; retry shortly`);
      }
      await idle.unload();
    }
  };

  const load = async (): Promise<JudgmentEngine> => {
    await makeRoom();
    state = "loading";
    const fail = async (detail: string, engine?: JudgmentEngine): Promise<never> => {
      budget.loaded.delete(entry);
      state = "failed";
      failure = detail;
      await engine?.close().catch(() => undefined);
      throw new EngineUnavailableError(`the model "${id}" failed to load: ${failure}`);
    };
    let engine: JudgmentEngine;
    try {
      engine = options.create();
    } catch (error) {
      return fail(error instanceof Error ? error.message : String(error));
    }
    budget.loaded.add(entry);
    await Promise.resolve(engine.ready).catch(() => undefined);
    const status = await Promise.resolve(engine.status()).catch((error: unknown) => ({ state: "failed" as const, detail: String(error) }));
    if (status.state !== "ready") return fail(status.detail, engine);
    current = engine;
    state = "loaded";
    touch();
    return engine;
  };

  const acquire = async (signal?: AbortSignal): Promise<JudgmentEngine> => {
    if (current) return current;
    loading ??= load().finally(() => (loading = undefined));
    if (!signal) return loading;
    return Promise.race([
      loading,
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(new RequestAbortedError("the client closed the request before the model loaded"));
        signal.addEventListener("abort", () => reject(new RequestAbortedError("the client closed the request before the model loaded")), { once: true });
      }),
    ]);
  };

  /** Counts the call as in the model, so neither the idle timer nor another model's load unloads it. */
  const using = async <T>(call: () => Promise<T>): Promise<T> => {
    active++;
    try {
      return await call();
    } finally {
      active--;
      touch();
    }
  };

  if (options.eager) {
    loading = load().finally(() => (loading = undefined));
    loading.catch(() => undefined);
  }

  const notLoaded: EngineDescription = { kind: options.kind, backend: "not loaded" };
  const engine: JudgmentEngine = {
    modelId: id,
    get description() {
      return current?.description ?? notLoaded;
    },
    get templateFamily() {
      return current?.templateFamily;
    },
    get ready() {
      return (loading ?? Promise.resolve(current)).then(() => undefined, () => undefined);
    },
    status() {
      if (state === "loading") return { state: "loading", detail: `loading model "${id}"` };
      if (state === "failed" && !current) return { state: "failed", detail: failure };
      // Unloaded answers too: the next request loads it.
      return current ? current.status() : { state: "ready" };
    },
    prepare: (prompt, signal) =>
      using(async () => {
        const inner = await acquire(signal);
        const prepared = await inner.prepare(prompt, signal);
        owner.set(prepared, inner);
        return prepared;
      }),
    evaluate: (prepared, signal) =>
      using(async () => {
        const inner = owner.get(prepared);
        if (!inner || inner !== current) throw new EngineUnavailableError(`the model "${id}" was unloaded before this request was answered; nothing was charged, retry`);
        return inner.evaluate(prepared, signal);
      }),
    stats: () => current?.stats?.() as EngineStats,
    async close() {
      clearTimeout(timer);
      await loading?.catch(() => undefined);
      await unload();
    },
  };
  return { engine, state: () => state };
}
