import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "./instances.js";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A real llama.cpp llama-server process for tests, built from the llama.cpp source inside
 * node-llama-cpp's package and run on node-llama-cpp's own libraries
 * (scripts/build-llama-server.sh), serving a GGUF on a free port.
 */
export interface LlamaServerProcess {
  url: string;
  port: number;
  /** The server's process id (its loaded CPU library: testing/cpu-library.ts). */
  pid: number;
  /** The arguments it was started with, for assertion messages. */
  args: string[];
  /** Everything it printed (stdout and stderr), for assertion messages. */
  output(): string;
  /** SIGKILL: the server vanishes mid-whatever, as a crash or an OOM kill would. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after a few seconds. */
  stop(): Promise<void>;
}

export interface LlamaServerOptions {
  model: string;
  slots?: number;
  /** Total context (`-c`); each slot gets contextSize / slots. */
  contextSize?: number;
  threads?: number;
  /** "off" for exactness; the others only to show the engine refuses them. */
  flashAttention?: "on" | "off" | "auto";
  extraArgs?: string[];
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** LLAMA_SERVER_BIN, or the build script's binary (instant once built; builds it otherwise, minutes). */
export function llamaServerBinary(): string {
  if (process.env.LLAMA_SERVER_BIN) return process.env.LLAMA_SERVER_BIN;
  const built = spawnSync(path.join(ROOT, "scripts/build-llama-server.sh"), { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const binary = built.stdout?.trim().split("\n").pop();
  if (built.status !== 0 || !binary) throw new Error(`scripts/build-llama-server.sh failed (exit ${built.status})`);
  return binary;
}

export async function startLlamaServer(options: LlamaServerOptions): Promise<LlamaServerProcess> {
  const port = await freePort();
  const slots = options.slots ?? 2;
  const args = [
    "-m",
    options.model,
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "-np",
    String(slots),
    "-c",
    String(options.contextSize ?? 2048 * slots),
    "--threads",
    String(options.threads ?? 1),
    "-fa",
    options.flashAttention ?? "off",
    "--no-warmup",
    // Strict exactness needs it (the RAM prompt cache restores prompts evaluated in other shapes).
    "--cache-ram",
    "0",
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(llamaServerBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A test process that dies must not leave servers behind.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const url = `http://127.0.0.1:${port}`;
  const end = async (signal: NodeJS.Signals) => {
    process.off("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const forced = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(forced);
  };
  const server: LlamaServerProcess = {
    url,
    port,
    pid: child.pid!,
    args,
    output: () => output,
    kill: () => end("SIGKILL"),
    stop: () => end("SIGTERM"),
  };
  try {
    await waitHealthy(url, child, () => output);
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

async function waitHealthy(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`llama-server exited (${child.exitCode ?? child.signalCode}) before it was healthy:\n${output()}`);
    }
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`llama-server at ${url} was not healthy within 60 s:\n${output()}`);
}
