import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Service instances as separate OS processes: `judge serve` itself, or the hanging variant
 * (instance-process.ts), each with its own environment, found by the URL it logs when listening.
 */
export interface Instance {
  url: string;
  pid: number;
  stderr(): string;
  /** SIGKILL: no clean-up runs, as when a machine dies. */
  kill(): Promise<void>;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const HANGING = fileURLToPath(new URL("./instance-process.ts", import.meta.url));

/** The environment without any JUDGE_* setting of the machine running the tests. */
export function cleanEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const others = Object.entries(process.env).filter(([name]) => !name.startsWith("JUDGE_"));
  return { ...Object.fromEntries(others), JUDGE_PORT: "0", ...settings };
}

export async function startInstance(settings: Record<string, string>, options: { hanging?: boolean } = {}): Promise<Instance> {
  const args = options.hanging ? ["--import", "tsx", HANGING] : ["bin/judge.js", "serve"];
  const child: ChildProcess = spawn(process.execPath, args, { cwd: repoRoot, env: cleanEnv(settings), stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 60 s; stderr:\n${stderr}`)), 60_000);
    const look = () => {
      const line = stderr.split("\n").find((l) => l.includes('"message":"listening"'));
      if (line) {
        clearTimeout(timer);
        child.stderr!.off("data", look);
        resolve(JSON.parse(line).url as string);
      }
    };
    child.stderr!.on("data", look);
    void exited.then(() => reject(new Error(`the instance exited before listening; stderr:\n${stderr}`)));
  });
  return {
    url,
    pid: child.pid!,
    stderr: () => stderr,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
