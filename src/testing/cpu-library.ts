import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * The ggml CPU libraries a process has loaded (libggml-cpu-haswell.so, -icelake, -zen4, …), read
 * from /proc/<pid>/maps: node-llama-cpp and the llama-server of scripts/build-llama-server.sh pick
 * one per micro-architecture at run time, so a test of exact agreement between the two says which
 * ran. Empty where /proc is not there (not Linux) or the process has loaded none yet.
 */
export function loadedCpuLibraries(pid: number | "self" = "self"): string[] {
  let maps: string;
  try {
    maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  } catch {
    return [];
  }
  const files = maps.split("\n").map((line) => line.trim().split(/\s+/).slice(5).join(" "));
  return [...new Set(files.filter((file) => /\/libggml-cpu[^/]*\.so/.test(file)).map((file) => path.basename(file)))].sort();
}
