import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../engine/types.js";

/**
 * Fault injection only: a delegating engine that can hold `evaluate` calls at a gate the test
 * controls, then hands them to the real engine unchanged. Everything else is the real engine's.
 */
export interface StallingEngine extends JudgmentEngine {
  /** From now on every `evaluate` call waits at a gate until `release()`. */
  stall(): Stall;
  /** Opens every gate ever set: for clean-up after a failed test. */
  releaseAll(): void;
  /** How many `evaluate` calls reached this engine. */
  readonly evaluations: number;
}

export interface Stall {
  /** Resolves once the first call is waiting at the gate (the engine is busy). */
  readonly entered: Promise<void>;
  /** How many calls are waiting at the gate. */
  readonly waiting: number;
  /** Opens the gate: waiting calls go on to the real engine; later calls are not held. */
  release(): void;
}

export function createStallingEngine(inner: JudgmentEngine): StallingEngine {
  let gate: { opened: Promise<void>; enter(): void; leave(): void } | undefined;
  let evaluations = 0;
  const releases = new Set<() => void>();
  return {
    get modelId() {
      return inner.modelId;
    },
    get description() {
      return inner.description;
    },
    status: () => inner.status(),
    prepare: (prompt, signal) => inner.prepare(prompt, signal),
    async evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult> {
      evaluations++;
      const current = gate;
      if (current) {
        current.enter();
        try {
          await current.opened;
        } finally {
          current.leave();
        }
      }
      return inner.evaluate(prepared, signal);
    },
    close: () => inner.close(),
    releaseAll() {
      for (const release of [...releases]) release();
    },
    get evaluations() {
      return evaluations;
    },
    stall(): Stall {
      let open!: () => void;
      let markEntered!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      const entered = new Promise<void>((resolve) => (markEntered = resolve));
      let waiting = 0;
      const thisGate = {
        opened,
        enter: () => {
          waiting++;
          markEntered();
        },
        leave: () => {
          waiting--;
        },
      };
      gate = thisGate;
      const release = () => {
        if (gate === thisGate) gate = undefined;
        releases.delete(release);
        open();
      };
      releases.add(release);
      return {
        entered,
        get waiting() {
          return waiting;
        },
        release,
      };
    },
  };
}
