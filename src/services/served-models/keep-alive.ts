import {
  EngineUnavailableError,
  RequestAbortedError,
  type EngineDescription,
  type EngineKind,
  type EngineStats,
  type JudgmentEngine,
  type PreparedJudgment,
} from "../../engine/types.js";
import { messageOf } from "../../error-message.js";

/**
 * An in-process model that loads on first use and unloads after `keepAliveMs` idle, or earlier
 * when loading another model would pass the memory bound (Ollama's keep_alive and its
 * max-loaded bound). A request's prepare and evaluate run on the same loaded instance; a model
 * is never unloaded while a call is in it. A preparation whose instance was unloaded before its
 * evaluation (evicted for another model in between) fails as unavailable: 502, nothing charged.
 * The pinned model (the default) loads at start and stays: requests without `model` and
 * /health rely on it, so neither idleness nor another model's load unloads it.
 */

export type KeepAliveState = "unloaded" | "loading" | "loaded" | "failed";

/**
 * The in-process models loaded at once, shared by every model of a registry. Each load decides
 * and reserves its room in one synchronous step (no await between the count and the
 * reservation), so loads starting together never count the same free memory.
 */
export interface LoadBudget {
  maxMb: number | null;
  /** Loaded models and those loading (counted from their load's start). */
  loaded: Set<Loaded>;
  /** Models unloaded but still closing: their memory is not free until they have closed. */
  closingMb: number;
}

export function loadBudget(maxMb: number | null): LoadBudget {
  return { maxMb, loaded: new Set(), closingMb: 0 };
}

interface Loaded {
  id: string;
  memoryMb: number;
  pinned: boolean;
  /** Order of last use across the budget's models (a sequence, not a clock: two uses in one millisecond still order). */
  lastUsed: number;
  /**
   * What it counts against the bound now: its memory, or while it waits for the models unloaded
   * for it to close, the larger of theirs and its own (they close before it loads).
   */
  countedMb(): number;
  /** Idle and loaded: neither pinned, loading, nor with a call in it. */
  evictable(): boolean;
  /** `forAnother`: until it has closed, its memory counts in the model it was unloaded for. */
  unload(forAnother?: boolean): Promise<void>;
}

export interface KeepAliveOptions {
  id: string;
  kind: EngineKind;
  create: () => JudgmentEngine;
  keepAliveMs: number | null;
  memoryMb: number;
  budget: LoadBudget;
  /** The default model: loaded at start and kept loaded (no keep-alive, never unloaded for another). */
  pinned: boolean;
}

let useSequence = 0;

export function createKeepAlive(options: KeepAliveOptions): { engine: JudgmentEngine; state(): KeepAliveState } {
  const { id, budget, memoryMb, pinned } = options;
  let state: KeepAliveState = "unloaded";
  let failure = "";
  let current: JudgmentEngine | undefined;
  let loading: Promise<JudgmentEngine> | undefined;
  let starting = false;
  let heldMb = memoryMb;
  let active = 0;
  let timer: NodeJS.Timeout | undefined;
  const owner = new WeakMap<PreparedJudgment, JudgmentEngine>();
  const entry: Loaded = {
    id,
    memoryMb,
    pinned,
    lastUsed: ++useSequence,
    countedMb: () => heldMb,
    evictable: () => !pinned && !starting && active === 0 && current !== undefined,
    unload: (forAnother) => unload(forAnother),
  };

  const unload = async (forAnother = false) => {
    clearTimeout(timer);
    const engine = current;
    current = undefined;
    if (state === "loaded") state = "unloaded";
    if (!budget.loaded.delete(entry) || !engine) return;
    await (forAnother ? engine.close().catch(() => undefined) : closeCounted(engine));
  };

  /** Its memory counts until it has closed. */
  const closeCounted = async (engine: JudgmentEngine) => {
    budget.closingMb += memoryMb;
    try {
      await engine.close().catch(() => undefined);
    } finally {
      budget.closingMb -= memoryMb;
    }
  };

  const touch = () => {
    entry.lastUsed = ++useSequence;
    if (options.keepAliveMs === null || pinned) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (active === 0 && current) void unload();
    }, options.keepAliveMs).unref();
  };

  /**
   * Counts this model in, first choosing the least recently used idle models to unload so it
   * fits; refuses if the pinned, busy, loading and closing ones leave no room. No await in here.
   */
  const reserve = (): Loaded[] => {
    const maxMb = budget.maxMb;
    if (maxMb === null) return (void budget.loaded.add(entry), []);
    const others = [...budget.loaded].filter((l) => l !== entry);
    const sum = (list: Loaded[], from = 0) => list.reduce((total, l) => total + l.countedMb(), from);
    const idle = others.filter((l) => l.evictable()).sort((a, b) => a.lastUsed - b.lastUsed);
    let used = sum(others, budget.closingMb + memoryMb);
    if (used - sum(idle) > maxMb) {
      const kept = others.filter((l) => l.pinned);
      if (sum(kept, memoryMb) > maxMb) {
        const names = kept.map((l) => `"${l.id}" (${l.memoryMb} MB)`).join(", ");
        const beside = kept.length > 0 ? ` beside the default model ${names}, which stays loaded` : "";
        // Not a moment's refusal: the model is failed (in /health too) until the bound changes.
        failure = `model "${id}" (${memoryMb} MB) can never fit max_loaded_mb=${maxMb}${beside}; raise max_loaded_mb`;
        state = "failed";
        throw new EngineUnavailableError(failure);
      }
      const refusal = `model "${id}" (${memoryMb} MB) does not fit max_loaded_mb=${maxMb} beside the models loading or answering now; retry shortly`;
      // The default is what /health answers for: not loaded and not loadable now is a failure there.
      if (pinned) [state, failure] = ["failed", refusal];
      throw new EngineUnavailableError(refusal);
    }
    const victims: Loaded[] = [];
    for (const l of idle) {
      if (used <= maxMb) break;
      victims.push(l);
      used -= l.countedMb();
    }
    heldMb = Math.max(memoryMb, sum(victims));
    budget.loaded.add(entry);
    return victims;
  };

  const load = async (): Promise<JudgmentEngine> => {
    const victims = reserve();
    starting = true;
    try {
      return await loadReserved(victims);
    } finally {
      starting = false;
    }
  };

  const loadReserved = async (victims: Loaded[]): Promise<JudgmentEngine> => {
    // Their memory stays counted (in heldMb) until they have closed, so no other load takes it meanwhile.
    await Promise.all(victims.map((l) => l.unload(true)));
    heldMb = memoryMb;
    state = "loading";
    const fail = async (detail: string, engine?: JudgmentEngine): Promise<never> => {
      budget.loaded.delete(entry);
      state = "failed";
      failure = detail;
      if (engine) await closeCounted(engine);
      throw new EngineUnavailableError(`the model "${id}" failed to load: ${failure}`);
    };
    let engine: JudgmentEngine;
    try {
      engine = options.create();
    } catch (error) {
      return fail(messageOf(error));
    }
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

  if (pinned) {
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
      return (loading ?? Promise.resolve(current)).then(
        () => undefined,
        () => undefined,
      );
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
        if (!inner || inner !== current)
          throw new EngineUnavailableError(`the model "${id}" was unloaded before this request was answered; nothing was charged, retry`);
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
