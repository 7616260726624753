import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/**
 * Service instances as separate OS processes: `judge serve` itself, or the hanging variant
 * (instance-process.ts), each with its own environment and port.
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
  return { ...Object.fromEntries(others), ...settings };
}

/** A port nothing listens on now, for an instance to take. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts the instance and resolves once it answers HTTP (the model may still be loading). */
export async function startInstance(settings: Record<string, string>, options: { hanging?: boolean; nodeArgs?: string[] } = {}): Promise<Instance> {
  const args = [...(options.nodeArgs ?? []), ...(options.hanging ? ["--import", "tsx", HANGING] : ["bin/judge.js", "serve"])];
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: cleanEnv({ ...settings, JUDGE_HOST: "127.0.0.1", JUDGE_PORT: String(port) }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (exited) throw new Error(`the instance exited before listening; stderr:\n${stderr}`);
    if (tries > 600) throw new Error(`the instance did not listen within 60 s; stderr:\n${stderr}`);
    const answered = await fetch(`${url}/health`).then(
      () => true,
      () => false,
    );
    if (answered) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    stderr: () => stderr,
    async kill() {
      child.kill("SIGKILL");
      await exit;
    },
    async stop() {
      child.kill("SIGTERM");
      await exit;
    },
  };
}

/** Resolves once the instance's /health is 200 (its model loaded, its database and Redis answering). */
export async function untilHealthy(instance: Instance, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    (await fetch(`${instance.url}/health`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error(`instance never became healthy:\n${instance.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
